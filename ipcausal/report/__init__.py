"""Rendering a :class:`~ipcausal.study.results.Report`: Markdown, self-contained HTML, plain text.

Rendering reads a Report (from :func:`ipcausal.test` or :meth:`Report.read`) and nothing else:
it never tests again, never reads the pairs and never calls a model.

* :class:`Section` — one case: its Report, the counts (requested / completed / failed /
  unparseable) and the settings (model, generation, scorer, test).
* :func:`format_markdown` and :func:`format_html` render one or more sections; the HTML embeds
  matplotlib figures as PNG data URIs (no external file, no network): the Δ or similarity
  distribution, the null distribution of the route that produced each p with the observed
  statistic, the background × background matrix of adjusted p-values, and (interval outcomes)
  the mean per background with its CI and PB.
* :func:`write_report` picks the format from the file suffix (``.html``, ``.md``, ``.json``, ``.txt``);
  :func:`read_sections` reads back what it wrote as JSON (or a bare :meth:`Report.write` file).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ipcausal._jsonio import write_text
from ipcausal.report._common import Section, sections_of
from ipcausal.report.explain import DEMO_NEXT, DEMO_NOTE, count_notes, direction_text, plain_lines
from ipcausal.report.html import format_html
from ipcausal.report.markdown import format_markdown
from ipcausal.study.results import Report, load_json
from ipcausal.study.text import format_p, format_text

__all__ = ["Section", "format_text", "format_p", "format_markdown", "format_html", "write_report", "read_sections",
           "write_case_reports", "plain_lines", "count_notes", "direction_text", "DEMO_NOTE", "DEMO_NEXT"]


def _section_dict(s: Section) -> dict[str, Any]:  # the mitigation stays in its own mitigation.json
    return s.report.payload(title=s.title, counts=dict(s.counts), settings=dict(s.settings))


def write_report(sections: Any, path: str | os.PathLike[str], *, title: str = "ipcausal report",
                 notes: tuple[str, ...] = ()) -> Path:
    """Write the report in the format named by the suffix: ``.html``, ``.md``, ``.json`` or ``.txt``.

    ``.json`` keeps each section's Report with its schema header, title, counts and settings, so
    :func:`read_sections` (and ``ipcausal report FILE.json``) render it later without testing again.
    ``notes``: paragraphs under the title (HTML and Markdown).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError("`path` must be a file path")
    p = Path(path)
    secs = sections_of(sections)
    suffix = p.suffix.lower()
    if suffix in (".html", ".htm"):
        text = format_html(secs, title=title, notes=tuple(notes))
    elif suffix in (".md", ".markdown"):
        text = format_markdown(secs, title=title, notes=tuple(notes))
    elif suffix == ".json":
        payload = [_section_dict(s) for s in secs]
        text = json.dumps(payload[0] if len(payload) == 1 else payload, indent=1, default=str, ensure_ascii=False)
    elif suffix == ".txt":
        text = "\n".join(f"== {s.title} ==\n{format_text(s.report)}" for s in secs)
    else:
        raise ValueError(f"`path` must end in .html, .md, .json or .txt, got {p.name!r}")
    return write_text(p, text)


def read_sections(path: str | os.PathLike[str]) -> list[Section]:
    """The Sections of a ``.json`` file written by :func:`write_report` or :meth:`Report.write`."""
    payload, p = load_json(path)
    items = payload if isinstance(payload, list) else [payload]
    mitigation = _beside(p)
    out = []
    for item in items:
        if not isinstance(item, dict) or "report" not in item:
            raise ValueError(f"{p}: not an ipcausal report (no `report` entry)")
        report = Report.from_dict(item, source=str(p))
        out.append(Section(str(item.get("title") or p.stem), report, item.get("counts") or {},
                           item.get("settings") or {}, mitigation=mitigation if len(items) == 1 else None))
    return out


def _beside(path: Path) -> dict[str, Any] | None:
    """The ``mitigation.json`` beside a case's ``report.json`` (``ipcausal case --mitigation``), else ``None``."""
    from ipcausal.report.mitigation import is_mitigation

    other = Path(path).with_name("mitigation.json")
    if Path(path).name != "report.json" or not other.is_file():
        return None
    try:
        d = json.loads(other.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    return d if is_mitigation(d) else None


def write_case_reports(results: Any, out: str | os.PathLike[str] | None = None, *,
                       title: str = "ipcausal report", notes: tuple[str, ...] = ()) -> dict[str, Path]:
    """Render case results (:func:`ipcausal.run_case` / ``run_demo``) as Markdown and HTML.

    Each result with ``files["report.json"]`` gets ``report.md`` and ``report.html`` beside it
    (with the table of a ``mitigation.json`` in the same folder, from ``ipcausal case --mitigation``);
    with ``out`` and several results, a combined ``out/report.html`` and ``out/report.md`` too.
    Returns the files written by name (``"<case>/report.html"`` …, ``"report.html"``).
    """
    items = list(results) if isinstance(results, (list, tuple)) else [results]
    if not items:
        raise ValueError("`results` is empty")
    written: dict[str, Path] = {}
    sections = []
    for r in items:
        where = r.files.get("report.json") if getattr(r, "files", None) else None
        sec = Section(r.title, r.report, r.counts.to_dict(), r.settings,
                      mitigation=_beside(Path(where)) if where else None)
        sections.append(sec)
        if where:
            folder = Path(where).parent
            for suffix in ("md", "html"):
                p = write_report(sec, folder / f"report.{suffix}", title=f"ipcausal — {r.case}", notes=notes)
                r.files[f"report.{suffix}"] = str(p)
                written[f"{r.case}/report.{suffix}"] = p
    if out is not None and len(sections) > 1:
        for suffix in ("html", "md"):
            written[f"report.{suffix}"] = write_report(sections, Path(out) / f"report.{suffix}", title=title,
                                                       notes=notes)
    return written
