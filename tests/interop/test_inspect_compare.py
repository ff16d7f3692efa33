"""``ipcausal compare inspect``: two real inspect_ai eval logs, paired by (id, epoch).

The logs are written by inspect itself, offline: ``inspect_ai.eval`` of one IP task (16 pairs,
32 samples) with two ``ipcausal/simulated`` models — effect 0 ("A") and effect 1.5 ("B"), the
same seed — and two scorers, the graded ``answer_number`` (1..5) and a 0/1 scorer of our own
(``C`` when the answer is at least 4).  The 0/1 row is checked against scipy's ``binomtest`` on
the discordant samples (exact McNemar), the graded row and the clustered row against a
brute-force enumeration of every sign vector, and the adjustment against statsmodels.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'ipcausal[interop]'")

from ipcausal.cli import main  # noqa: E402
from ipcausal.interop import import_inspect  # noqa: E402
from ipcausal.interop.inspect import compare_logs  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Two real eval logs: ipcausal/simulated with effect 0 (A) and effect 1.5 (B) on one task."""
    import inspect_ai
    import inspect_ai.model
    from inspect_ai.scorer import Score, Target, mean, scorer
    from inspect_ai.solver import TaskState, generate

    import ipcausal.interop.inspect_model  # noqa: F401  (registers the provider)
    from ipcausal.interop.inspect import answer_number, ip_task
    from ipcausal.testing import SimulatedModel

    @scorer(metrics=[mean()])
    def high():  # type: ignore[no-untyped-def]
        async def score(state: TaskState, target: Target) -> Score:
            text = state.output.completion
            return Score(value="C" if text.startswith(("Answer: 4", "Answer: 5")) else "I")
        return score

    tmp = tmp_path_factory.mktemp("inspect-compare")
    mp = pytest.MonkeyPatch()
    mp.setenv("XDG_DATA_HOME", str(tmp / "xdg-data"))
    mp.setenv("XDG_CACHE_HOME", str(tmp / "xdg-cache"))
    try:
        pairs = SimulatedModel(effect=1.5, levels=5, seed=2).study(n=16, rng=2).drop_columns(
            "y_i", "y_j", "score_i", "score_j", "model")
        dataset = ip_task(pairs, scorer="answer").dataset  # the IP layout: one sample per side of a pair
        task = inspect_ai.Task(dataset=dataset, solver=generate(), scorer=[answer_number(), high()],
                               name="ipcausal_pairs")
        models = [inspect_ai.model.get_model("ipcausal/simulated", effect=e, levels=5, seed=2, memoize=False)
                  for e in (0.0, 1.5)]
        out = inspect_ai.eval(task, model=models, display="none", log_dir=str(tmp / "logs"), log_format="eval")
    finally:
        mp.undo()
    assert [log.status for log in out] == ["success", "success"]
    by_effect = {log.eval.model_args["effect"]: Path(log.location) for log in out}
    return by_effect[0.0], by_effect[1.5]


def _scores(path: Path, scorer: str) -> dict[tuple[str, int], float]:
    from inspect_ai.log import read_eval_log
    from inspect_ai.scorer import value_to_float

    conv = value_to_float()
    return {(str(s.id), s.epoch): float(conv(s.scores[scorer].value)) for s in read_eval_log(str(path)).samples}


def _brute_force(v: np.ndarray) -> float:
    """Two-sided sign-flip p by enumerating every sign vector of the non-zero values."""
    v = v[v != 0]
    obs = abs(v.sum())
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=v.size)))
    return float(np.mean(np.abs(signs @ v) >= obs - 1e-9))


def test_binary_row_is_exact_mcnemar_and_graded_row_the_exact_sign_flip(logs: tuple[Path, Path]) -> None:
    from scipy.stats import binomtest
    from statsmodels.stats.multitest import multipletests

    a, b = logs
    res = compare_logs(a, b)
    assert [(r["task"], r["scorer"]) for r in res.rows] == [("ipcausal_pairs", "answer_number"),
                                                            ("ipcausal_pairs", "high")]
    assert res.missing == {} and res.skipped == ()
    for r in res.rows:
        sa, sb = _scores(a, r["scorer"]), _scores(b, r["scorer"])
        assert sorted(sa) == sorted(sb) and r["n"] == len(sa) == 32 and r["unit"] == "sample"
        d = np.array([sb[k] - sa[k] for k in sorted(sa)])
        assert r["statistic"] == pytest.approx(d.mean()) and r["ci_low"] <= r["statistic"] <= r["ci_high"]
        assert (r["b_better"], r["a_better"]) == ((d > 0).sum(), (d < 0).sum())
        assert r["model_a"] == "ipcausal/simulated (effect=0.0, levels=5, seed=2)"
        assert r["model_b"] == "ipcausal/simulated (effect=1.5, levels=5, seed=2)"
        if r["scorer"] == "high":
            assert r["method"] == "exact-mcnemar" and set(d) <= {-1.0, 0.0, 1.0}
            k, m = int((d > 0).sum()), int((d != 0).sum())
            assert m >= 3, "the 0/1 scorer must have discordant samples for the check to mean something"
            assert r["pvalue"] == pytest.approx(binomtest(k, m, 0.5).pvalue, rel=1e-12)
        else:
            assert r["method"].startswith("exact") and len(set(d)) > 2  # graded: not a 0/1 difference
            assert r["pvalue"] == pytest.approx(_brute_force(d), rel=1e-12)
    want = multipletests([r["pvalue"] for r in res.rows], method="holm")[1]
    assert [r["pvalue_adjusted"] for r in res.rows] == pytest.approx(list(want))
    assert [r["reject"] for r in res.rows] == [bool(p <= 0.05) for p in want]
    same = compare_logs(a, a)  # a model against itself: every difference 0, p = 1
    assert all(r["pvalue"] == 1.0 and r["statistic"] == 0.0 for r in same.rows)


