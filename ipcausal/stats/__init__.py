"""The statistics: exact and fast paired tests, intervals, corrections, sequential tests; no pandas.

Every test of the package and its frozen result, importable from here (lazily: ``import
ipcausal.stats`` loads no kernel until a name is used).  The four the README shows —
:func:`permutation_test`, :func:`sign_test`, :func:`adjust_pvalues`,
:func:`personalization_bias` — are also top-level names of :mod:`ipcausal`.

Examples
--------
>>> from ipcausal.stats import e_holm, sign_tests
>>> sign_tests([5, 0, 3], [1, 4, 3]).round(4).tolist()
[0.1094, 1.0, 0.6562]
>>> e_holm([40.0, 2.0], alpha=0.05).reject
(True, False)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ipcausal._lazy import lazy_names

# public name -> module that defines it (the TYPE_CHECKING block below names the same; a test checks)
_LAZY: dict[str, str] = {
    "permutation_test": "ipcausal.stats.permutation",
    "sign_test": "ipcausal.stats.sign",
    "sign_tests": "ipcausal.stats.sign",
    "equivalence_test": "ipcausal.stats.equivalence",
    "adjust_pvalues": "ipcausal.stats.multitest",
    "personalization_bias": "ipcausal.stats.summary",
    "mean_ci": "ipcausal.stats.summary",
    "westfall_young": "ipcausal.stats.joint",
    "mmd_permutation_test": "ipcausal.stats.distribution",
    "similarity_matrices": "ipcausal.stats.distribution",
    "sequential_test": "ipcausal.stats.sequential",
    "sequential_sign_test": "ipcausal.stats.sequential",
    "SequentialState": "ipcausal.stats.betting",
    "sequential_state": "ipcausal.stats.betting",
    "sequential_sign_state": "ipcausal.stats.betting",
    "sequential_update": "ipcausal.stats.betting",
    "e_holm": "ipcausal.stats.eholm",
    "e_bonferroni": "ipcausal.stats.eholm",
    "SignFlipResult": "ipcausal.stats.results",
    "SignTestResult": "ipcausal.stats.results",
    "PBResult": "ipcausal.stats.results",
    "MeanCIResult": "ipcausal.stats.results",
    "EquivalenceResult": "ipcausal.stats.results",
    "WestfallYoungResult": "ipcausal.stats.results",
    "MMDTestResult": "ipcausal.stats.results",
    "SequentialTestResult": "ipcausal.stats.results",
    "SequentialSignResult": "ipcausal.stats.results",
    "EMultipleResult": "ipcausal.stats.results",
    "trend_test": "ipcausal.stats.ordered",
    "heterogeneity_test": "ipcausal.stats.ordered",
    "binomial_test": "ipcausal.stats.binomial",
    "TrendTestResult": "ipcausal.stats.results_ordered",
    "HeterogeneityTestResult": "ipcausal.stats.results_ordered",
    "BinomialTestResult": "ipcausal.stats.results_ordered",
    "compare_models": "ipcausal.stats.models",
    "bounded_mean_test": "ipcausal.stats.meanci",
    "BoundedMeanTestResult": "ipcausal.stats.meanci",
    "ppi_mean_test": "ipcausal.stats.ppi",
    "PPIResult": "ipcausal.stats.ppi",
    "ModelComparisonResult": "ipcausal.stats.models",
    "rank_sets": "ipcausal.stats.ranks",
    "RankSetResult": "ipcausal.stats.ranks",
}

__all__ = sorted(_LAZY)

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ipcausal.stats.binomial import binomial_test
    from ipcausal.stats.meanci import BoundedMeanTestResult, bounded_mean_test
    from ipcausal.stats.models import ModelComparisonResult, compare_models
    from ipcausal.stats.ranks import RankSetResult, rank_sets
    from ipcausal.stats.ordered import heterogeneity_test, trend_test
    from ipcausal.stats.results_ordered import BinomialTestResult, HeterogeneityTestResult, TrendTestResult
    from ipcausal.stats.betting import SequentialState, sequential_sign_state, sequential_state, sequential_update
    from ipcausal.stats.distribution import mmd_permutation_test, similarity_matrices
    from ipcausal.stats.eholm import e_bonferroni, e_holm
    from ipcausal.stats.equivalence import equivalence_test
    from ipcausal.stats.joint import westfall_young
    from ipcausal.stats.multitest import adjust_pvalues
    from ipcausal.stats.permutation import permutation_test
    from ipcausal.stats.ppi import PPIResult, ppi_mean_test
    from ipcausal.stats.results import (
        EMultipleResult,
        EquivalenceResult,
        MeanCIResult,
        MMDTestResult,
        PBResult,
        SequentialSignResult,
        SequentialTestResult,
        SignFlipResult,
        SignTestResult,
        WestfallYoungResult,
    )
    from ipcausal.stats.sequential import sequential_sign_test, sequential_test
    from ipcausal.stats.sign import sign_test, sign_tests
    from ipcausal.stats.summary import mean_ci, personalization_bias


__getattr__, __dir__ = lazy_names("ipcausal.stats", _LAZY)
