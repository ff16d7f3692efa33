"""lm-evaluation-harness for real: export a PairSet as a local task, run ``lm_eval --log_samples``
against ``python -m llama_cpp.server`` (local-completions, offline), import the samples, test them.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ipcausal
from ipcausal.cli import main
from ipcausal.interop import export_lm_eval, import_lm_eval
from ipcausal.pairs import PairSet

ITEMS = [("Q: What color is snow?\nA:", "Q: What colour is snow?\nA:", "white"),
         ("Q: What color is coal?\nA:", "Q: What colour is coal?\nA:", "black"),
         ("Q: What color is grass?\nA:", "Q: What colour is grass?\nA:", "green")]


def _pairs() -> PairSet:
    return PairSet.from_records([{"pair_id": f"c{k}", "background_i": "us", "background_j": "uk", "x_i": a,
                                  "x_j": b, "target": t, "topic": "colour"} for k, (a, b, t) in enumerate(ITEMS)])


@pytest.fixture(scope="module")
def samples_file(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Path:
    """``lm_eval --log_samples`` on our exported task, against a real local server (the session's), offline."""
    pytest.importorskip("lm_eval", reason="needs lm-eval (pip install lm-eval), a dev dependency")
    url = request.getfixturevalue("llama_server")
    tmp = tmp_path_factory.mktemp("lm_eval")
    export_lm_eval(_pairs(), tmp / "task", task="colours", max_gen_toks=6)
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_HOME=str(tmp / "hf"), XDG_CACHE_HOME=str(tmp / "cache"), NO_PROXY="127.0.0.1,localhost",
               no_proxy="127.0.0.1,localhost", TOKENIZERS_PARALLELISM="false")
    args = [sys.executable, "-m", "lm_eval", "--model", "local-completions", "--model_args",
            f"model=smollm2,base_url={url}/completions,tokenizer_backend=None,tokenized_requests=False",
            "--include_path", str(tmp / "task"), "--tasks", "colours", "--log_samples",
            "--output_path", str(tmp / "out")]
    proc = subprocess.run(args, env=env, capture_output=True, text=True, timeout=400, cwd=tmp)
    assert proc.returncode == 0, proc.stderr[-4000:]
    (found,) = sorted((tmp / "out").rglob("samples_colours_*.jsonl"))
    return found


def test_export_writes_a_task_folder(tmp_path: Path) -> None:
    yaml = export_lm_eval(_pairs(), tmp_path / "task", task="colours", max_gen_toks=5)
    rows = [json.loads(x) for x in (tmp_path / "task" / "colours.jsonl").read_text().splitlines()]
    assert [(r["pair_id"], r["side"], r["background"]) for r in rows[:2]] == [("c0", "i", "us"), ("c0", "j", "uk")]
    assert rows[1] == {"pair_id": "c0", "side": "j", "background": "uk", "input": ITEMS[0][1], "target": "white",
                       "topic": "colour"}
    text = yaml.read_text()
    assert "task: colours" in text and "dataset_path: json" in text and "max_gen_toks: 5" in text
    assert "metric: exact_match" in text and str((tmp_path / "task" / "colours.jsonl").resolve()) in text
    bare = export_lm_eval(_pairs().drop_columns("target"), tmp_path / "bare", task="bare")
    assert "metric: bypass" in bare.read_text()
    with pytest.raises(ValueError, match=r"`task` must be a name of letters"):
        export_lm_eval(_pairs(), tmp_path / "t", task="no spaces")
    with pytest.raises(ValueError, match=r"`max_gen_toks` must be a positive integer"):
        export_lm_eval(_pairs(), tmp_path / "t", max_gen_toks=0)
    with pytest.raises(ValueError, match=r"column\(s\) \['side'\] would clash"):
        export_lm_eval(_pairs().with_columns(side="x"), tmp_path / "t")
    (tmp_path / "file").write_text("")
    with pytest.raises(ValueError, match=r"`out` must be a folder"):
        export_lm_eval(_pairs(), tmp_path / "file")


def test_real_samples_file_pairs_back_and_tests(samples_file: Path) -> None:
    rows = [json.loads(x) for x in samples_file.read_text().splitlines()]
    assert len(rows) == 6 and all("exact_match" in r and r["doc"]["topic"] == "colour" for r in rows)
    res = import_lm_eval(samples_file, metric="exact_match")
    ps = res.pairs
    assert len(ps) == 3 and res.n_samples == 6 and list(ps["pair_id"]) == ["c0", "c1", "c2"]
    assert list(ps["x_i"]) == [a for a, _, _ in ITEMS] and list(ps["x_j"]) == [b for _, b, _ in ITEMS]
    assert set(ps["model"]) == {"smollm2"}  # from the results_*.json lm-eval wrote beside the samples
    want = {(r["doc"]["pair_id"], r["doc"]["side"]): r for r in rows}
    for rec in ps.records():
        for side in "ij":
            row = want[(rec["pair_id"], side)]
            assert rec[f"score_{side}"] == row["exact_match"]
            assert rec[f"y_{side}"] == row["filtered_resps"][0]
    assert set(ps["topic"]) == {"colour"} and list(ps["target"]) == [t for _, _, t in ITEMS]
    report = ipcausal.test(ps)
    assert len(report.groups) == 1 and 0.0 < report.groups[0].pvalue <= 1.0
    raw = import_lm_eval([samples_file], text_field="resps").pairs
    assert "score_i" not in raw and list(raw["y_i"]) == [want[(p, "i")]["resps"][0][0] for p in ("c0", "c1", "c2")]
    with pytest.raises(ValueError, match=r"`metric`: .* has no metric 'acc'; metrics there: \['exact_match'\]"):
        import_lm_eval(samples_file, metric="acc")


