"""assert_ip / assert_no_ip, the pytest plugin's fixtures, and importing without hypothesis."""

from __future__ import annotations

import subprocess
import sys

import pytest

import ipcausal
from ipcausal.study.results import Report
from ipcausal.testing import SimulatedModel, assert_ip, assert_no_ip
from ipcausal.testing.plugin import ipcausal_cache, simulated_model  # noqa: F401  (fixtures)


@pytest.fixture(scope="module")
def null_pairs():
    return SimulatedModel(effect=0.0, seed=21).study(n=30, rng=0)


@pytest.fixture(scope="module")
def ip_pairs():
    return SimulatedModel(effect=1.5, seed=22).study(n=30, rng=0)


def test_assert_no_ip_needs_a_margin_and_passes_only_when_shown(null_pairs):
    with pytest.raises(TypeError, match="margin"):
        assert_no_ip(null_pairs)  # a failure to reject is not evidence of no IP
    big = SimulatedModel(effect=0.0, noise=0.3, seed=21).study(n=300, rng=0)
    report = assert_no_ip(big, margin=0.2, rng=0)
    assert isinstance(report, Report) and not report.ip_detected
    assert all(g.equivalence.verdict == "equivalent" for g in report.groups)
    assert all(-0.2 < g.equivalence.ci_low and g.equivalence.ci_high < 0.2 for g in report.groups)


def test_assert_no_ip_on_three_pairs_is_inconclusive_and_says_how_many_are_needed():
    tiny = SimulatedModel(effect=0.0, seed=21).study(n=3, rng=0)
    with pytest.raises(AssertionError, match="inconclusive") as info:
        assert_no_ip(tiny, margin=0.2, rng=0)
    msg = str(info.value)
    assert "absence of evidence is not evidence of absence" in msg and "Needed by ipcausal.power" in msg
    assert "pairs (now 3)" in msg


def test_assert_no_ip_fails_with_the_report_as_message(ip_pairs):
    with pytest.raises(AssertionError, match="implicit personalization detected at alpha=0.05") as info:
        assert_no_ip(ip_pairs, margin=0.5, rng=0)
    msg = str(info.value)
    assert "american vs british" in msg and "ipcausal report" in msg and "H0: mean(Δ) = 0" in msg


def test_assert_ip(ip_pairs, null_pairs):
    assert assert_ip(ip_pairs, rng=0).ip_detected
    with pytest.raises(AssertionError, match="no implicit personalization detected") as info:
        assert_ip(null_pairs, rng=0)
    assert "ipcausal report" in str(info.value)


def test_reports_frames_and_files_are_accepted(ip_pairs, tmp_path):
    report = ipcausal.test(ip_pairs, rng=0)
    assert assert_ip(report) is report
    assert assert_ip(ip_pairs.to_frame(), rng=0).ip_detected
    path = ip_pairs.write(tmp_path / "pairs.jsonl")
    assert assert_ip(path, rng=0).ip_detected


def test_alpha_is_applied_to_the_adjusted_pvalues_of_a_report():
    sim = SimulatedModel(effect=0.35, seed=23, levels=7)
    pairs = next(
        ps for ps in (sim.study(n=40, rng=k) for k in range(50))
        if 0.001 < ipcausal.test(ps).groups[0].pvalue_adjusted < 0.04
    )
    report = ipcausal.test(pairs)
    assert_ip(report)
    with pytest.raises(AssertionError):
        assert_ip(pairs, alpha=0.001)
    with pytest.raises(ValueError, match="has no equivalence verdicts"):
        assert_no_ip(report, margin=1.0)


def test_similarity_outcomes_and_test_options():
    sim = SimulatedModel(effect=2.0, outcome="similarity", seed=24)
    pairs = sim.study(n=30, rng=1)
    assert_ip(pairs)
    with pytest.raises(ValueError, match="`margin` .* needs an interval outcome"):
        assert_no_ip(pairs, margin=0.1)


def test_bad_arguments(null_pairs):
    report = ipcausal.test(null_pairs, rng=0, margin=0.5)
    with pytest.raises(TypeError, match="`rng`"):
        assert_no_ip(report, margin=0.5, rng=0)
    with pytest.raises(ValueError, match="differs from the Report's margin"):
        assert_no_ip(report, margin=0.4)
    with pytest.raises(ValueError, match="`alpha`"):
        assert_no_ip(null_pairs, margin=0.5, alpha=1.5)
    with pytest.raises(ValueError, match="`margin` must be a positive finite"):
        assert_no_ip(null_pairs, margin=-1)
    with pytest.raises(ValueError, match="`alpha`"):
        assert_ip(report, alpha=0.0)
    with pytest.raises(TypeError, match="`pairs`"):
        assert_no_ip(42, margin=0.5)


def test_plugin_fixtures(simulated_model, ipcausal_cache):  # noqa: F811
    sim = simulated_model(effect=1.0, seed=3)
    assert isinstance(sim, SimulatedModel) and sim.effect == 1.0
    bare = sim.study(n=4, rng=0).drop_columns("y_i", "y_j", "score_i", "score_j", "model")
    ipcausal.run(bare, sim, cache=ipcausal_cache, progress=False)
    assert ipcausal_cache.exists()


def test_ipcausal_testing_imports_without_hypothesis():
    code = (
        "import sys; sys.modules['hypothesis'] = None\n"
        "import ipcausal.testing as t\n"
        "sim = t.SimulatedModel(effect=1.0)\n"
        "t.assert_ip(sim.study(n=20, rng=0))\n"
        "try:\n"
        "    t.strategies\n"
        "except ImportError:\n"
        "    print('strategies need hypothesis')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "strategies need hypothesis"
