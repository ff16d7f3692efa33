"""Multiple-testing corrections against statsmodels (reference values hard-coded and live)."""

from __future__ import annotations

import gc
from unittest import mock

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
        (0.1, "holm", ValueError, r"`p` must be an array of p-values \(at least 1-D\)"),
        (np.empty((3, 0)), "holm", ValueError, "`p` must not be empty"),
        ([[0.1, 0.2], [0.3, np.inf]], "bh", ValueError, "`p` must be finite"),
        ([[0.1, 0.2], [0.3, 1.5]], "bonferroni", ValueError, r"`p` must lie in \[0, 1\]"),
        ([0.1, np.nan], "sidak", ValueError, "`p` must be finite"),
        ([0.1, -1e-300], "holm-sidak", ValueError, r"`p` must lie in \[0, 1\]"),
        ([0.1, np.nan], "none", ValueError, "`p` must be finite"),
        ([True, False], "holm", TypeError, "`p` must hold numbers"),
        (["a"], "holm", TypeError, "`p` must hold numbers"),
        ("0.1", "holm", TypeError, "`p` must be an array"),
        ([0.1], "fdr", ValueError, "`method` must be one of"),
    ],
)
def test_validation(p, method, exc, match) -> None:
    with pytest.raises(exc, match=match):
        adjust_pvalues(p, method)


# --- the statsmodels oracle on harder inputs, and many families at once (``axis``) -----------

METHODS = sorted(SM_NAME)


def _statsmodels(p: np.ndarray, method: str) -> np.ndarray:
    # statsmodels' Holm calls gc.collect() every time (~0.1 s in a full test process); it does
    # not touch the values, so it is switched off here.  Šidák takes log1p(-1) for p = 1.
    with mock.patch.object(gc, "collect", lambda *args: 0), np.errstate(divide="ignore"):
        return multipletests(p, method=SM_NAME[method])[1]


def _cases() -> list:
    """(id, p): random, ties, exact 0/1, near-ties that the sort keys cannot tell apart."""
    rng = np.random.default_rng(20240611)
    cases = [("m=1", np.array([0.37])), ("m=1 zero", np.array([0.0])), ("m=1 one", np.array([1.0]))]
    for m in (2, 7, 64, 1225, 5000, 70_000):  # 70,000: past the factor cache
        cases.append((f"uniform**3 m={m}", rng.random(m) ** 3))
        cases.append((f"rounded ties m={m}", np.round(rng.random(m), 2)))
    p = rng.random(500) ** 2
    p[rng.integers(0, 500, 40)] = 0.0
    p[rng.integers(0, 500, 40)] = 1.0
    cases.append(("zeros and ones", p))
    cases.append(("all equal", np.full(300, 0.004)))
    cases.append(("all zero", np.zeros(50)))
    cases.append(("all one", np.ones(50)))
    cases.append(("signed zero", np.array([0.3, -0.0, 0.0, 0.01, -0.0])))
    # values that differ only in the lowest mantissa bits: a few (fixed by insertion) ...
    p = rng.random(1225)
    p[::97] = np.nextafter(p[1::97], 1.0)
    cases.append(("a few near-ties", p))
    # ... and all of them, in reverse order (past the insertion budget: full argsort)
    cases.append(("adversarial near-ties", 0.25 + np.arange(3000, 0, -1) * 2.0**-54))
    return [pytest.param(c[1], id=c[0]) for c in cases]


@pytest.mark.parametrize("p", _cases())
@pytest.mark.parametrize("method", METHODS)
def test_statsmodels_oracle(method: str, p: np.ndarray) -> None:
    ours = adjust_pvalues(p, method)
    ref = _statsmodels(p, method)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)
    assert ours.dtype == np.float64 and ours.shape == p.shape


@pytest.mark.parametrize("method", METHODS)
def test_ties_take_statsmodels_values(method: str) -> None:
    """Step-down (Holm): a tie group gets its smallest rank's value; step-up (BH...): its largest."""
    p = np.array([0.02, 0.01, 0.02, 0.03, 0.02, 0.01, 0.5])
    ours = adjust_pvalues(p, method)
    np.testing.assert_allclose(ours, _statsmodels(p, method), rtol=0, atol=1e-12)
    for v in np.unique(p):
        assert len(set(ours[p == v].tolist())) == 1  # equal p, equal adjusted p


@pytest.mark.parametrize("method", CORRECTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.uint8])
def test_other_dtypes(method: str, dtype) -> None:
    p = (np.array([0, 1, 0, 1, 1]) if dtype != np.float32 else np.array([0.01, 0.5, 0.03])).astype(dtype)
    np.testing.assert_array_equal(adjust_pvalues(p, method), adjust_pvalues(p.astype(np.float64), method))


def _loop(p: np.ndarray, method: str, axis: int) -> np.ndarray:
    """The reference for N-D input: one 1-D call per family along ``axis``."""
    return np.apply_along_axis(lambda f: adjust_pvalues(f, method), axis, p)


