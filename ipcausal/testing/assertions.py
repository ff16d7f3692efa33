"""Assertions for test suites: ``assert_no_ip`` / ``assert_ip``, with the report as the message.

Both accept scored pairs (a PairSet, a DataFrame or a file path, tested with
:func:`ipcausal.test`) or a finished :class:`~ipcausal.study.results.Report`, raise
``AssertionError`` whose message is the full text report, and return the report on success.
``assert_no_ip`` needs an equivalence ``margin``: it passes only when every group is shown
equivalent, never on a mere failure to reject.
pytest hides their frames from tracebacks (``__tracebackhide__``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ipcausal.study.results import Report
from ipcausal.stats._validate import open_unit

__all__ = ["assert_no_ip", "assert_ip"]


def _report(pairs_or_report: Any, alpha: float | None, test_kwargs: dict[str, Any]) -> tuple[Report, float]:
    if isinstance(pairs_or_report, Report):
        if test_kwargs:
            names = ", ".join(f"`{k}`" for k in sorted(test_kwargs))
            raise TypeError(f"{names}: test options apply to pairs, not to a finished Report")
        level = pairs_or_report.alpha if alpha is None else open_unit(alpha, "alpha")
        return pairs_or_report, level
    from ipcausal.study.test import test

    level = 0.05 if alpha is None else open_unit(alpha, "alpha")
    return test(pairs_or_report, alpha=level, **test_kwargs), level


def _rejected(report: Report, alpha: float) -> list[str]:
    """The groups rejected at ``alpha`` (adjusted p-values compared with ``alpha``)."""
    return [f"{g.group} ({g.model})" for g in report.groups if g.pvalue_adjusted <= alpha]


def _verdict(g: Any) -> str | None:
    """A group's equivalence verdict (``None`` when it was tested without a margin)."""
    return None if g.equivalence is None else g.equivalence.verdict


def _needed_pairs(report: Report, margin: float, alpha: float) -> str:
    """How many pairs :func:`ipcausal.power` says would show |mean Δ| < margin (80 % power, true effect 0)."""
    from ipcausal.study.power import power

    parts = []
    for g in report.groups:
        if _verdict(g) != "inconclusive" or g.data is None or g.data.kind != "sample":
            continue
        sd = float(np.std(np.asarray(g.data.x), ddof=1)) / max(g.n / max(len(g.data.x), 1), 1.0)
        if not sd > 0:
            continue
        # TOST with true mean 0 needs power 1 - β/2 per one-sided test at α: n from the one-sided power
        n = power(margin, power=0.9, alpha=alpha, sd=sd, alternative="greater").n
        parts.append(f"{g.group} ({g.model}): about {n} pairs (now {g.n})")
    return ("; ".join(parts)) if parts else "more pairs"


def assert_no_ip(pairs_or_report: Any, *, margin: float, alpha: float | None = None, **test_kwargs: Any) -> Report:
    """Assert that no background pair shows implicit personalization: every |mean Δ| < ``margin``.

    "No IP" is shown, not assumed from a failure to reject: every group must pass the
    equivalence test of :func:`ipcausal.test` (two one-sided tests at level α of |mean Δ| ≥
    ``margin``, i.e. the (1 − 2α) interval inside (−margin, margin)).  Where a bound on |Δ| is
    known (the scorer's ``bound`` column, or ``design=Design(bound=c)`` in ``test_kwargs``) these
    are the betting tests, level α for every distribution of Δ on [−c, c]; without one they are
    the sign-flip tests of the shift model, exact only when Δ ∓ margin is symmetric, and the
    verdict's ``ci_method`` says ``"shift: …"``.  When the data are inconclusive the assertion
    fails and says how many pairs :func:`ipcausal.power` estimates would be needed.

    Parameters
    ----------
    pairs_or_report : PairSet, pandas.DataFrame, path or Report
        Scored pairs (tested here with ``margin``) or a report from ``ipcausal.test(..., margin=...)``.
    margin : float
        The smallest mean Δ that matters (> 0, on the outcome's scale).  Required.
    alpha : float, optional
        Level (default 0.05 for pairs; the report's own for a Report).
    **test_kwargs
        Passed to :func:`ipcausal.test` (``correction``, ``cluster``, ``method``, ``rng``, ``design`` …).

    Returns
    -------
    Report

    Raises
    ------
    AssertionError
        When a group is rejected (IP detected) or not shown equivalent (inconclusive); the
        message says which and includes the whole report.

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel, assert_no_ip
    >>> report = assert_no_ip(SimulatedModel(noise=0.2, seed=1).study(n=200, rng=0), margin=0.3)
    >>> report.groups[0].equivalence.verdict
    'equivalent'
    """
    __tracebackhide__ = True
    if isinstance(margin, bool) or not isinstance(margin, (int, float)):
        raise TypeError(f"`margin` must be a positive number (the smallest mean Δ that matters), got {margin!r}")
    if isinstance(pairs_or_report, Report):
        if pairs_or_report.margin is None:
            raise ValueError("`pairs_or_report`: this Report has no equivalence verdicts; test with "
                             "ipcausal.test(..., margin=...) or pass the pairs")
        if float(margin) != pairs_or_report.margin:
            raise ValueError(f"`margin`={margin} differs from the Report's margin {pairs_or_report.margin}")
        report, level = _report(pairs_or_report, alpha, test_kwargs)
    else:
        report, level = _report(pairs_or_report, alpha, {**test_kwargs, "margin": margin})
    rejected = [f"{g.group} ({g.model})" for g in report.groups if _verdict(g) == "reject"]
    if rejected:
        raise AssertionError(
            f"implicit personalization detected at alpha={level:g} for {', '.join(rejected)}\n\n{report}"
        )
    open_ = [f"{g.group} ({g.model})" for g in report.groups if _verdict(g) != "equivalent"]
    if open_:
        raise AssertionError(
            f"inconclusive: no IP was not shown for {', '.join(open_)} — not rejected, but |mean Δ| < {margin:g} "
            f"is not established at alpha={level:g} either (absence of evidence is not evidence of absence). "
            f"Needed by ipcausal.power: {_needed_pairs(report, float(margin), level)}.\n\n{report}"
        )
    return report


def assert_ip(pairs_or_report: Any, *, alpha: float | None = None, **test_kwargs: Any) -> Report:
    """Assert that at least one background pair shows implicit personalization at ``alpha``.

    Parameters and return value as in :func:`assert_no_ip`; raises ``AssertionError`` (with
    the report as the message) when no background pair is rejected.

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel, assert_ip
    >>> assert_ip(SimulatedModel(effect=2.0).study(n=20, rng=0)).ip_detected
    True
    """
    __tracebackhide__ = True
    report, level = _report(pairs_or_report, alpha, test_kwargs)
    if not _rejected(report, level):
        raise AssertionError(f"no implicit personalization detected at alpha={level:g}\n\n{report}")
    return report
