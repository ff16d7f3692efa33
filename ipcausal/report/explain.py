"""Plain-language lines about a Report: one sentence per background pair, the counts explained.

Every sentence is computed from the Report (and the section's counts) alone.  A rejection is
"evidence of implicit personalization"; a non-rejection is only "no evidence of" it at the
level α — never "no IP".
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ipcausal.study.text import clean_zero, dz_text, format_p, interval_kind, mde_text, named_direction
from ipcausal.outcomes import is_similarity

__all__ = ["plain_lines", "count_notes", "direction_text", "report_text", "DEMO_NOTE", "DEMO_NEXT"]

#: What the demo is (printed in the terminal and at the top of the demo's report.html).
DEMO_NOTE = (
    "This demo runs SmolLM2-135M, a 135-million-parameter model, on small embedded question sets. "
    "It checks that the whole pipeline works (pairs -> model -> scores -> tests -> report) on this machine; "
    "its verdicts are not findings about real assistants, whose size and training differ by orders of magnitude."
)
#: How to point the same command at a real model.
DEMO_NEXT = (
    "To test a real model, run the same case against it, e.g. "
    "`ipcausal case culture --backend openai --model gpt-4o-mini -o out/culture` "
    "(OPENAI_API_KEY set), or a local server: "
    "`ipcausal case echo --backend openai --base-url http://127.0.0.1:8080/v1 --model NAME -o out/echo`. "
    "See docs/backends.md."
)

_COUNT_NOTES = {
    "unparseable": "answers the scorer could not read (e.g. no option number, no rating)",
    "excluded": "pairs left out of the test: a response missing or unparseable (with --unparseable zero an "
                "unparseable answer is scored 0 instead and the pair is kept)",
    "from cache": "responses taken from the response cache of an earlier run (the model was not asked again)",
    "failed": "requests that got no response (rerun the same command to retry them)",
}


def _pct(x: float) -> str:
    return f"{100 * x:.0f} %"


def _kind(g: Any) -> str:
    """The interval's name in a sentence: the mean's own (a bound known) or the shift interval."""
    short = interval_kind(getattr(g, "ci_method", "") or "")[0]
    return {"CI of the mean": "CI of the mean (valid for any distribution within the bound)",
            "shift interval": "shift interval (assumes Δ symmetric about its mean; no bound on |Δ| given)"}.get(short, short)


def _group_line(report: Any, g: Any) -> str:
    a, b = g.background_a, g.background_b
    if is_similarity(report.outcome):
        what = f"answers to {a}- and {b}-worded prompts were {_pct(g.effect)} similar (median over {g.n} pairs)"
        if g.reject:
            verdict = (f"evidence of implicit personalization at α = {report.alpha:g}: the similarity is below "
                       f"the null median {report.m0:g} (adjusted p = {format_p(g.pvalue_adjusted)})")
        else:
            verdict = (f"no evidence of implicit personalization at α = {report.alpha:g} "
                       f"(adjusted p = {format_p(g.pvalue_adjusted)}; not a proof that there is none"
                       f"{'; ' + mde_text(g) if mde_text(g) else ''})")
    else:
        effect = clean_zero(g.effect, g.ci_low, g.ci_high)  # 4.44e-17 is 0
        sign = "higher" if effect > 0 else "lower" if effect < 0 else "no different"
        size = f"{abs(effect):.3g} " if effect != 0 else ""
        dz = f", d_z = {dz_text(g)}" if dz_text(g) else ""
        what = (f"responses to {b} prompts scored {size}{sign} on average than to {a} prompts "
                f"(mean Δ = score({b}) − score({a}) = {f'{effect:+.3g}' if effect else '0'}{dz}, 95 % {_kind(g)} "
                f"[{g.ci_low:.3g}, {g.ci_high:.3g}], {g.n} pairs)")
        if g.reject:
            verdict = (f"evidence of implicit personalization at α = {report.alpha:g} "
                       f"(adjusted p = {format_p(g.pvalue_adjusted)})")
        else:
            verdict = (f"no evidence of implicit personalization at α = {report.alpha:g} "
                       f"(adjusted p = {format_p(g.pvalue_adjusted)}; not a proof that there is none"
                       f"{'; ' + mde_text(g) if mde_text(g) else ''})")
    who = "" if g.model == "(model not given)" else f"{g.model}: "
    return f"{who}{what}; {verdict}."


def plain_lines(report: Any) -> list[str]:
    """One plain-language sentence per background pair of ``report``.

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records(
    ...     {"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": "q", "x_j": "q",
    ...      "similarity": 0.9} for k in range(12))
    >>> print(plain_lines(ipcausal.test(ps))[0])  # doctest: +ELLIPSIS
    answers to ...-worded prompts were 90 % similar (median over 12 pairs); no evidence of implicit personalization at α = 0.05 ...
    """
    if not report.groups:  # a run that scored nothing: say so, never an empty verdict
        why = str(report.null_hypothesis).removeprefix("not tested: ")
        return [f"nothing was tested: {why or 'no background pair had pairs'}; see the warning below."]
    lines = [_group_line(report, g) for g in report.groups]
    for h in getattr(report, "human", ()):  # the judge checked against people
        who = "" if h.model == "(model not given)" else f"{h.model}: "
        verdict = "evidence of" if h.reject else "no evidence of"
        lines.append(f"{who}{h.group}, on the human scale (PPI++, {h.n_labelled} of {h.n_units} {h.unit} rated by "
                     f"people): mean Δ = {clean_zero(h.estimate):+.3g}, 95 % CI [{h.ci_low:.3g}, {h.ci_high:.3g}]; "
                     f"{verdict} implicit personalization (adjusted p = {format_p(h.pvalue_adjusted)})"
                     + (f"; {h.note}" if h.note else "") + ".")
    return lines


def count_notes(counts: Mapping[str, Any]) -> list[str]:
    """What the non-zero counts that need a word mean (``unparseable``, ``excluded``, ``failed``, ``from cache``).

    Examples
    --------
    >>> count_notes({"pairs": 5, "unparseable": 2, "excluded": 2})[0]
    'unparseable 2: answers the scorer could not read (e.g. no option number, no rating)'
    """
    out = []
    for key, note in _COUNT_NOTES.items():
        v = counts.get(key)
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            out.append(f"{key} {v}: {note}")
    return out


def direction_text(report: Any) -> str:
    """The Report's direction line with the real background names (:func:`ipcausal.study.text.named_direction`)."""
    return named_direction(report)


def report_text(report: Any) -> str:
    """``str(report)`` with the direction line naming the real backgrounds (what the CLI prints).

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records(
    ...     {"pair_id": k, "background_i": "SAE", "background_j": "ESL", "x_i": "q", "x_j": "q",
    ...      "score_i": 1.0, "score_j": float(k % 3)} for k in range(12))
    >>> [line for line in report_text(ipcausal.test(ps)).splitlines() if line.startswith("Δ")]
    ['Δ = score(ESL) − score(SAE); effect = mean(Δ)']
    """
    text = str(report)
    return text.replace(str(report.direction), direction_text(report), 1) if report.direction else text
