"""The hypothesis strategies of ipcausal.testing, and properties of ipcausal.test checked with them."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ipcausal
from ipcausal import Design
from ipcausal.study.test import MonteCarloResolutionWarning
from ipcausal.testing import SimulatedModel
from ipcausal.testing.strategies import (
    continuous_differences,
    lattice_differences,
    marker_text_pairs,
    marker_texts,
    pairsets,
    sample,
    similarities,
)

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SIM = SimulatedModel()


def _test(ps, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", MonteCarloResolutionWarning)
        return ipcausal.test(ps, **kw)


def _pvalues(report):
    """Per unordered background pair: (pair, n) and (p, adjusted p, effect of b over a for a < b).

    A group is labelled in the orientation of its first pair, so the label and the sign of
    the effect follow the row order; the sorted pair and a signed effect do not.
    """
    out = []
    for g in report.groups:
        a, b = sorted((g.background_a, g.background_b))
        sign = 1.0 if (g.background_a, g.background_b) == (a, b) or report.outcome != "interval" else -1.0
        out.append(((a, b, g.n), (g.pvalue, g.pvalue_adjusted, sign * g.effect)))
    out.sort()
    return [k for k, _ in out], [x for _, v in out for x in v]


def _same(a, b):
    assert a[0] == b[0]
    assert a[1] == pytest.approx(b[1], rel=1e-9, abs=1e-12)


def _reordered(ps, perm):
    return ipcausal.PairSet.from_frame(ps.to_frame().iloc[perm])


def _swapped(ps):
    """Every pair written the other way round (i <-> j): the same data."""
    df = ps.to_frame()
    ren = {"background_i": "background_j", "background_j": "background_i", "x_i": "x_j", "x_j": "x_i"}
    if "score_i" in df:
        ren.update(score_i="score_j", score_j="score_i")
    return ipcausal.PairSet.from_frame(df.rename(columns=ren))


# -- the strategies generate valid objects ----------------------------------------------------
@SETTINGS
@given(pairsets(outcome="interval", min_size=2, max_size=6, backgrounds=("SAE", "AAE", "ESL")))
def test_pairsets_are_valid_and_cover_every_background_pair(ps):
    assert isinstance(ps, ipcausal.PairSet) and ps.outcome == "interval"
    df = ps.to_frame()
    groups = df.apply(lambda r: frozenset((r.background_i, r.background_j)), axis=1).value_counts()
    assert len(groups) == 3 and groups.min() >= 2 and groups.max() <= 6
    assert all(x.startswith(f"[{b}]") for x, b in zip(df.x_i, df.background_i))


@SETTINGS
@given(pairsets(outcome="similarity", max_size=10))
def test_similarity_pairsets_carry_culture_markers_of_their_background(ps):
    df = ps.to_frame()
    assert ((df.similarity >= 0) & (df.similarity <= 1)).all()
    for x, b in zip(df.x_i, df.background_i):
        assert SIM.detect(x) == b


@SETTINGS
@given(marker_text_pairs(min_markers=1, max_markers=4))
def test_marker_text_pairs_change_background_and_keep_semantics(pair):
    us, uk = pair
    assert us != uk
    assert SIM.detect(us) == "american" and SIM.detect(uk) == "british"
    assert SIM.semantics(us) == SIM.semantics(uk)


@SETTINGS
@given(marker_texts("british", min_markers=2, max_markers=2))
def test_marker_texts_of_one_variety(text):
    assert SIM.detect(text) == "british"


@SETTINGS
@given(similarities(min_size=3, max_size=20), lattice_differences(max_size=20), continuous_differences(max_size=20))
def test_arrays_have_their_documented_form(s, lat, cont):
    assert s.ndim == 1 and 3 <= s.size <= 20 and np.all((s >= 0) & (s <= 1))
    assert lat.ndim == 1 and lat.size >= 2 and np.all(np.isfinite(lat))
    assert np.array_equal(lat * 4, np.rint(lat * 4))  # multiples of a unit in (1, 0.5, 100, 0.25)
    assert ipcausal.permutation_test(lat, method="exact").pvalue > 0  # exact is feasible on the lattice
    assert cont.ndim == 1 and np.all(np.isfinite(cont)) and np.all(np.abs(cont) <= 1e3)


def test_sample_is_reproducible_and_outside_given():
    a = sample(marker_text_pairs(), 8, rng=5)
    assert len(a) == 8 and a == sample(marker_text_pairs(), 8, rng=5)
    assert a != sample(marker_text_pairs(), 8, rng=6)
    assert len(sample(st.just(1), 5)) >= 1


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda: pairsets(outcome="ordinal"), "`outcome`"),
        (lambda: pairsets(min_size=1), "`min_size`"),
        (lambda: pairsets(min_size=5, max_size=3), "`max_size`"),
        (lambda: pairsets(backgrounds=("a",)), "`backgrounds`"),
        (lambda: pairsets(backgrounds=("a", "a")), "`backgrounds`"),
        (lambda: pairsets(m0=1.5), "`m0`"),
        (lambda: similarities(min_size=0), "`min_size`"),
        (lambda: lattice_differences(units=(0.0,)), "`units`"),
        (lambda: continuous_differences(bound=-1.0), "`bound`"),
        (lambda: marker_texts("canadian"), "`background`"),
        (lambda: marker_text_pairs(max_markers=999), "`max_markers`"),
        (lambda: sample(st.just(1), 0), "`n`"),
    ],
)
def test_bad_arguments(call, match):
    with pytest.raises(ValueError, match=match):
        call()


def test_bad_types():
    with pytest.raises(TypeError, match="`backgrounds`"):
        pairsets(backgrounds="ab")
    with pytest.raises(TypeError, match="`strategy`"):
        sample([1, 2], 2)
    with pytest.raises(TypeError, match="`rng` must be None, a non-negative int"):
        sample(st.just(1), 2, rng=-1)


# -- properties of ipcausal.test, on generated data -------------------------------------------
@SETTINGS
@given(pairsets(outcome="interval", max_size=12, lattice=True, backgrounds=("a", "b", "c")), st.randoms())
def test_invariant_to_pair_order_interval(ps, rnd):
    perm = list(range(len(ps)))
    rnd.shuffle(perm)
    _same(_pvalues(_test(ps, method="exact")), _pvalues(_test(_reordered(ps, perm), method="exact")))


@SETTINGS
@given(pairsets(outcome="similarity", max_size=15, backgrounds=("a", "b", "c")), st.randoms())
def test_invariant_to_pair_order_similarity(ps, rnd):
    perm = list(range(len(ps)))
    rnd.shuffle(perm)
    _same(_pvalues(_test(ps)), _pvalues(_test(_reordered(ps, perm))))


@SETTINGS
@given(pairsets(outcome="interval", max_size=12, lattice=False))
def test_invariant_to_writing_pairs_the_other_way(ps):
    # swapping i and j in every row leaves the data unchanged: same report
    _same(_pvalues(_test(ps, method="exact")), _pvalues(_test(_swapped(ps), method="exact")))


@SETTINGS
@given(pairsets(outcome="interval", max_size=14), pairsets(outcome="similarity", max_size=14))
def test_pvalues_lie_in_the_unit_interval(p_int, p_sim):
    for rep in (_test(p_int, method="exact"), _test(p_sim)):
        for g in rep.groups:
            assert 0 < g.pvalue <= 1 and g.pvalue <= g.pvalue_adjusted <= 1


@SETTINGS
@given(pairsets(outcome="interval", max_size=14, lattice=True))
def test_sign_symmetry(ps):
    # negating every Δ (score_i <-> score_j) negates the effect and keeps the two-sided p
    df = ps.to_frame()
    flipped = ipcausal.PairSet.from_frame(df.rename(columns={"score_i": "score_j", "score_j": "score_i"}))
    (g,), (h,) = _test(ps, method="exact").groups, _test(flipped, method="exact").groups
    assert h.effect == pytest.approx(-g.effect, abs=1e-12)
    assert h.pvalue == pytest.approx(g.pvalue, rel=1e-9)
    # one-sided tests need a fixed direction (`order`) when pairs are stored both ways
    order = sorted(set(df["background_i"]) | set(df["background_j"]))
    one = _test(ps, method="exact", alternative="greater", design=Design(order=order)).groups[0].pvalue
    other = _test(flipped, method="exact", alternative="less", design=Design(order=order)).groups[0].pvalue
    assert one == pytest.approx(other, rel=1e-9)


@SETTINGS
@given(pairsets(outcome="interval", max_size=12, lattice=False), st.sampled_from([1e-6, 0.5, 3.0, 1e6]))
def test_scale_invariance(ps, c):
    df = ps.to_frame()
    scaled = ipcausal.PairSet.from_frame(df.assign(score_i=df.score_i * c, score_j=df.score_j * c))
    assert _test(scaled, method="exact").groups[0].pvalue == pytest.approx(
        _test(ps, method="exact").groups[0].pvalue, rel=1e-9
    )


@SETTINGS
@given(pairsets(outcome="similarity", max_size=14, backgrounds=("a", "b", "c")))
def test_bonferroni_multiplies_by_the_family_size(ps):
    for g in _test(ps, correction="bonferroni").groups:
        assert g.pvalue_adjusted == pytest.approx(min(1.0, 3 * g.pvalue))


@SETTINGS
@given(pairsets(outcome="similarity", max_size=14), st.data())
def test_sign_test_is_monotone_in_the_similarities(ps, data):
    # lowering one similarity can only make "median below m0" more credible
    df = ps.to_frame()
    k = data.draw(st.integers(0, len(df) - 1))
    lower = df.copy()
    lower.loc[k, "similarity"] = data.draw(st.floats(0.0, float(df.loc[k, "similarity"])))
    assert _test(ipcausal.PairSet.from_frame(lower)).groups[0].pvalue <= _test(ps).groups[0].pvalue + 1e-15
