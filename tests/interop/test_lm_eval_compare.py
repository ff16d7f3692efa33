"""``ipcausal compare lm-eval``: two lm-eval ``--log_samples`` outputs, paired by doc_id.

The samples files are written by lm-eval itself, offline: ``python -m lm_eval --model dummy``
(lm-eval's own test model, random log-likelihoods) on two small multiple-choice tasks of our
own, once with ``--seed 1`` ("model A") and once with ``--seed 2`` ("model B").  The exact
McNemar rows are checked against statsmodels' ``mcnemar(exact=True)`` and scipy's
``binomtest``; the adjustment against statsmodels' ``multipletests``.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from ipcausal.cli import main
from ipcausal.interop import compare_lm_eval

WORDS = ["lamp", "door", "river", "cloud", "stone", "field", "chair", "table", "apple", "road", "bird", "tree", "hill",
         "song", "book", "ship", "coin", "seed", "leaf", "cup", "star", "boat", "bell", "rope", "desk", "wall", "gate",
         "lake", "nest", "drum"]


def _task(root: Path, name: str, rows: list[dict]) -> None:
    data = root / f"{name}.jsonl"
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / f"{name}.yaml").write_text(
        f"task: {name}\ndataset_path: json\ndataset_kwargs:\n  data_files:\n    test: {json.dumps(str(data))}\n"
        "test_split: test\noutput_type: multiple_choice\ndoc_to_text: \"{{question}}\"\ndoc_to_choice: choices\n"
        "doc_to_target: answer\nmetric_list:\n  - metric: acc\n    aggregation: mean\n    higher_is_better: true\n"
        "  - metric: acc_norm\n    aggregation: mean\n    higher_is_better: true\n")


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """lm-eval's own samples files: the dummy model with seed 1 (A) and seed 2 (B), offline."""
    pytest.importorskip("lm_eval", reason="needs lm-eval (pip install lm-eval), a dev dependency")
    tmp = tmp_path_factory.mktemp("compare")
    tasks = tmp / "tasks"
    tasks.mkdir()
    pairs = [(k, (k * 7) % 23) for k in range(1, 61)]
    _task(tasks, "ipc_larger", [{"question": f"Which is larger, {a} or {b}?", "choices": [str(a), str(b)],
                                 "answer": int(b > a)} for a, b in pairs if a != b])
    _task(tasks, "ipc_plural", [{"question": f"The plural of '{w}' is", "choices": [w + "s", w + "es", w + "en"],
                                 "answer": 0} for w in WORDS])
    env = dict(os.environ, HF_DATASETS_OFFLINE="1", HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1",
               HF_HOME=str(tmp / "hf"), XDG_CACHE_HOME=str(tmp / "cache"), TOKENIZERS_PARALLELISM="false")
    outs = []
    for seed in (1, 2):
        out = tmp / f"out{seed}"
        proc = subprocess.run([sys.executable, "-m", "lm_eval", "--model", "dummy", "--include_path", str(tasks),
                               "--tasks", "ipc_larger,ipc_plural", "--log_samples", "--output_path", str(out),
                               "--seed", str(seed)], env=env, capture_output=True, text=True, timeout=400, cwd=tmp)
        assert proc.returncode == 0, proc.stderr[-4000:]
        outs.append(out)
    return outs[0], outs[1]


def _rows(folder: Path, task: str) -> dict[int, dict]:
    (path,) = folder.rglob(f"samples_{task}_*.jsonl")
    return {r["doc_id"]: r for r in map(json.loads, path.read_text().splitlines())}


def test_exact_mcnemar_per_task_and_metric_matches_statsmodels(runs: tuple[Path, Path]) -> None:
    from scipy.stats import binomtest
    from statsmodels.stats.contingency_tables import mcnemar
    from statsmodels.stats.multitest import multipletests

    a, b = runs
    res = compare_lm_eval(a, b)
    assert [(r["task"], r["metric"]) for r in res.rows] == [("ipc_larger", "acc"), ("ipc_larger", "acc_norm"),
                                                            ("ipc_plural", "acc"), ("ipc_plural", "acc_norm")]
    for r in res.rows:
        ra, rb = _rows(a, r["task"]), _rows(b, r["task"])
        assert r["n"] == len(ra) == len(rb)
        xa = np.array([ra[d][r["metric"]] for d in sorted(ra)])
        xb = np.array([rb[d][r["metric"]] for d in sorted(ra)])
        table = [[np.sum((xa == 1) & (xb == 1)), np.sum((xa == 1) & (xb == 0))],
                 [np.sum((xa == 0) & (xb == 1)), np.sum((xa == 0) & (xb == 0))]]
        assert (r["a_better"], r["b_better"]) == (table[0][1], table[1][0])
        assert r["method"] == "exact-mcnemar" and r["statistic"] == pytest.approx(xb.mean() - xa.mean())
        assert r["pvalue"] == pytest.approx(mcnemar(table, exact=True).pvalue, rel=1e-12)
        k, m = table[1][0], table[0][1] + table[1][0]
        assert r["pvalue"] == pytest.approx(binomtest(k, m, 0.5).pvalue, rel=1e-12)
        assert r["ci_low"] <= r["statistic"] <= r["ci_high"] and -1 <= r["ci_low"] and r["ci_high"] <= 1
    want = multipletests([r["pvalue"] for r in res.rows], method="holm")[1]
    assert [r["pvalue_adjusted"] for r in res.rows] == pytest.approx(list(want))
    assert res.missing == {} and res.skipped == ()
    assert [r["reject"] for r in res.rows] == [bool(p <= 0.05) for p in want]
    same = compare_lm_eval(a, a)  # a model against itself: no discordant document, p = 1
    assert all(r["pvalue"] == 1.0 and r["statistic"] == 0.0 for r in same.rows)


