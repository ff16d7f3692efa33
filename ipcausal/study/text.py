"""The Report as plain text (``str(report)``) and the small formatting helpers every layer shares.

Plain text is the Report's own representation, so it lives with the Report; Markdown, HTML and
plots are :mod:`ipcausal.report`'s.
"""

from __future__ import annotations

import unicodedata
from typing import Any
from ipcausal.outcomes import is_distribution, is_interval

__all__ = ["format_text", "mde_text", "dz_text", "human_table", "human_source_line", "format_p", "text_table", "display_width", "effect_name", "outcome_words", "clean_zero",
           "named_direction", "PB_NOTE", "trend_line", "strata_table", "extra_lines"]

#: What PB is and is not (printed beside every PB).
PB_NOTE = ("PB is descriptive (the spread of the per-background means): above 0 in a finite sample even "
           "without any effect, unless the means are exactly equal, and not a test; its interval can exclude 0 "
           "where the test does not reject")

_OUTCOME_WORDS = {"interval": "rating / score difference", "similarity": "similarity of the paired responses",
                  "distribution": "distribution of the responses"}



def interval_kind(ci_method: str) -> tuple[str, str]:
    """(a short name, a note) for a group's interval, from ``GroupResult.ci_method``."""
    if ci_method.startswith("betting"):
        return "CI of the mean", ("the interval is the betting CI of mean Δ, valid for every distribution of Δ "
                                  "within the bound on |Δ|" + (", cluster means as units" if "cluster" in ci_method
                                                               else ""))
    if ci_method.startswith("shift"):
        return "shift interval", ("no bound on |Δ| is known, so no interval valid for the mean of every "
                                  "distribution exists; the interval shown inverts the sign-flip test: a shift "
                                  "δ with Δ − δ symmetric (declare Design(bound=c) for the CI of the mean)")
    return "CI", ""

def outcome_words(outcome: str) -> str:
    """The outcome in words a reader knows ("rating / score difference", not "interval").

    Examples
    --------
    >>> outcome_words("interval"), outcome_words("similarity")
    ('rating / score difference', 'similarity of the paired responses')
    """
    return _OUTCOME_WORDS.get(outcome, outcome)


def clean_zero(x: float, *scale: float) -> float:
    """``x``, or 0.0 when it is zero up to floating-point error relative to ``scale`` (and 1).

    Examples
    --------
    >>> clean_zero(4.44e-17, 1.0, 2.0), clean_zero(0.25)
    (0.0, 0.25)
    """
    ref = max([1.0] + [abs(v) for v in scale if v == v and abs(v) != float("inf")])
    return 0.0 if abs(x) <= 1e-12 * ref else x


def named_direction(report: Any) -> str:
    """The Report's direction line with the real background names in place of ``background_a/b``.

    With one orientation for every group the names are put in; with several, each group's
    orientation is listed.
    """
    text = str(report.direction)
    if "background_a" not in text and "background_b" not in text:
        return text
    pairs = list(dict.fromkeys((g.background_a, g.background_b) for g in report.groups))
    if len(pairs) == 1:
        a, b = pairs[0]
        return text.replace("background_b", b).replace("background_a", a)
    if is_interval(report.outcome):
        listed = "; ".join(f"{a} vs {b}: Δ = score({b}) − score({a})" for a, b in pairs)
        return f"{listed}; effect = mean(Δ)"
    return text.replace("background_a", "the first background").replace("background_b", "the second")


def effect_name(report: Any) -> str:
    """The effect column's heading: mean Δ, median s, or (a sequential audit of similarities) the share below m0."""
    if is_interval(report.outcome):
        return "mean Δ"
    if is_distribution(report.outcome):
        return "MMD est."
    return "share below m0" if report.method == "sequential" else "median s"


def format_p(p: float) -> str:
    """A p-value for people: 4 decimals, scientific below 1e-4.

    Examples
    --------
    >>> format_p(0.01234), format_p(3.2e-9), format_p(0.0)
    ('0.0123', '3.200e-09', '0')
    """
    if p != p:  # NaN
        return "nan"
    if p == 0:
        return "0"
    return f"{p:.3e}" if p < 1e-4 else f"{p:.4f}"


