"""Multiple-testing corrections against statsmodels (reference values hard-coded and live)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.multitest import multipletests

from ipcausal import adjust_pvalues
from ipcausal.stats.multitest import CORRECTIONS

P = [0.01, 0.04, 0.03, 0.005, 0.2]
# statsmodels 0.14/0.15 multipletests(P, method=...)[1], written down once
REFERENCE = {
    "bonferroni": [0.05, 0.2, 0.15, 0.025, 1.0],
    "holm": [0.04, 0.09, 0.09, 0.025, 0.2],
    "hochberg": [0.04, 0.08, 0.08, 0.025, 0.2],
    "bh": [0.025, 0.05, 0.05, 0.025, 0.2],
    "sidak": [0.0490099501, 0.1846273024, 0.1412659743, 0.024751246878125, 0.67232],
}
SM_NAME = {
    "bonferroni": "bonferroni",
    "sidak": "sidak",
    "holm": "holm",
    "holm-sidak": "holm-sidak",
    "hochberg": "simes-hochberg",
    "bh": "fdr_bh",
    "by": "fdr_by",
}


@pytest.mark.parametrize("method", sorted(REFERENCE))
def test_hard_coded_reference(method: str) -> None:
    np.testing.assert_allclose(adjust_pvalues(P, method), REFERENCE[method], rtol=0, atol=1e-12)


@pytest.mark.parametrize("method", sorted(SM_NAME))
@pytest.mark.parametrize("m", [1, 2, 3, 10, 1225])
def test_matches_statsmodels(method: str, m: int) -> None:
    rng = np.random.default_rng(m)
    p = rng.random(m) ** 3
    p[rng.integers(0, m)] = p[0]  # a tie
    ref = multipletests(p, method=SM_NAME[method])[1]
    np.testing.assert_allclose(adjust_pvalues(p, method), ref, rtol=0, atol=1e-12)


def test_none_returns_copy() -> None:
    p = np.array([0.3, 0.01])
    out = adjust_pvalues(p, "none")
    assert out.tolist() == p.tolist() and out is not p


@settings(max_examples=100, deadline=None, derandomize=True)
@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=1, max_size=30), st.sampled_from(CORRECTIONS))
def test_properties(p: list[float], method: str) -> None:
    adj = adjust_pvalues(p, method)
    arr = np.array(p)
    assert adj.shape == arr.shape
    assert np.all(adj <= 1.0) and np.all(adj >= arr - 1e-15)  # never below the raw p, capped at 1
    order = np.argsort(arr, kind="stable")
    assert np.all(np.diff(adj[order]) >= -1e-12)  # monotone in the raw p-values


@pytest.mark.parametrize(
    ("p", "method", "exc", "match"),
    [
        ([0.1, 1.2], "holm", ValueError, r"`p` must lie in \[0, 1\]"),
        ([-0.1], "holm", ValueError, r"`p` must lie in \[0, 1\]"),
        ([np.nan], "holm", ValueError, "`p` must be finite"),
        ([], "holm", ValueError, "`p` must not be empty"),
        ([[0.1]], "holm", ValueError, "`p` must be 1-D"),
        (["a"], "holm", TypeError, "`p` must hold numbers"),
        ("0.1", "holm", TypeError, "`p` must be an array"),
        ([0.1], "fdr", ValueError, "`method` must be one of"),
    ],
)
def test_validation(p, method, exc, match) -> None:
    with pytest.raises(exc, match=match):
        adjust_pvalues(p, method)