def test_missing_and_mismatched_documents_are_named(runs: tuple[Path, Path], tmp_path: Path) -> None:
    a, b = runs
    (src,) = b.rglob("samples_ipc_plural_*.jsonl")
    lines = [json.loads(x) for x in src.read_text().splitlines()]
    lines = [x for x in lines if x["doc_id"] != 4]
    lines[0]["doc_hash"] = "0" * 64  # doc 0: the same id, another document
    cut = tmp_path / src.name
    cut.write_text("".join(json.dumps(x) + "\n" for x in lines))
    (larger,) = b.rglob("samples_ipc_larger_*.jsonl")
    with pytest.raises(ValueError, match=r"ipc_plural: doc_id 4 only in A; doc_id 0 differ \(doc_hash\); pass "
                                         r"`allow_missing`"):
        compare_lm_eval(a, [larger, cut])
    res = compare_lm_eval(a, [larger, cut], allow_missing=True)
    assert res.missing == {"ipc_plural": {"only_a": [4], "only_b": [], "mismatched": [0]}}
    plural = [r for r in res.rows if r["task"] == "ipc_plural"]
    assert all(r["n"] == len(WORDS) - 2 and r["n_missing"] == 1 and r["n_mismatched"] == 1 for r in plural)
    with pytest.raises(ValueError, match=r"tasks must be the same in both: ipc_plural \(filter none\) only in A"):
        compare_lm_eval(a, larger)


def test_cli_prints_and_writes_the_table(runs: tuple[Path, Path], tmp_path: Path,
                                         capsys: pytest.CaptureFixture[str]) -> None:
    a, b = runs
    out = tmp_path / "table.csv"
    assert main(["compare", "lm-eval", str(a), str(b), "-o", str(out), "--correction", "bonferroni"]) == 0
    text = capsys.readouterr().out
    assert "ipc_larger" in text and "bonferroni over 4 rows" in text
    import pandas as pd

    table = pd.read_csv(out)
    want = compare_lm_eval(a, b, correction="bonferroni").to_frame()
    assert list(table["pvalue_adjusted"]) == pytest.approx(list(want["pvalue_adjusted"]))
    assert main(["compare", "lm-eval", str(a), str(b), "--metric", "acc", "--json"]) == 0
    assert [r["metric"] for r in json.loads(capsys.readouterr().out)["rows"]] == ["acc", "acc"]
    assert main(["compare", "lm-eval", str(a), str(b), "--correction", "tukey"]) == 2
    assert "`correction` must be one of" in capsys.readouterr().err
    assert main(["compare", "lm-eval", str(a), str(tmp_path / "nope")]) == 2
    assert "`b`: no such file or folder" in capsys.readouterr().err
    assert main(["compare"]) == 2
    assert "choose what to compare" in capsys.readouterr().err


def _write(path: Path, values: list[float], metric: str = "score") -> Path:
    path.write_text("".join(json.dumps({"doc_id": k, "doc": {"q": k}, "metrics": [metric], metric: v}) + "\n"
                            for k, v in enumerate(values)))
    return path


def test_a_graded_metric_gets_the_exact_sign_flip_test(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    va = np.round(rng.uniform(0, 1, 12), 2)
    vb = np.round(np.clip(va + rng.normal(0.15, 0.2, 12), 0, 1), 2)
    res = compare_lm_eval(_write(tmp_path / "samples_essay_2026-01-01T00-00-00.jsonl", list(va)),
                          _write(tmp_path / "samples_essay_2026-01-02T00-00-00.jsonl", list(vb)))
    (row,) = res.rows
    d = vb - va
    brute = np.mean([abs(np.dot(s, d)) >= abs(d.sum()) - 1e-9 for s in itertools.product((1, -1), repeat=12)])
    assert row["method"].startswith("exact") and row["method"] != "exact-mcnemar"
    assert row["pvalue"] == pytest.approx(brute, rel=1e-12) and row["pvalue_adjusted"] == row["pvalue"]


def test_errors_name_the_parameter(tmp_path: Path) -> None:
    f = _write(tmp_path / "samples_t_2026-01-01T00-00-00.jsonl", [0, 1, 1])
    with pytest.raises(ValueError, match=r"`alpha` must"):
        compare_lm_eval(f, f, alpha=2)
    with pytest.raises(TypeError, match=r"`a` must be a samples file"):
        compare_lm_eval([], f)
    with pytest.raises(TypeError, match=r"`metrics` must be a sequence of metric names"):
        compare_lm_eval(f, f, metrics="score")
    with pytest.raises(ValueError, match=r"`metrics`: \['acc'\] not found"):
        compare_lm_eval(f, f, metrics=["acc"])
    with pytest.raises(ValueError, match=r"`b`: no samples_\*.jsonl under"):
        compare_lm_eval(f, tmp_path / "empty" if (tmp_path / "empty").mkdir() is None else f)
    twice = tmp_path / "samples_u_2026-01-01T00-00-00.jsonl"
    twice.write_text(f.read_text() + f.read_text().splitlines()[0] + "\n")
    with pytest.raises(ValueError, match=r"`a`: doc_id 0 of task 'u' \(filter 'none'\) appears twice"):
        compare_lm_eval(twice, twice)
    bad = tmp_path / "samples_v_2026-01-01T00-00-00.jsonl"
    bad.write_text(json.dumps({"doc_id": 0, "metrics": ["bleu"], "bleu": [["ref"], ["pred"]]}) + "\n"
                   + json.dumps({"doc_id": 1, "metrics": ["bleu"], "bleu": [["ref"], ["pred"]]}) + "\n")
    with pytest.raises(ValueError, match=r"no metric could be compared: v/bleu: not one finite number per document"):
        compare_lm_eval(bad, bad)