def display_width(text: str) -> int:
    """Columns ``text`` takes in a terminal: wide (CJK, emoji) characters count 2, combining marks 0.

    Examples
    --------
    >>> display_width("abc"), display_width("日本"), display_width("e\\u0301")
    (3, 4, 1)
    """
    width = 0
    for ch in text:
        if unicodedata.combining(ch):
            continue
        width += 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1
    return width


def _pad(text: str, width: int) -> str:
    return text + " " * max(0, width - display_width(text))


def text_table(rows: list[list[str]], header: list[str]) -> list[str]:
    """A left-aligned text table (header, rule, rows) that stays aligned with wide characters."""
    widths = [max(display_width(h), *(display_width(r[i]) for r in rows)) if rows else display_width(h)
              for i, h in enumerate(header)]
    out = ["  ".join(_pad(h, w) for h, w in zip(header, widths)).rstrip(),
           "  ".join("-" * w for w in widths)]
    out += ["  ".join(_pad(c, w) for c, w in zip(r, widths)).rstrip() for r in rows]
    return out


def dz_text(g: Any) -> str:
    """d_z = mean Δ / sd Δ of a sign-flip group (of the tested units), as text; ``""`` for other tests.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> dz_text(SimpleNamespace(detail=SimpleNamespace(effect_size=0.4321)))
    '0.43'
    """
    d = getattr(getattr(g, "detail", None), "effect_size", None)
    if d is None or d != d:
        return ""
    return f"{clean_zero(float(d)):.2f}"


def mde_text(g: Any) -> str:
    """The minimal detectable effect of a group in words (its :class:`~ipcausal.study.parts.MDEInfo`), or ``""``.

    Examples
    --------
    >>> from ipcausal.study.parts import MDEInfo
    >>> from types import SimpleNamespace
    >>> m = MDEInfo(effect=0.44, power=0.8, n=25, unit="pairs", level=0.05, level_name="alpha", sd=0.83,
    ...             from_observed=True, d_z=0.53, test="permutation")
    >>> mde_text(SimpleNamespace(mde=m))
    'the test would detect |mean Δ| ≥ 0.44 (d_z = 0.53) with 80 % power (25 pairs, observed sd of Δ 0.83, level 0.05)'
    """
    m = getattr(g, "mde", None)
    if m is None:
        return ""
    pct = f"{100 * m.power:.0f} %"
    level = f"level {m.level:.3g}" + (f" = {m.level_name}" if m.level_name != "alpha" else "")
    if m.effect != m.effect:  # NaN
        return f"minimal detectable effect {m.note}"
    if m.effect == float("inf"):
        return f"no effect is detectable with {pct} power at {m.n} {m.unit} ({level}): more pairs are needed"
    if m.test == "sign":
        return (f"the test would detect a share of {m.unit} below m0 of {m.effect:.3g} or more (H0: 0.5) with {pct} "
                f"power ({m.n} {m.unit}, {level})")
    spread = f"{'observed' if m.from_observed else 'assumed'} sd of Δ {m.sd:.3g}"
    return (f"the test would detect |mean Δ| ≥ {m.effect:.3g} (d_z = {m.d_z:.2f}) with {pct} power "
            f"({m.n} {m.unit}, {spread}, {level})")


