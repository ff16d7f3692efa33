"""A Report (or several case Sections) as Markdown."""

from __future__ import annotations

from typing import Any

from ipcausal.study.text import PB_NOTE, human_source_line, human_table
from ipcausal.report._common import (cue_tables, figures, group_rows, h0, pb_rows, sections_of, settings_rows,
                                     trend_table)
from ipcausal.report.examples import examples_markdown
from ipcausal.report.explain import count_notes, direction_text, plain_lines

__all__ = ["format_markdown", "md_table"]


def md_table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table (``|`` in cells escaped)."""
    esc = [[str(c).replace("|", "\\|") for c in r] for r in rows]
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)] + ["| " + " | ".join(r) + " |" for r in esc]


def format_markdown(sections: Any, *, title: str = "ipcausal report", plots: bool = False,
                    notes: tuple[str, ...] = ()) -> str:
    """One or more :class:`~ipcausal.report.Section` s (or a bare Report) as Markdown.

    ``plots=True`` embeds the figures as PNG data URIs (fine for local viewers; some hosts
    such as GitHub do not show data-URI images).  ``notes``: paragraphs under the title.

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.report import Section, format_markdown
    >>> ps = ipcausal.PairSet.from_records(
    ...     {"pair_id": k, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q",
    ...      "score_i": 1, "score_j": k % 3} for k in range(12))
    >>> md = format_markdown(Section("demo", ipcausal.test(ps)))
    >>> md.splitlines()[0]
    '# ipcausal report'
    """
    if not isinstance(title, str):
        raise TypeError(f"`title` must be text, got {type(title).__name__}")
    if isinstance(notes, str) or not all(isinstance(n, str) for n in notes):
        raise TypeError("`notes` must be a sequence of text paragraphs")
    secs = sections_of(sections)
    out = [f"# {title}", ""]
    for n in notes:
        out += [f"> {n}", ""]
    for s in secs:
        r = s.report
        out += [f"## {s.title}", ""] + [f"- {line}" for line in plain_lines(r)] + [""]
        out += [f"{h0(r)}  ", f"*Direction*: {direction_text(r)}", ""]
        for model, v in r.ip_detected_by_model().items():
            out.append(f"- **{model}**: implicit personalization {'**detected**' if v else 'not detected'}")
        out.append("")
        out += md_table(*group_rows(r))
        out.append("")
        out += examples_markdown(r)
        header, rows = trend_table(r)
        if rows:
            out += ["**Trend across the ordered levels**", ""] + md_table(header, rows) + [""]
        for model, header, rows, cue_notes in cue_tables(r):
            out += [f"**Per cue ({model})**", ""] + md_table(header, rows) + [""] + [f"- {n}" for n in cue_notes] + [""]
        header, rows, notes = human_table(r)
        if rows:
            out += ["**On the human scale (PPI++ with the people's scores)**", ""] + md_table(header, rows) + [""]
            out += [f"- {n}" for n in notes + [human_source_line(r)]] + [""]
        if r.pb:
            out += ["**Personalization bias (PB)**", ""] + md_table(*pb_rows(r)) + ["", f"{PB_NOTE}.", ""]
        if s.mitigation is not None:
            from ipcausal.report.mitigation import mitigation_section_markdown

            out += mitigation_section_markdown(s.mitigation) + [""]
        if s.counts:
            out += ["**Counts**", ""] + md_table([k for k in s.counts], [[str(v) for v in s.counts.values()]]) + [""]
            out += [f"- {n}" for n in count_notes(s.counts)] + ([""] if count_notes(s.counts) else [])
        out += ["**Settings**", ""] + [f"- {k}: {v}" for k, v in settings_rows(s)] + [""]
        for w in r.warnings:
            out.append(f"> warning: {w}")
        if plots:
            for name, uri in figures(s):
                out += [f"![{name}]({uri})", ""]
    return "\n".join(out).rstrip() + "\n"
