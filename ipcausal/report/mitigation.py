"""A mitigation comparison on a page: ``mitigation.json`` (``ipcausal case --mitigation``) as HTML or Markdown.

The page is drawn from the file alone (what :meth:`ipcausal.study.mitigation.CaseMitigation.to_dict`
wrote): per background pair the effect without and with the mitigation, the change with its
interval and its p — *adjusted* over the background pairs, and labelled so —, whether the
mitigation removed the effect (by the stated rule; a non-rejection is never "removed"), the
pairs the rewrite check left out, and example pairs without and with the mitigation where the
file carries them.  :func:`mitigation_rows` is also the table a case report shows under its own
results.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ipcausal.report._common import PAGE_CSS, esc, html_table
from ipcausal.report.examples import EXAMPLES_CSS, example_cards_html, example_cards_markdown

__all__ = ["is_mitigation", "mitigation_rows", "mitigation_html", "mitigation_markdown",
           "mitigation_section_html", "mitigation_section_markdown"]

_KEYS = {"mitigation", "groups", "removal_rule", "change_test"}


def is_mitigation(d: Any) -> bool:
    """Whether ``d`` (a parsed JSON value) is a ``mitigation.json`` of this release (schema
    ``ipcausal.mitigation/1``) or of ``ipcausal case --mitigation`` before it (the one reader,
    :func:`ipcausal.study.mitigation.read_mitigation`, also moves older shapes into this one)."""
    return isinstance(d, Mapping) and (d.get("schema") == "ipcausal.mitigation/1" or _KEYS <= set(d))


def _f(v: Any, spec: str = ".4g") -> str:
    return "—" if v is None else format(float(v), spec)


def mitigation_rows(d: Mapping[str, Any]) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the per-background-pair table (the p of the change is labelled adjusted)."""
    directed = d.get("outcome") != "similarity"
    eff = "mean Δ" if directed else "median similarity"
    header = ["background pair", "pairs", f"{eff} without", f"{eff} with", "change (with − without)", "95% CI",
              "p of the change (adjusted over the background pairs)", "removed?"]
    rows = []
    for g in d.get("groups", ()):
        rows.append([str(g["group"]), str(g["n"]), _f(g.get("effect_without")), _f(g.get("effect_with")),
                     _f(g.get("change"), "+.4g"), f"[{_f(g.get('change_ci_low'))}, {_f(g.get('change_ci_high'))}]",
                     _f(g.get("change_pvalue")), str(g.get("removed"))])
    return header, rows


def _first_upper(text: str) -> str:
    return text[:1].upper() + text[1:]


def _notes(d: Mapping[str, Any]) -> list[str]:
    out = [f"H0 of the change: {d.get('null_hypothesis')}.", f"Test: {d.get('change_test')}.",
           _first_upper(str(d.get("removal_rule", ""))) + ".",
           f"{d.get('n_compared')} of {d.get('n_pairs')} pairs compared; {d.get('n_failed_check')} left out of both "
           "runs by the rewrite check (checks.csv says why).",
           "A change not shown, or an effect not removed, is not evidence that the mitigation does nothing."]
    if d.get("instruction"):
        out.insert(0, f"Instruction: {d['instruction']}")
    return out


_h, _table = esc, html_table


def mitigation_section_html(d: Mapping[str, Any], *, heading: str = "h3") -> str:
    """The mitigation's table, notes, dropped pairs and example pairs, as an HTML fragment."""
    parts = [f"<{heading}>Mitigation '{_h(d.get('mitigation'))}'</{heading}>", _table(*mitigation_rows(d))]
    parts += [f"<p class='count-note'>{_h(n)}</p>" for n in _notes(d)]
    failed = d.get("failed_pairs") or []
    if failed:
        parts.append("<details><summary>pairs left out by the rewrite check</summary>"
                     + _table(["pair", "why"], [[str(f["pair_id"]), str(f["reason"])] for f in failed])
                     + "</details>")
    examples = d.get("examples") or []
    if examples:
        parts.append(f"<p><b>Example pairs without and with the mitigation</b> <span class='count-note'>"
                     f"({_h(d.get('example_rule', ''))})</span></p>" + example_cards_html(examples, heading="h5"))
    return "".join(parts)


def mitigation_section_markdown(d: Mapping[str, Any]) -> list[str]:
    """The same as Markdown lines."""
    header, rows = mitigation_rows(d)
    out = [f"**Mitigation '{d.get('mitigation')}'**", "", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in rows]
    out += [""] + [f"- {n}" for n in _notes(d)] + [""]
    for f in d.get("failed_pairs") or []:
        out.append(f"- left out: {f['pair_id']} ({f['reason']})")
    examples = d.get("examples") or []
    if examples:
        out += ["", f"*Example pairs without and with the mitigation* ({d.get('example_rule', '')})", ""]
        out += example_cards_markdown(examples)
    return out


def mitigation_html(d: Mapping[str, Any], *, title: str | None = None) -> str:
    """A ``mitigation.json`` as one self-contained HTML page.

    Examples
    --------
    >>> d = {"case": "echo", "title": "Echo chamber", "mitigation": "strip", "outcome": "interval",
    ...      "null_hypothesis": "H0", "change_test": "sign-flip", "removal_rule": "removal not assessed",
    ...      "n_pairs": 2, "n_compared": 2, "n_failed_check": 0,
    ...      "groups": [{"group": "a vs b", "n": 2, "effect_without": 1.0, "effect_with": 0.0, "change": -1.0,
    ...                  "change_ci_low": -2.0, "change_ci_high": 0.0, "change_pvalue": 0.5,
    ...                  "removed": "not assessed"}]}
    >>> page = mitigation_html(d)
    >>> "p of the change (adjusted over the background pairs)" in page, page.startswith("<!DOCTYPE html>")
    (True, True)
    """
    title = title or f"ipcausal — mitigation '{d.get('mitigation')}' on {d.get('title') or d.get('case')}"
    return (f"<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'><title>{_h(title)}</title>"
            f"<style>{PAGE_CSS}\n{EXAMPLES_CSS}</style></head><body><h1>{_h(title)}</h1>"
            f"<p>Case <b>{_h(d.get('case'))}</b>, {_h(d.get('outcome'))} outcome, α = {_h(d.get('alpha'))}.</p>"
            + mitigation_section_html(d, heading="h2") + "</body></html>\n")


def mitigation_markdown(d: Mapping[str, Any], *, title: str | None = None) -> str:
    """A ``mitigation.json`` as Markdown."""
    title = title or f"ipcausal — mitigation '{d.get('mitigation')}' on {d.get('title') or d.get('case')}"
    lines = [f"# {title}", "", f"Case **{d.get('case')}**, {d.get('outcome')} outcome, α = {d.get('alpha')}.", ""]
    return "\n".join(lines + mitigation_section_markdown(d)).rstrip() + "\n"