def human_table(report: Any, model: str | None = None) -> tuple[list[str], list[list[str]], list[str]]:
    """(header, rows, notes) of the human-scale table (``Report.human``) of one model (all with ``None``).

    One row per group: the labelled units, mean Δ on the human scale by PPI++ with its 95 % interval,
    adjusted p and verdict, the human-only estimate, the judge-only mean Δ, and the test of the judge's
    bias by background; the notes give the judge's agreement with people per background and the
    plain-words line where the judge's bias could explain (or hide) the judge-only verdict.
    """
    rows, notes = [], []
    for h in getattr(report, "human", ()):
        if model is not None and h.model != model:
            continue
        rows.append([h.group if model is not None else f"{h.model}: {h.group}", f"{h.n_labelled} of {h.n_units}",
                     f"{clean_zero(h.estimate):.4g}", f"[{h.ci_low:.4g}, {h.ci_high:.4g}]", format_p(h.pvalue_adjusted),
                     "yes" if h.reject else "no", f"{clean_zero(h.human_estimate):.4g} [{h.human_ci_low:.4g}, "
                     f"{h.human_ci_high:.4g}]", f"{h.judge_effect:.4g} ({'rejected' if h.judge_reject else 'not rejected'})",
                     f"{h.bias:+.3g} [{h.bias_ci_low:.3g}, {h.bias_ci_high:.3g}]", format_p(h.bias_pvalue)])
        for a in h.agreement:
            r = "n/a" if a.correlation != a.correlation else f"{a.correlation:.2f}"
            notes.append(f"{h.group}, judge vs people on {a.background} ({a.n} responses): mean h − f = "
                         f"{a.mean_difference:+.3g}, mean |h − f| = {a.mean_abs_difference:.3g}, r = {r}, "
                         f"exact {100 * a.exact:.0f} %")
        if h.note:
            notes.append(f"{h.group}: {h.note}")
    header = ["pair", f"labelled {report.human[0].unit if getattr(report, 'human', ()) else 'pairs'}",
              "mean Δ, human scale (PPI++)", "95% CI", "p adj", "reject", "human only [95% CI]", "judge only",
              "judge bias, b − a [95% CI]", "bias p"]
    return header, rows, notes


def human_source_line(report: Any) -> str:
    """Where the human scores came from, in one line ("" without them).

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> from ipcausal.study.parts import HumanSource
    >>> human_source_line(SimpleNamespace(human_source=HumanSource("s.csv", 60, True, 0, 60, 200, True)))
    "human scores: s.csv, 60 pairs labelled, the package's own seeded draw (seed 0, 60 of 200 pairs)"
    """
    src = getattr(report, "human_source", None)
    if src is None:
        return ""
    what = (f"the package's own seeded draw (seed {src.seed}, {src.drawn} of {src.population} pairs)" if src.own_draw
            else "not the package's own draw")
    return f"human scores: {src.source}, {src.n_labelled} pairs labelled, {what}"


def format_text(report: Any) -> str:
    """The report as a plain-text table that states H0, the direction and the verdict."""
    lines: list[str] = []
    mode = " (paper-compatibility mode: the study's released code, not the method as stated)" if report.paper_compat else ""
    lines.append(f"ipcausal report — {outcome_words(report.outcome)}{mode}")
    lines.append(report.null_hypothesis)
    lines.append(named_direction(report))
    corr = "no correction" if report.correction == "none" else f"{report.correction} correction"
    lines.append(f"alpha = {report.alpha:g}, {corr} within each model")
    lines.append("")
    for model, verdict in report.ip_detected_by_model().items():
        fam = [g for g in report.groups if g.model == model]
        lines.append(f"model: {model}")
        rows = []
        for g in fam:
            n = str(g.n) if g.n_clusters is None else f"{g.n} ({g.n_clusters} cl.)"
            effect_value = clean_zero(g.effect, g.ci_low, g.ci_high)
            rows.append([g.group, n, g.detail.method, f"{effect_value:.4g}", f"[{g.ci_low:.4g}, {g.ci_high:.4g}]",
                         format_p(g.pvalue), format_p(g.pvalue_adjusted), "yes" if g.reject else "no"])
            if is_interval(report.outcome):
                rows[-1].insert(4, dz_text(g))
            if report.margin is not None:
                verdict_of = g.equivalence.verdict if g.equivalence is not None else None
                rows[-1].append({"equivalent": "yes", "reject": "no"}.get(str(verdict_of), "—"))
        effect = effect_name(report)
        kinds = {interval_kind(getattr(g, "ci_method", ""))[0] for g in fam}
        header = ["pair", "n", "method", effect, f"95% {kinds.pop() if len(kinds) == 1 else 'CI'}", "p", "p adj",
                  "reject"]
        if is_interval(report.outcome):
            header.insert(4, "d_z")
        if report.margin is not None:
            header.append(f"equivalent within ±{report.margin:g}")
        lines += ["  " + s for s in text_table(rows, header)]
        notes = sorted({interval_kind(getattr(g, "ci_method", ""))[1] for g in fam} - {""})
        lines += [f"  ({n})" for n in notes]
        for g in fam:  # how blind each non-rejection was
            if not g.reject and mde_text(g):
                lines.append(f"  {g.group}: not rejected; minimal detectable effect: {mde_text(g)}")
        joint = report.omnibus.get(model) if report.omnibus else None
        if joint:
            lines.append(f"  joint test, no background matters (prompt labels permuted, {joint.method}): "
                         f"p = {format_p(joint.pvalue)}")
        lines += ["  " + s for s in extra_lines(report, model)]
        header, hrows, hnotes = human_table(report, model)
        if hrows:
            lines.append("  effect on the human scale (prediction-powered inference with the people's scores):")
            lines += ["  " + s for s in text_table(hrows, header)] + ["  " + n for n in hnotes]
        pb = report.pb.get(model)
        if pb is not None:
            means = ", ".join(f"{k}={v:.4g}" for k, v in pb.means.items())
            value = clean_zero(pb.statistic, *pb.means.values())
            lines.append(f"  PB = {value:.4g} [{pb.ci_low:.4g}, {pb.ci_high:.4g}] (means: {means})")
            lines.append(f"  ({PB_NOTE})")
        lines.append(f"  implicit personalization detected: {'YES' if verdict else 'no'}")
        if report.margin is not None and not verdict:
            shown = all(g.equivalence is not None and g.equivalence.verdict == "equivalent" for g in fam)
            lines.append(f"  no IP shown (every |mean Δ| < {report.margin:g} by TOST at α): {'YES' if shown else 'no'}")
        lines.append("")
    if human_source_line(report):
        lines.append(human_source_line(report))
    for w in report.warnings:
        lines.append(f"warning: {w}")
    return "\n".join(lines).rstrip() + "\n"