@pytest.mark.parametrize("method", CORRECTIONS)
@pytest.mark.parametrize("shape", [(6, 40), (3, 4, 25), (1, 1225), (50, 1)])
def test_axis_equals_loop_of_families(method: str, shape: tuple) -> None:
    rng = np.random.default_rng(sum(shape))
    p = np.round(rng.random(shape) ** 2, 3)  # ties within families
    p.flat[:: 7] = 0.0
    p.flat[3:: 11] = 1.0
    before = p.copy()
    for axis in range(-p.ndim, p.ndim):
        ours = adjust_pvalues(p, method, axis=axis)
        assert ours.shape == p.shape
        np.testing.assert_array_equal(ours, _loop(p, method, axis))
        if method != "none":  # every family against statsmodels too
            ref = np.apply_along_axis(lambda f: _statsmodels(f, method), axis, p)
            np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(p, before)  # input untouched


@pytest.mark.parametrize("method", CORRECTIONS)
def test_axis_none_is_one_family(method: str) -> None:
    p = np.random.default_rng(5).random((7, 9, 3)) ** 3
    ours = adjust_pvalues(p, method, axis=None)
    np.testing.assert_array_equal(ours, adjust_pvalues(p.ravel(), method).reshape(p.shape))
    one = adjust_pvalues([0.01, 0.04, 0.03], method, axis=None)
    np.testing.assert_array_equal(one, adjust_pvalues([0.01, 0.04, 0.03], method))


@pytest.mark.parametrize("method", ["holm", "bh", "holm-sidak", "sidak", "bonferroni"])
def test_non_contiguous_input(method: str) -> None:
    base = np.random.default_rng(9).random((30, 80)) ** 2
    for view in (base[:, ::3], base[::2], base[::-1, ::-2], np.asfortranarray(base), base.T):
        dense = np.ascontiguousarray(view)
        np.testing.assert_array_equal(adjust_pvalues(view, method), _loop(dense, method, -1))
        np.testing.assert_array_equal(adjust_pvalues(view, method, axis=0), _loop(dense, method, 0))


@pytest.mark.parametrize("method", CORRECTIONS)
def test_read_only_broadcast_and_big_endian_input(method: str) -> None:
    p = np.random.default_rng(4).random((3, 50))
    expected = _loop(p, method, -1)
    ro = p.copy()
    ro.setflags(write=False)
    np.testing.assert_array_equal(adjust_pvalues(ro, method), expected)
    np.testing.assert_array_equal(adjust_pvalues(p.astype(">f8"), method), expected)
    np.testing.assert_array_equal(adjust_pvalues(np.broadcast_to(p[0], (4, 50)), method)[3], expected[0])


@pytest.mark.parametrize(
    ("axis", "exc", "match"),
    [
        (2, ValueError, "`axis` 2 is out of bounds for `p` with 2 dimension"),
        (-3, ValueError, "`axis` -3 is out of bounds"),
        (1.0, TypeError, "`axis` must be an int or None, got float"),
        (True, TypeError, "`axis` must be an int or None, got bool"),
        ("0", TypeError, "`axis` must be an int or None, got str"),
        ((0, 1), TypeError, "`axis` must be an int or None, got tuple"),
    ],
)
def test_bad_axis(axis, exc, match) -> None:
    with pytest.raises(exc, match=match):
        adjust_pvalues(np.full((2, 3), 0.1), "holm", axis=axis)


def test_axis_is_keyword_only_and_accepts_numpy_ints() -> None:
    p = np.full((2, 3), 0.1)
    with pytest.raises(TypeError):
        adjust_pvalues(p, "holm", 0)  # type: ignore[misc]
    np.testing.assert_array_equal(adjust_pvalues(p, "holm", axis=np.int64(0)), adjust_pvalues(p, "holm", axis=0))


_P01 = st.one_of(st.floats(0, 1, allow_nan=False), st.sampled_from([0.0, 1.0, 0.05, 0.5]))


@settings(max_examples=150, deadline=None, derandomize=True)
@given(
    st.integers(1, 6).flatmap(lambda m: st.lists(st.lists(_P01, min_size=m, max_size=m), min_size=1, max_size=5)),
    st.sampled_from(METHODS),
    st.sampled_from([0, 1, -1]),
)
def test_hypothesis_families_match_statsmodels(rows: list[list[float]], method: str, axis: int) -> None:
    p = np.array(rows)
    ours = adjust_pvalues(p, method, axis=axis)
    ref = np.apply_along_axis(lambda f: _statsmodels(f, method), axis, p)
    np.testing.assert_allclose(ours, ref, rtol=0, atol=1e-12)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_threaded_rows_identical(monkeypatch, threads: int) -> None:
    """Big calls split the rows over threads: same values as one 1-D call per family."""
    import numba

    from ipcausal.stats import multitest as mt

    monkeypatch.setattr(mt, "PARALLEL_MIN_VALUES", 1)
    monkeypatch.setattr(numba, "get_num_threads", lambda: threads)
    rng = np.random.default_rng(threads)
    p = np.round(rng.random((7, 300)) ** 3, 4)
    for method in ("holm", "hochberg", "bh", "by", "holm-sidak"):
        np.testing.assert_array_equal(adjust_pvalues(p, method), _loop(p, method, -1))
        np.testing.assert_array_equal(adjust_pvalues(p.T, method, axis=0), _loop(p, method, -1).T)
    bad = p.copy()
    bad[6, 5] = np.nan  # in the last chunk
    with pytest.raises(ValueError, match="`p` must be finite"):
        adjust_pvalues(bad, "bh")