def test_cluster_flips_a_pairs_two_samples_together(logs: tuple[Path, Path]) -> None:
    a, b = logs
    res = compare_logs(a, b, scorers=["answer_number"], cluster="pair_id")
    (r,) = res.rows
    sa, sb = _scores(a, "answer_number"), _scores(b, "answer_number")
    sums: dict[str, float] = {}
    for (sid, _), x in sa.items():
        sums[sid.rsplit(":", 1)[0]] = sums.get(sid.rsplit(":", 1)[0], 0.0) + sb[(sid, 1)] - x
    assert r["unit"] == "cluster (pair_id)" and r["n_units"] == 16 and r["n"] == 32
    assert r["pvalue"] == pytest.approx(_brute_force(np.array(list(sums.values()))), rel=1e-12)
    with pytest.raises(ValueError, match=r"`cluster`: sample '.*' of task 'ipcausal_pairs' has no metadata 'prompt'"):
        compare_logs(a, b, cluster="prompt")


def test_missing_changed_and_errored_samples_are_named(logs: tuple[Path, Path], tmp_path: Path) -> None:
    from inspect_ai._util.error import EvalError
    from inspect_ai.log import read_eval_log, write_eval_log

    a, b = logs
    log = read_eval_log(str(b))
    gone, changed, failed = log.samples[0].id, log.samples[1].id, log.samples[2].id
    log.samples = log.samples[1:]
    log.samples[0].input = "another question"
    log.samples[1].error = EvalError(message="the model went away", traceback="", traceback_ansi="")
    cut = tmp_path / "cut.eval"
    write_eval_log(log, str(cut))
    with pytest.raises(ValueError, match=rf"samples do not match \(id@epoch\): ipcausal_pairs: sample '{gone}@1' "
                                         rf"only in A; sample '{changed}@1' differ \(input or target\); sample "
                                         rf"'{failed}@1' errored in B; pass `allow_missing`"):
        compare_logs(a, cut)
    res = compare_logs(a, cut, allow_missing=True)
    assert res.missing == {"ipcausal_pairs": {"only_a": [[gone, 1]], "mismatched": [[changed, 1]],
                                              "errored_b": [[failed, 1]]}}
    assert all(r["n"] == 29 and r["n_missing"] == 3 and r["n_mismatched"] == 1 for r in res.rows)
    with pytest.raises(ValueError, match=r"`scorers`: \['accuracy'\] not found in the logs"):
        compare_logs(a, b, scorers=["accuracy"])
    with pytest.raises(TypeError, match=r"`a` must be an inspect eval log, a folder of them"):
        compare_logs([], b)
    with pytest.raises(ValueError, match=r"`b`: no such file or folder"):
        compare_logs(a, tmp_path / "nope.eval")


def test_cli_compare_inspect_prints_and_writes_the_table(logs: tuple[Path, Path], tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    a, b = logs
    out = tmp_path / "table.jsonl"
    assert main(["compare", "inspect", str(a), str(b), "-o", str(out)]) == 0
    text = capsys.readouterr().out
    assert "answer_number" in text and "high" in text
    assert "A = ipcausal/simulated (effect=0.0, levels=5, seed=2); B = ipcausal/simulated (effect=1.5" in text
    assert "paired by (id, epoch); unit of randomisation: sample; holm over 2 rows" in text
    rows = [json.loads(x) for x in out.read_text().splitlines()]
    assert [r["scorer"] for r in rows] == ["answer_number", "high"]
    assert main(["compare", "inspect", str(a), str(a.parent), "--scorer", "nope"]) == 2
    assert "`b`: task 'ipcausal_pairs' was run by two models" in capsys.readouterr().err


def test_import_inspect_names_each_run(logs: tuple[Path, Path], tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    a, b = logs
    with pytest.raises(ValueError, match=r"`model`: .* are both 'ipcausal/simulated' but with different model "
                                         r"arguments .* --model NAME once per LOG"):
        import_inspect([a, b], scorer="answer_number")
    ps = import_inspect([a, b], scorer="answer_number", model=["flat", "personalizes"]).pairs
    assert sorted(set(ps["model"])) == ["flat", "personalizes"] and len(ps) == 32
    one = import_inspect(a, scorer="answer_number", model="flat").pairs
    assert set(one["model"]) == {"flat"}
    with pytest.raises(ValueError, match=r"`model` names 3 model\(s\) for 2 log\(s\)"):
        import_inspect([a, b], model=["x", "y", "z"])
    out = tmp_path / "pairs.jsonl"
    assert main(["import", "inspect", str(a), str(b), "--scorer", "answer_number", "--model", "flat",
                 "--model", "personalizes", "-o", str(out)]) == 0
    assert "64 samples -> 32 pairs" in capsys.readouterr().err
    assert main(["import", "inspect", str(a), str(b), "--model", "x", "--model", "y", "--model", "z",
                 "-o", str(out)]) == 2
    assert "--model: give one name for every LOG or one per LOG (2), got 3" in capsys.readouterr().err