def trend_line(t: Any) -> str:
    """The trend row of one model (a :class:`~ipcausal.study.parts.TrendInfo`) in words."""
    means = ", ".join(f"{lv}={m:.4g}" for lv, m in zip(t.levels, t.level_means))
    left = f"; {t.n_incomplete} incomplete left out" if getattr(t, "n_incomplete", 0) else ""
    return (f"trend across {' < '.join(t.levels)} (prompt labels permuted, {t.method}, {t.n_prompts} prompts{left}): "
            f"slope = {t.slope:.4g} per level, p = {format_p(t.pvalue)} (means: {means})")


def strata_table(s: Any) -> tuple[list[list[str]], list[str], list[str]]:
    """(rows, header, notes) of one group's per-cue table (a :class:`~ipcausal.study.parts.StrataInfo`)."""
    rows = [[c.cue, str(c.n), f"{c.effect:.4g}", f"[{c.ci_low:.4g}, {c.ci_high:.4g}]", format_p(c.pvalue)]
            for c in s.cues]
    if s.pooled_pvalue == s.pooled_pvalue:  # NaN for similarity outcomes: no pooled mean Δ
        rows.append(["pooled, stratified by cue", str(sum(c.n for c in s.cues)), f"{s.pooled_effect:.4g}",
                     f"[{s.pooled_ci_low:.4g}, {s.pooled_ci_high:.4g}]", format_p(s.pooled_pvalue)])
    if s.heterogeneity_pvalue is not None:
        note = (f"heterogeneity, the cue does not matter (cue labels permuted within {s.heterogeneity_n} prompts): "
                f"p = {format_p(s.heterogeneity_pvalue)}")
    else:
        note = f"heterogeneity test not run: {s.heterogeneity_note}"
    effect = "mean Δ" if s.pooled_pvalue == s.pooled_pvalue else "effect"
    return rows, [f"{s.group} by {s.column}", "n", effect, "95% CI", "p"], [note]


def extra_lines(report: Any, model: str) -> list[str]:
    """The trend row and the per-cue tables of one model, as plain-text lines."""
    out = [trend_line(t) for t in getattr(report, "trend", ()) if t.model == model]
    for s in getattr(report, "strata", ()):
        if s.model == model:
            rows, header, notes = strata_table(s)
            out += text_table(rows, header) + notes
    return out
