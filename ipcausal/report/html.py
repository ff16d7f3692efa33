"""A Report (or several case Sections) as one self-contained HTML page (figures as data URIs)."""

from __future__ import annotations

from typing import Any

from ipcausal.study.text import PB_NOTE, human_source_line, human_table
from ipcausal.report._common import (PAGE_CSS, cue_tables, esc, figures, group_rows, h0, html_table, pb_rows,
                                     sections_of, settings_rows, trend_table)
from ipcausal.report.examples import EXAMPLES_CSS, examples_html
from ipcausal.report.explain import count_notes, direction_text, plain_lines

__all__ = ["format_html"]

_CSS = PAGE_CSS


_h, _table = esc, html_table


def _missing(report: Any) -> str:
    from ipcausal.report.plots import missing_glyphs

    names = {g.background_a for g in report.groups} | {g.background_b for g in report.groups}
    return missing_glyphs("".join(sorted(names)))


def format_html(sections: Any, *, title: str = "ipcausal report", notes: tuple[str, ...] = ()) -> str:
    """One or more :class:`~ipcausal.report.Section` s (or a bare Report) as one self-contained HTML page.

    ``notes``: paragraphs shown under the title (the demo says there what it is and is not).

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.report import Section, format_html
    >>> ps = ipcausal.PairSet.from_records(
    ...     {"pair_id": k, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q",
    ...      "similarity": 0.5 + (k % 2) / 2} for k in range(12))
    >>> page = format_html(Section("demo", ipcausal.test(ps)))
    >>> page.startswith("<!DOCTYPE html>"), "data:image/png;base64," in page
    (True, True)
    """
    if not isinstance(title, str):
        raise TypeError(f"`title` must be text, got {type(title).__name__}")
    if isinstance(notes, str) or not all(isinstance(n, str) for n in notes):
        raise TypeError("`notes` must be a sequence of text paragraphs")
    secs = sections_of(sections)
    parts = [f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_h(title)}</title>",
             f"<style>{_CSS}\n{EXAMPLES_CSS}</style></head><body><h1>{_h(title)}</h1>"]
    parts += [f"<p class='note'>{_h(n)}</p>" for n in notes]
    parts.append("<nav>" + "".join(f"<a href='#s{i}'>{_h(s.title)}</a>" for i, s in enumerate(secs)) + "</nav>")
    for i, s in enumerate(secs):
        r = s.report
        parts.append(f"<section id='s{i}'><h2>{_h(s.title)}</h2>")
        parts.append("<p><b>In plain words</b></p><ul class='plain'>"
                     + "".join(f"<li>{_h(line)}</li>" for line in plain_lines(r)) + "</ul>")
        parts.append(f"<p>{_h(h0(r))}<br><b>Direction</b>: {_h(direction_text(r))}</p><ul>")
        for model, v in r.ip_detected_by_model().items():
            cls, word = ("yes", "detected") if v else ("no", "not detected")
            tail = "" if v else f" <span class='count-note'>(no evidence at α = {r.alpha:g}; not a proof that there is none)</span>"
            parts.append(f"<li>{_h(model)}: implicit personalization <span class='{cls} verdict'>{word}</span>{tail}</li>")
        parts.append("</ul>" + _table(*group_rows(r)))
        parts.append(examples_html(r))
        header, rows = trend_table(r)
        if rows:
            parts.append("<h3>Trend across the ordered levels</h3>" + _table(header, rows))
        for model, header, rows, cue_notes in cue_tables(r):
            parts.append(f"<h3>Per cue ({_h(model)})</h3>" + _table(header, rows))
            parts += [f"<p class='count-note'>{_h(n)}</p>" for n in cue_notes]
        header, rows, notes = human_table(r)
        if rows:
            parts.append("<h3>On the human scale (PPI++ with the people's scores)</h3>" + _table(header, rows))
            parts += [f"<p class='count-note'>{_h(n)}</p>" for n in notes + [human_source_line(r)]]
        if r.pb:
            parts.append("<h3>Personalization bias (PB)</h3>" + _table(*pb_rows(r)) + f"<p class='count-note'>{_h(PB_NOTE)}.</p>")
        if s.mitigation is not None:
            from ipcausal.report.mitigation import mitigation_section_html

            parts.append(mitigation_section_html(s.mitigation))
        if s.counts:
            parts.append("<h3>Counts</h3>" + _table(list(s.counts), [[str(v) for v in s.counts.values()]]))
            parts += [f"<p class='count-note'>{_h(n)}</p>" for n in count_notes(s.counts)]
        parts.append("<h3>Model and settings</h3>" + _table(["setting", "value"], [list(kv) for kv in settings_rows(s)]))
        for w in r.warnings:
            parts.append(f"<p class='warning'>warning: {_h(w)}</p>")
        figs = figures(s)
        for name, uri in figs:
            parts.append(f"<figure><img alt='{_h(name)}' src='{uri}'><figcaption>{_h(name)}</figcaption></figure>")
        gaps = _missing(r) if figs else ""
        if gaps:
            parts.append(f"<p class='count-note'>The figures draw {_h(' '.join(gaps))} as boxes: no installed font "
                         "has these characters (on Debian/Ubuntu, <code>apt install fonts-noto-cjk fonts-noto-color-emoji"
                         "</code> adds them). The tables above show the names as written.</p>")
        parts.append("</section>")
    parts.append("</body></html>")
    return "\n".join(parts) + "\n"
