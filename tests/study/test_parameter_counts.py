"""Every public function and constructor takes at most 12 parameters (issue 19, item 4; issue 31, item 4).

A ``*args`` or ``**kwargs`` counts as one parameter (a keyword block hidden behind ``**`` is still a
block).

Over ``ipcausal.__all__`` plus the constructors of the option and spec objects and the backends.
Result records (``*Result``, ``Report``, ``GroupResult``, ``SequentialState``) are left out: the
library makes them, a user never calls their constructor with their fields.
"""

from __future__ import annotations

import inspect

import pytest

import ipcausal

LIMIT = 12
RECORDS = ("Result", "Report", "SequentialState")


def _public() -> list[tuple[str, object]]:
    from ipcausal.backends import Backoff
    from ipcausal.backends.local import LocalBackend
    from ipcausal.backends.openai_backend import OpenAIBackend
    from ipcausal.cases import Case, EthicalReading, PairSource, get_case, list_cases
    from ipcausal.scoring import Scorer, get_scorer, score_pairs
    from ipcausal.study.cases import prepare_case, run_case, run_case_sequential
    from ipcausal.study.bench import bench, run_cell
    from ipcausal.study.mitigation import evaluate_mitigation, run_case_mitigation
    from ipcausal.study.options import AuditSettings, RunOptions, TestOptions

    extra = [Backoff, LocalBackend, OpenAIBackend, Case, EthicalReading, PairSource, get_case, list_cases, Scorer,
             get_scorer, score_pairs, prepare_case, run_case, run_case_sequential, AuditSettings, RunOptions,
             TestOptions, ipcausal.audit, run_case_mitigation, evaluate_mitigation, bench, run_cell]
    out = [(n, getattr(ipcausal, n)) for n in ipcausal.__all__]
    out += [(getattr(o, "__name__", repr(o)), o) for o in extra]
    return [(n, o) for n, o in out if callable(o) and not n.endswith(RECORDS)]


PUBLIC = _public()


def _count(obj: object) -> int:
    try:
        sig = inspect.signature(obj)  # a class: its constructor, without self
    except (TypeError, ValueError):
        return 0
    return len(sig.parameters)  # *args and **kwargs count as one each


def test_var_keyword_parameters_are_counted() -> None:
    def f(a, *args, b=1, **kwargs):  # type: ignore[no-untyped-def]
        return a

    assert _count(f) == 4


def test_the_list_is_not_empty() -> None:
    names = {n for n, _ in PUBLIC}
    assert {"test", "audit", "run", "placebo", "power", "OpenAIBackend", "Case", "AuditSettings"} <= names


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_at_most_twelve_parameters(name: str, obj: object) -> None:
    assert _count(obj) <= LIMIT, f"{name} takes {_count(obj)} parameters"
