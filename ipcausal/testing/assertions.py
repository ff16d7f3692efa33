"""Assertions for test suites: ``assert_no_ip`` / ``assert_ip``, with the report as the message.

Both accept scored pairs (a PairSet, a DataFrame or a file path, tested with
:func:`ipcausal.test`) or a finished :class:`~ipcausal.study.results.Report`, raise
``AssertionError`` whose message is the full text report, and return the report on success.
pytest hides their frames from tracebacks (``__tracebackhide__``).
"""

from __future__ import annotations

from typing import Any

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


def assert_no_ip(pairs_or_report: Any, *, alpha: float | None = None, **test_kwargs: Any) -> Report:
    """Assert that no background pair shows implicit personalization at level ``alpha``.

    Parameters
    ----------
    pairs_or_report : PairSet, pandas.DataFrame, path or Report
        Scored pairs (tested here) or a report from :func:`ipcausal.test`.
    alpha : float, optional
        Level for the adjusted p-values (default 0.05 for pairs; the report's own for a Report).
    **test_kwargs
        Passed to :func:`ipcausal.test` (``correction``, ``m0``, ``method``, ``rng``, …).

    Returns
    -------
    Report

    Raises
    ------
    AssertionError
        When any background pair is rejected; the message is the whole report.

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel, assert_no_ip
    >>> assert_no_ip(SimulatedModel().study(n=20, rng=0)).ip_detected
    False
    """
    __tracebackhide__ = True
    report, level = _report(pairs_or_report, alpha, test_kwargs)
    rejected = _rejected(report, level)
    if rejected:
        raise AssertionError(
            f"implicit personalization detected at alpha={level:g} for {', '.join(rejected)}\n\n{report}"
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
