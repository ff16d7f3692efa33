"""ipcausal: does a language model implicitly personalize?

Paired indirect-intervention experiments on language models, with exact and
fast paired tests.  The public names are imported lazily, so that
``import ipcausal`` (and the command line) stays fast.

Examples
--------
>>> import ipcausal
>>> res = ipcausal.permutation_test([1, 2, 1, 0, 2, 1, 1, 3], method="exact")
>>> round(res.pvalue, 4)
0.0156
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ipcausal._lazy import lazy_names

__version__ = "0.1.0"

# public name -> module that defines it
_LAZY: dict[str, str] = {
    "PairSet": "ipcausal.pairs",
    "test": "ipcausal.study.test",
    "distribution_test": "ipcausal.study.distribution",
    "Report": "ipcausal.study.results",
    "GroupResult": "ipcausal.study.results",
    "reproduce": "ipcausal.study.reproduce",
    "MonteCarloResolutionWarning": "ipcausal.study.test",
    "ClusterWarning": "ipcausal.study.groups",
    "SignFlipResult": "ipcausal.stats.results",
    "SignTestResult": "ipcausal.stats.results",
    "PBResult": "ipcausal.stats.results",
    "MeanCIResult": "ipcausal.stats.results",
    "EquivalenceResult": "ipcausal.stats.results",
    "WestfallYoungResult": "ipcausal.stats.results",
    "MMDTestResult": "ipcausal.stats.results",
    "westfall_young": "ipcausal.stats.joint",
    "mmd_permutation_test": "ipcausal.stats.distribution",
    "similarity_matrices": "ipcausal.stats.distribution",
    "permutation_test": "ipcausal.stats.permutation",
    "equivalence_test": "ipcausal.stats.equivalence",
    "sign_test": "ipcausal.stats.sign",
    "sign_tests": "ipcausal.stats.sign",
    "adjust_pvalues": "ipcausal.stats.multitest",
    "personalization_bias": "ipcausal.stats.summary",
    "mean_ci": "ipcausal.stats.summary",
    "run": "ipcausal.study.run",
    "sequential_test": "ipcausal.stats.sequential",
    "sequential_sign_test": "ipcausal.stats.sequential",
    "SequentialState": "ipcausal.stats.betting",
    "sequential_state": "ipcausal.stats.betting",
    "sequential_sign_state": "ipcausal.stats.betting",
    "sequential_update": "ipcausal.stats.betting",
    "e_holm": "ipcausal.stats.eholm",
    "e_bonferroni": "ipcausal.stats.eholm",
    "SequentialTestResult": "ipcausal.stats.results",
    "SequentialSignResult": "ipcausal.stats.results",
    "EMultipleResult": "ipcausal.stats.results",
    "get_backend": "ipcausal.backends",
    "power": "ipcausal.study.power",
    "placebo": "ipcausal.study.placebo",
    "score_pairs": "ipcausal.scoring",
    "run_case": "ipcausal.study.cases",
    "audit": "ipcausal.study.audit",
    "trend_test": "ipcausal.stats.ordered",
    "heterogeneity_test": "ipcausal.stats.ordered",
    "binomial_test": "ipcausal.stats.binomial",
    "TrendTestResult": "ipcausal.stats.results_ordered",
    "HeterogeneityTestResult": "ipcausal.stats.results_ordered",
    "BinomialTestResult": "ipcausal.stats.results_ordered",
    "probe": "ipcausal.study.probe",
    "ProbeResult": "ipcausal.study.probe",
}

__all__ = sorted(_LAZY) + ["__version__"]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ipcausal.study.groups import ClusterWarning
    from ipcausal.study.distribution import distribution_test
    from ipcausal.study.test import MonteCarloResolutionWarning, test
    from ipcausal.pairs import PairSet
    from ipcausal.study.results import GroupResult, Report
    from ipcausal.stats.betting import SequentialState, sequential_sign_state, sequential_state, sequential_update
    from ipcausal.stats.eholm import e_bonferroni, e_holm
    from ipcausal.stats.results import EMultipleResult, SequentialSignResult, SequentialTestResult
    from ipcausal.stats.results import MeanCIResult, PBResult, SignFlipResult, SignTestResult
    from ipcausal.stats.sequential import sequential_sign_test, sequential_test
    from ipcausal.stats.multitest import adjust_pvalues
    from ipcausal.stats.permutation import permutation_test
    from ipcausal.stats.sign import sign_test, sign_tests
    from ipcausal.stats.summary import mean_ci, personalization_bias
    from ipcausal.stats.binomial import binomial_test
    from ipcausal.stats.ordered import heterogeneity_test, trend_test
    from ipcausal.stats.results_ordered import BinomialTestResult, HeterogeneityTestResult, TrendTestResult
    from ipcausal.study.probe import ProbeResult, probe


__getattr__, __dir__ = lazy_names('ipcausal', _LAZY)
