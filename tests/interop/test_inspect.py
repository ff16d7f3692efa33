"""inspect_ai round trip for real: export a PairSet, run ``inspect_ai.eval`` against a local
``python -m llama_cpp.server`` through inspect's OpenAI-compatible provider, import the log, test it.

The eval runs in a subprocess whose data, cache and log folders are inside ``tmp_path`` and whose
environment says offline (inspect's ``mockllm`` is not used: it fetches a tiktoken encoding).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'ipcausal[interop]'")
pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]: pip install 'ipcausal[local]'")

import ipcausal  # noqa: E402
from ipcausal.cli import main  # noqa: E402
from ipcausal.interop import export_inspect, import_inspect  # noqa: E402
from ipcausal.pairs import PairSet  # noqa: E402

EVAL_SCRIPT = """
import sys
from inspect_ai import Task, eval
from inspect_ai.dataset import json_dataset
from inspect_ai.scorer import Score, includes, mean, scorer
from inspect_ai.solver import generate

@scorer(metrics=[mean()])
def words():
    async def score(state, target):
        return Score(value=len(state.output.completion.split()))
    return score

task = Task(dataset=json_dataset(sys.argv[1]), solver=[generate()], scorer=[includes(), words()])
logs = eval(task, model="openai-api/local/smollm2", max_tokens=6, temperature=0.8, seed=11, epochs=2,
            log_dir=sys.argv[2], log_format="eval", display="none")
