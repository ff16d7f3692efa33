"""Every public function and constructor takes at most 12 parameters (issue 19, item 4).

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
    from ipcausal.study.options import AuditSettings, RunOptions, TestOptions

    extra = [Backoff, LocalBackend, OpenAIBackend, Case, EthicalReading, PairSource, get_case, list_cases, Scorer,
             get_scorer, score_pairs, prepare_case, run_case, run_case_sequential, AuditSettings, RunOptions,
             TestOptions, ipcausal.audit]
    out = [(n, getattr(ipcausal, n)) for n in ipcausal.__all__]
    out += [(getattr(o, "__name__", repr(o)), o) for o in extra]
    return [(n, o) for n, o in out if callable(o) and not n.endswith(RECORDS)]


PUBLIC = _public()


def _count(obj: object) -> int:
    try:
        sig = inspect.signature(obj)  # a class: its constructor, without self
    except (TypeError, ValueError):
        return 0
    return sum(1 for p in sig.parameters.values() if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD))


def test_the_list_is_not_empty() -> None:
    names = {n for n, _ in PUBLIC}
    assert {"test", "audit", "run", "placebo", "power", "OpenAIBackend", "Case", "AuditSettings"} <= names


@pytest.mark.parametrize("name, obj", PUBLIC, ids=[n for n, _ in PUBLIC])
def test_at_most_twelve_parameters(name: str, obj: object) -> None:
    assert _count(obj) <= LIMIT, f"{name} takes {_count(obj)} parameters"
