"""ipcausal: does a language model implicitly personalize?

Paired indirect-intervention experiments on language models, with exact and
fast paired tests.  The top level holds the study-level names (test, audit, run, the Report and
the other return types) and the four statistics the README shows; every other statistic, its
result type and the sequential machinery live in :mod:`ipcausal.stats` (``ipcausal.stats.e_holm``,
``ipcausal.stats.SignFlipResult`` …), the warnings in :mod:`ipcausal.study.test` and
:mod:`ipcausal.study.groups`.  The names are imported lazily, so that ``import ipcausal`` (and the
command line) stays fast.

Examples
--------
>>> import ipcausal
>>> res = ipcausal.permutation_test([1, 2, 1, 0, 2, 1, 1, 3], method="exact")
>>> round(res.pvalue, 4)
0.0156
>>> round(float(ipcausal.stats.sign_tests([5], [1])[0]), 4)
0.1094
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ipcausal._lazy import lazy_names

__version__ = "0.1.0"

# public name -> module that defines it (the TYPE_CHECKING block below names the same; a test checks)
_LAZY: dict[str, str] = {
    # the study
    "PairSet": "ipcausal.pairs",
    "test": "ipcausal.study.test",
    "distribution_test": "ipcausal.study.distribution",
    "audit": "ipcausal.study.audit",
    "run": "ipcausal.study.run",
    "run_case": "ipcausal.study.cases",
    "score_pairs": "ipcausal.scoring.pipeline",
    "power": "ipcausal.study.power",
    "placebo": "ipcausal.study.placebo",
    "reproduce": "ipcausal.study.reproduce",
    "compare": "ipcausal.study.compare",
    "bench": "ipcausal.study.bench",
    "probe": "ipcausal.study.probe",
    "get_backend": "ipcausal.backends",
    "GenerationConfig": "ipcausal.backends.base",
    # cases, scorers and the option objects
    "Case": "ipcausal.cases.spec",
    "get_case": "ipcausal.cases.registry",
    "list_cases": "ipcausal.cases.registry",
    "get_scorer": "ipcausal.scoring.registry",
    "RunOptions": "ipcausal.study.options",
    "AuditSettings": "ipcausal.study.options",
    "TestOptions": "ipcausal.study.options",
    "Design": "ipcausal.study.options",
    # what they return
    "Report": "ipcausal.study.results",
    "GroupResult": "ipcausal.study.results",
    "AuditRun": "ipcausal.study.audit",
    "CaseResult": "ipcausal.study.cases",
    "PowerResult": "ipcausal.study.power",
    "PlaceboResult": "ipcausal.study.placebo",
    "ProbeResult": "ipcausal.study.probe",
    "BenchReport": "ipcausal.study.bench",
    "ScoreResult": "ipcausal.scoring.pipeline",
    # the statistics the README shows (the rest: ipcausal.stats)
    "permutation_test": "ipcausal.stats.permutation",
    "sign_test": "ipcausal.stats.sign",
    "adjust_pvalues": "ipcausal.stats.multitest",
    "personalization_bias": "ipcausal.stats.summary",
}

__all__ = sorted(_LAZY) + ["__version__"]

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ipcausal import stats
    from ipcausal.backends import get_backend
    from ipcausal.backends.base import GenerationConfig
    from ipcausal.cases.registry import get_case, list_cases
    from ipcausal.cases.spec import Case
    from ipcausal.pairs import PairSet
    from ipcausal.scoring.pipeline import ScoreResult, score_pairs
    from ipcausal.scoring.registry import get_scorer
    from ipcausal.stats.multitest import adjust_pvalues
    from ipcausal.stats.permutation import permutation_test
    from ipcausal.stats.sign import sign_test
    from ipcausal.stats.summary import personalization_bias
    from ipcausal.study.audit import AuditRun, audit
    from ipcausal.study.bench import BenchReport, bench
    from ipcausal.study.compare import compare
    from ipcausal.study.cases import CaseResult, run_case
    from ipcausal.study.distribution import distribution_test
    from ipcausal.study.options import AuditSettings, Design, RunOptions, TestOptions
    from ipcausal.study.placebo import PlaceboResult, placebo
    from ipcausal.study.power import PowerResult, power
    from ipcausal.study.probe import ProbeResult, probe
    from ipcausal.study.reproduce import reproduce
    from ipcausal.study.results import GroupResult, Report
    from ipcausal.study.run import run
    from ipcausal.study.test import test


# ``ipcausal.stats`` after a bare ``import ipcausal`` (a submodule, not in __all__)
__getattr__, __dir__ = lazy_names("ipcausal", {**_LAZY, "stats": "module"})