print(logs[0].status, logs[0].location)
"""

QUESTIONS = [("What color is snow? One word.", "What colour is snow? One word.", "white"),
             ("What color is grass? One word.", "What colour is grass? One word.", "green"),
             ("What color is the sky? One word.", "What colour is the sky? One word.", "blue")]


def _pairs() -> PairSet:
    return PairSet.from_records([{"pair_id": f"c{k}", "background_i": "us", "background_j": "uk", "x_i": a, "x_j": b,
                                  "target": t, "domain": "colour"} for k, (a, b, t) in enumerate(QUESTIONS)])


def _offline_env(tmp: Path, url: str) -> dict[str, str]:
    env = dict(os.environ)
    env.update(LOCAL_BASE_URL=url, LOCAL_API_KEY="none", HF_HUB_OFFLINE="1", HF_DATASETS_OFFLINE="1",
               TRANSFORMERS_OFFLINE="1", TIKTOKEN_CACHE_DIR=str(tmp / "tiktoken"), XDG_DATA_HOME=str(tmp / "data"),
               XDG_CACHE_HOME=str(tmp / "cache"), XDG_CONFIG_HOME=str(tmp / "config"),
               INSPECT_LOG_DIR=str(tmp / "logs"), INSPECT_DISPLAY="none", NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost", PYTHONPATH=os.pathsep.join([str(Path(ipcausal.__file__).parents[1]),
                                                                          env.get("PYTHONPATH", "")]))
    return env


@pytest.fixture(autouse=True)
def _inspect_dirs_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """inspect keeps data and a cache under the user's folders: point them into the test's temp dir."""
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg-data"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg-cache"))


@pytest.fixture(scope="module")
def eval_log(tmp_path_factory: pytest.TempPathFactory, llama_server: str) -> Path:
    """One real inspect eval (3 pairs x 2 sides x 2 epochs, 6 tokens each) on the exported dataset."""
    tmp = tmp_path_factory.mktemp("inspect")
    dataset = export_inspect(_pairs(), tmp / "dataset.jsonl")
    (tmp / "run_eval.py").write_text(EVAL_SCRIPT)
    proc = subprocess.run([sys.executable, str(tmp / "run_eval.py"), str(dataset), str(tmp / "logs")],
                          env=_offline_env(tmp, llama_server), capture_output=True, text=True, timeout=300, cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-3000:]
    status, location = proc.stdout.split()[-2:]
    assert status == "success", proc.stdout + proc.stderr[-3000:]
    return Path(location)


def test_exported_dataset_is_what_inspect_reads(tmp_path: Path) -> None:
    from inspect_ai.dataset import json_dataset

    path = export_inspect(_pairs(), tmp_path / "dataset.jsonl")
    samples = list(json_dataset(str(path)))
    assert [s.id for s in samples] == ["c0:i", "c0:j", "c1:i", "c1:j", "c2:i", "c2:j"]
    assert samples[1].input == QUESTIONS[0][1] and samples[1].target == "white"
    assert samples[1].metadata == {"pair_id": "c0", "side": "j", "background": "uk", "pair": {"domain": "colour"}}
    # no `target` column: no target; an explicit one is taken from the column named
    bare = export_inspect(_pairs().drop_columns("target"), tmp_path / "bare.jsonl")
    assert all(s.target == "" for s in json_dataset(str(bare)))
    numbered = export_inspect(_pairs().with_columns(option=[2.0, 1.0, float("nan")]), tmp_path / "n.jsonl",
                              target="option")
    assert [s.target for s in json_dataset(str(numbered))] == ["2", "2", "1", "1", "", ""]
    named = export_inspect(_pairs(), tmp_path / "named.jsonl", target="domain")
    assert {s.target for s in json_dataset(str(named))} == {"colour"}
    with pytest.raises(ValueError, match=r"`target`: the pairs have no column 'answer'"):
        export_inspect(_pairs(), tmp_path / "x.jsonl", target="answer")
    with pytest.raises(ValueError, match=r"`out`: an inspect dataset is written as JSON Lines"):
        export_inspect(_pairs(), tmp_path / "x.csv")


def test_real_eval_log_pairs_back_and_tests(eval_log: Path) -> None:
    res = import_inspect(eval_log, scorer="words")
    ps = res.pairs
    assert len(ps) == 3 and res.n_samples == 6 and res.unpaired == ()
    assert list(ps["pair_id"]) == ["c0", "c1", "c2"]
    assert list(ps["x_j"]) == [q[1] for q in QUESTIONS] and set(ps["background_j"]) == {"uk"}
    assert set(ps["model"]) == {"openai-api/local/smollm2"} and set(ps["domain"]) == {"colour"}
    from inspect_ai.log import read_eval_log

    log = read_eval_log(str(eval_log))
    by_id: dict[tuple[str, int], object] = {(str(s.id), s.epoch): s for s in log.samples}
    for rec in ps.records():
        for side in "ij":
            first, second = by_id[(f"{rec['pair_id']}:{side}", 1)], by_id[(f"{rec['pair_id']}:{side}", 2)]
            assert rec[f"y_{side}"] == first.output.completion  # type: ignore[attr-defined]
            assert rec[f"samples_{side}"] == [first.output.completion, second.output.completion]  # type: ignore
            want = (first.scores["words"].value + second.scores["words"].value) / 2  # type: ignore[attr-defined]
            assert rec[f"score_{side}"] == pytest.approx(want)
    report = ipcausal.test(ps)
    assert len(report.groups) == 1 and 0.0 < report.groups[0].pvalue <= 1.0
    # inspect's own C/I values become 1/0
    inc = import_inspect([eval_log], scorer="includes").pairs
    assert set(inc["score_i"]) | set(inc["score_j"]) <= {0.0, 0.5, 1.0}
    # without a scorer: texts only, for `ipcausal score`
    texts = import_inspect(eval_log).pairs
    assert "score_i" not in texts and texts["y_i"].notna().all()
    with pytest.raises(ValueError, match=r"`scorer`: .* has no score 'accuracy'; scores there: \['includes', 'words'\]"):
        import_inspect(eval_log, scorer="accuracy")


def test_missing_side_names_the_sample_without_partner(eval_log: Path, tmp_path: Path) -> None:
    from inspect_ai.log import read_eval_log, write_eval_log

    log = read_eval_log(str(eval_log))
    log.samples = [s for s in log.samples if s.id != "c1:j"]
    broken = tmp_path / "missing.eval"
    write_eval_log(log, str(broken))
    with pytest.raises(ValueError, match=r"1 sample\(s\) have no partner side: 'c1:i'; pass `allow_missing`"):
        import_inspect(broken, scorer="words")
    res = import_inspect(broken, scorer="words", allow_missing=True)
    assert list(res.pairs["pair_id"]) == ["c0", "c2"] and res.unpaired == ("c1:i",)
    # a sample that failed in inspect is left out, and the message says so
    from inspect_ai._util.error import EvalError

    log = read_eval_log(str(eval_log))
    for s in log.samples:
        if s.id == "c2:i":  # both epochs
            s.error = EvalError(message="the model went away", traceback="", traceback_ansi="")
    failed = tmp_path / "failed.eval"
    write_eval_log(log, str(failed))
    with pytest.raises(ValueError, match=r"have no partner side: 'c2:j' \(1 sample\(s\) failed in the harness and "
                       r"were left out: 'c2:i'\)"):
        import_inspect(failed)
    # the same sample twice (one log read twice) is named too
    with pytest.raises(ValueError, match=r"samples 'c0:i' and 'c0:i' are both side 'i' of pair 'c0'"):
        import_inspect([eval_log, eval_log])


def test_cli_import_then_test(eval_log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "pairs.jsonl"
    assert main(["import", "inspect", str(eval_log), "-o", str(out), "--scorer", "words"]) == 0
    assert "6 samples -> 3 pairs" in capsys.readouterr().err
    assert main(["test", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["groups"][0]["n"] == 3
    assert main(["import", "inspect", str(tmp_path / "nope.eval"), "-o", str(out)]) == 2
    assert "`logs`: no such file" in capsys.readouterr().err
    (tmp_path / "junk.eval").write_text("not a log")
    assert main(["import", "inspect", str(tmp_path / "junk.eval"), "-o", str(out)]) == 2
    assert "is not an inspect eval log" in capsys.readouterr().err


def test_cli_export_inspect(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _pairs().write(tmp_path / "pairs.jsonl")
    assert main(["export", "inspect", str(src), "-o", str(tmp_path / "ds.jsonl")]) == 0
    assert "wrote 6 samples" in capsys.readouterr().err
    lines = [json.loads(x) for x in (tmp_path / "ds.jsonl").read_text().splitlines()]
    assert lines[0] == {"id": "c0:i", "input": QUESTIONS[0][0], "target": "white",
                        "metadata": {"pair_id": "c0", "side": "i", "background": "us", "pair": {"domain": "colour"}}}


def test_import_validates_arguments(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match=r"`logs` must be a path or a non-empty sequence"):
        import_inspect([])
    with pytest.raises(TypeError, match=r"`scorer` must be a scorer name or None"):
        import_inspect(tmp_path / "x.eval", scorer=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`side_field` must be a non-empty metadata key"):
        import_inspect(tmp_path / "x.eval", side_field="")
    with pytest.raises(ValueError, match=r"`sides` must be two different labels"):
        from ipcausal.interop._common import assemble

        assemble([], sides=("i", "i"))


STOP_SCRIPT = """
import json, sys
from inspect_ai import eval
from ipcausal import PairSet
from ipcausal.interop.inspect import IPEarlyStopping, ip_task

