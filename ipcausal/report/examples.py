"""Example pairs on a page: the two prompts, the two responses and their scores, as the Report carries them.

The Report's ``examples`` (:mod:`ipcausal.study.examples` chose them by a stated rule) are shown
per group, each with why it was chosen; nothing here reads the pairs.  The same rendering serves
the case and test reports (:func:`examples_html`, :func:`examples_markdown`) and, from plain
dicts of the same fields, the bench cells and the mitigation page (:func:`example_cards_html`,
:func:`example_cards_markdown`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ipcausal.report._common import esc
from ipcausal.study.results import UNKNOWN_MODEL

__all__ = ["examples_html", "examples_markdown", "example_cards_html", "example_cards_markdown", "RULE_TEXT",
           "EXAMPLES_CSS"]

#: The rule in words (the defaults of ``ipcausal.study.examples.EXAMPLE_RULE``).
RULE_TEXT = ("per background pair, the 2 pairs with the largest |Δ| (similarity outcomes: the lowest similarity, "
             "the two answers that differ most) and 2 more drawn at random (seed 0) from the rest; texts cut at "
             "600 characters")

EXAMPLES_CSS = """.ex{border:1px solid #ccc;border-radius:4px;margin:.8em 0;padding:.3em .8em;background:#fafafa}
.ex h4{margin:.3em 0;font-size:.95em}.ex .why{color:#555;font-weight:normal}
.ex table{width:100%;table-layout:fixed}.ex td{vertical-align:top;white-space:pre-wrap;word-wrap:break-word}
.ex td.side{width:9em}.ex td.score{width:5em;text-align:right}"""


_h = esc


def _fields(e: Any) -> dict[str, Any]:
    return dict(e) if isinstance(e, Mapping) else {k: getattr(e, k) for k in e.__dataclass_fields__}


def _num(v: Any) -> str:
    return "—" if v is None else f"{float(v):.4g}"


def _measure(e: Mapping[str, Any]) -> str:
    if e.get("delta") is not None:
        return f"Δ = score({e['background_b']}) − score({e['background_a']}) = {float(e['delta']):+.4g}"
    if e.get("similarity") is not None:
        return f"similarity of the two responses = {float(e['similarity']):.3g} (1 = same)"
    return ""


def example_cards_html(examples: Iterable[Any], *, heading: str = "h4") -> str:
    """Each example as a small card: pair id and rule, then per side background, prompt, response, score."""
    out = []
    for raw in examples:
        e = _fields(raw)
        label = e.get("label")
        rows = []
        for side in ("a", "b"):
            rows.append(f"<tr><td class='side'>{_h(e['background_' + side])}</td><td>{_h(e['prompt_' + side])}</td>"
                        f"<td>{_h(e.get('response_' + side) or '—')}</td>"
                        f"<td class='score'>{_num(e.get('score_' + side))}</td></tr>")
        title = f"{_h(label) + ' — ' if label else ''}pair {_h(e['pair_id'])}"
        out.append(f"<div class='ex'><{heading}>{title} <span class='why'>({_h(e['rule'])})</span></{heading}>"
                   "<table><thead><tr><th>background</th><th>prompt</th><th>response</th><th>score</th></tr></thead>"
                   f"<tbody>{''.join(rows)}</tbody></table><p class='count-note'>{_h(_measure(e))}</p></div>")
    return "".join(out)


def example_cards_markdown(examples: Iterable[Any]) -> list[str]:
    """Each example as a small Markdown table (newlines in texts shown as ⏎)."""
    out: list[str] = []
    for raw in examples:
        e = _fields(raw)
        label = e.get("label")
        out += [f"*{label + ' — ' if label else ''}pair {e['pair_id']}* ({e['rule']})", "",
                "| background | prompt | response | score |", "|---|---|---|---|"]
        for side in ("a", "b"):
            cells = [str(e["background_" + side]), str(e["prompt_" + side]), str(e.get("response_" + side) or "—"),
                     _num(e.get("score_" + side))]
            out.append("| " + " | ".join(c.replace("|", "\\|").replace("\n", " ⏎ ") for c in cells) + " |")
        out += ["", _measure(e), ""]
    return out


def _by_group(report: Any) -> dict[tuple[str, str], list[Any]]:
    out: dict[tuple[str, str], list[Any]] = {}
    for e in getattr(report, "examples", ()):
        out.setdefault((e.model, e.group), []).append(e)
    return out


def examples_html(report: Any) -> str:
    """The Report's example pairs, per group, with the rule that chose them ("" when it has none)."""
    groups = _by_group(report)
    if not groups:
        return ""
    parts = [f"<h3>Example pairs</h3><p class='count-note'>Chosen by a fixed rule: {_h(RULE_TEXT)}.</p>"]
    for (model, group), items in groups.items():
        who = f" ({model})" if model != UNKNOWN_MODEL else ""
        parts.append(f"<h4>{_h(group)}{_h(who)}</h4>" + example_cards_html(items, heading="h5"))
    return "".join(parts)


def examples_markdown(report: Any) -> list[str]:
    """The Report's example pairs as Markdown lines (empty when it has none)."""
    groups = _by_group(report)
    if not groups:
        return []
    out = ["**Example pairs**", "", f"Chosen by a fixed rule: {RULE_TEXT}.", ""]
    for (model, group), items in groups.items():
        who = f" ({model})" if model != UNKNOWN_MODEL else ""
        out += [f"*{group}{who}*", ""] + example_cards_markdown(items)
    return out
