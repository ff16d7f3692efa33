"""ipcausal/outcomes.py: the outcome kinds defined once, and no `outcome ==` comparison elsewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ipcausal.outcomes import INTERVAL, SIMILARITY, directed, get_outcome, resolve_outcome

PKG = Path(__file__).resolve().parents[1] / "ipcausal"
#: Files allowed to compare an outcome by name besides ipcausal/outcomes.py: none.
NOT_YET: set[str] = set()


def test_the_two_kinds() -> None:
    assert (INTERVAL.columns, INTERVAL.test, INTERVAL.default_alternative, INTERVAL.directed) == \
        (("score_i", "score_j"), "permutation", "two-sided", True)
    assert (SIMILARITY.columns, SIMILARITY.test, SIMILARITY.default_alternative, SIMILARITY.bound) == \
        (("similarity",), "sign", "less", 1.0)
    assert get_outcome(INTERVAL) is INTERVAL and directed("interval") and not directed("similarity")
    with pytest.raises(ValueError, match="`outcome` must be one of 'interval', 'similarity', got 'ordinal'"):
        directed("ordinal")


def test_resolve() -> None:
    assert resolve_outcome("auto", "interval") == "interval" and resolve_outcome("similarity", "both") == "similarity"
    with pytest.raises(ValueError, match="`pairs` has no outcome"):
        resolve_outcome("auto", None)
    with pytest.raises(ValueError, match="`pairs` has both scores and similarity"):
        resolve_outcome("auto", "both")


def test_no_outcome_comparison_outside_the_outcome_module() -> None:
    pattern = re.compile(r"""\boutcome\s*[!=]=\s*['"]""")
    hits = []
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel == "outcomes.py" or rel in NOT_YET:
            continue
        hits += [f"{rel}:{n}" for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                 if pattern.search(line)]
    assert hits == []