es = IPEarlyStopping(alpha=0.05)
task = ip_task(PairSet.read(sys.argv[1]), early_stopping=es)  # the echo pairs: the mcq scorer, bound 1
logs = eval(task, model="openai-api/local/smollm2", max_tokens=4, temperature=0.0, seed=3, max_samples=2,
            log_dir=sys.argv[2], log_format="eval", display="none")
print(json.dumps({"status": logs[0].status, "location": logs[0].location, "summary": es.summary}))
"""


def test_real_eval_with_early_stopping_and_the_ip_metric(tmp_path: Path, llama_server: str) -> None:
    """inspect_ai.eval against llama_cpp.server with IPEarlyStopping and ip_test: the log's metric is
    ipcausal.test on the pairs imported from that log."""
    from inspect_ai.log import read_eval_log

    from ipcausal.builders import demo_pairs

    pairs = demo_pairs("echo", limit=4).write(tmp_path / "echo.jsonl")
    (tmp_path / "run_stop.py").write_text(STOP_SCRIPT)
    proc = subprocess.run([sys.executable, str(tmp_path / "run_stop.py"), str(pairs), str(tmp_path / "logs")],
                          env=_offline_env(tmp_path, llama_server), capture_output=True, text=True, timeout=400,
                          cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout.splitlines()[-1])
    assert out["status"] == "success", proc.stderr[-3000:]
    summary = out["summary"]
    assert summary["samples_total"] == 8 and summary["groups"][0]["group"] == "true_belief vs false_belief"
    log = read_eval_log(out["location"])
    assert log.results.early_stopping.manager == "ipcausal"
    assert dict(log.results.early_stopping.metadata) == summary
    assert len(log.samples) == summary["samples_run"]
    ps = import_inspect(out["location"], scorer="mcq_choice", allow_missing=True).pairs
    want = ipcausal.test(ps, correction="holm", rng=0)
    m = log.results.scores[0].metrics
    g = want.groups[0]
    assert m["pairs"].value == len(ps) == 4 and m["effect"].value == pytest.approx(g.effect)
    assert m["p_adjusted"].value == pytest.approx(g.pvalue_adjusted) and m["reject"].value == float(g.reject)
    assert m["mean"].value == pytest.approx((ps["score_i"].sum() + ps["score_j"].sum()) / 8)