def test_missing_rows_are_named_and_dropped_on_request(samples_file: Path, tmp_path: Path) -> None:
    lines = samples_file.read_text().splitlines()
    cut = tmp_path / samples_file.name
    cut.write_text("\n".join(x for x in lines if json.loads(x)["doc_id"] != 3) + "\n")
    with pytest.raises(ValueError, match=r"1 row\(s\) have no partner side: '.*#2'"):
        import_lm_eval(cut, metric="exact_match")
    res = import_lm_eval(cut, metric="exact_match", allow_missing=True, model="named")
    assert list(res.pairs["pair_id"]) == ["c0", "c2"] and len(res.unpaired) == 1
    assert set(res.pairs["model"]) == {"named"}


def _write_samples(path: Path, docs: list[dict], metric: str = "acc") -> Path:
    with open(path, "w", encoding="utf-8") as fh:
        for k, doc in enumerate(docs):
            fh.write(json.dumps({"doc_id": k, "doc": doc, "arguments": {"gen_args_0": {"arg_0": doc["q"]}},
                                 "resps": [[f"answer {k}"]], "filtered_resps": [f"answer {k}"], "metrics": [metric],
                                 metric: float(k % 2)}) + "\n")
    return path


def test_one_row_per_background_and_nested_fields(tmp_path: Path) -> None:
    docs = [{"meta": {"prompt": f"e{p}", "style": s}, "q": f"prompt {p} in {s}"}
            for p in range(3) for s in ("sae", "aae", "esl")]
    path = _write_samples(tmp_path / "samples_essays_2026.jsonl", docs)
    res = import_lm_eval(path, metric="acc", pair_field="meta.prompt", side_field="meta.style", sides=None)
    ps = res.pairs
    assert len(ps) == 9 and res.n_samples == 9  # C(3, 2) background pairs per prompt
    assert sorted(ps["pair_id"])[:3] == ["e0:aae-esl", "e0:aae-sae", "e0:esl-sae"]
    row = ps.to_frame().set_index("pair_id").loc["e1:aae-sae"]
    assert (row["background_i"], row["background_j"], row["x_i"], row["source_id"]) == \
        ("aae", "sae", "prompt 1 in aae", "e1")
    out = tmp_path / "essays.jsonl"
    assert main(["import", "lm-eval", str(path), "-o", str(out), "--metric", "acc", "--pair-field", "meta.prompt",
                 "--side-field", "meta.style", "--sides", "all"]) == 0
    assert PairSet.read(out) == ps
    assert main(["import", "lm-eval", str(path), "-o", str(out), "--pair-field", "meta.prompt", "--side-field",
                 "meta.style", "--sides", "sae,aae", "--allow-missing"]) == 2  # an esl row is neither side
    with pytest.raises(ValueError, match=r"side 'sae' is not one of \['i', 'j'\]"):
        import_lm_eval(path, pair_field="meta.prompt", side_field="meta.style")
    with pytest.raises(ValueError, match=r"the doc has no field 'pair_id'"):
        import_lm_eval(path)
    (tmp_path / "bad.jsonl").write_text('{"x": 1}\n')
    with pytest.raises(ValueError, match=r"bad.jsonl:1: no `doc` object"):
        import_lm_eval(tmp_path / "bad.jsonl")
    with pytest.raises(ValueError, match=r"`text_field` must be one of"):
        import_lm_eval(path, text_field="text")
    with pytest.raises(TypeError, match=r"`samples` must be a path"):
        import_lm_eval([])
    with pytest.raises(ValueError, match=r"`samples`: no such file"):
        import_lm_eval(tmp_path / "nope.jsonl")


def test_cli_export_run_import_test(samples_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _pairs().write(tmp_path / "pairs.jsonl")
    assert main(["export", "lm-eval", str(src), "-o", str(tmp_path / "task"), "--task", "colours"]) == 0
    assert (tmp_path / "task" / "colours.yaml").is_file()
    copy = tmp_path / samples_file.name
    shutil.copy(samples_file, copy)
    out = tmp_path / "scored.jsonl"
    capsys.readouterr()
    assert main(["import", "lm-eval", str(copy), "-o", str(out), "--metric", "exact_match",
                 "--pair-field", "pair_id", "--side-field", "side"]) == 0
    assert "6 samples -> 3 pairs" in capsys.readouterr().err
    assert main(["test", str(out), "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["groups"][0]["n"] == 3
    assert main(["import", "lm-eval", str(copy), "-o", str(out), "--sides", "i"]) == 2
    assert "--sides must be two different labels" in capsys.readouterr().err
