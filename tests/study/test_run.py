"""The run stage (library and CLI): responses, failures per pair, cache resume, kill -9 resume."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ipcausal
from _helpers_backends import EchoBackend
from ipcausal.backends import GenerationConfig
from ipcausal.backends.cache import ResponseCache
from ipcausal.cli import main
from ipcausal.pairs import PairSet
from ipcausal.study.run import RunSummary, summarize


def _pairs(n: int, fail: set[int] = frozenset(), prefix: str = "Q") -> PairSet:
    return PairSet.from_records(
        {"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": f"{prefix}{k} color",
         "x_j": f"{prefix}{k} colour" + (" FAIL" if k in fail else "")}
        for k in range(n)
    )


def _write_jsonl(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def test_run_fills_responses_and_records_failures_per_pair() -> None:
    b = EchoBackend()
    out = ipcausal.run(_pairs(4, fail={2}), b, progress=False)
    assert isinstance(out, PairSet) and len(out) == 4
    rec = out.records()
    assert rec[0]["y_i"] == "echo:Q0 color" and rec[0]["y_j"] == "echo:Q0 colour"
    assert rec[2]["y_j"] is None and rec[2]["error_j"] == "refused: FAIL"
    assert rec[2]["y_i"] == "echo:Q2 color" and rec[2]["error_i"] is None
    assert rec[0]["model"] == "echo-1" and rec[0]["model_id"] == "echo-1" and rec[0]["fingerprint"] == "fp-1"
    assert rec[0]["prompt_tokens_i"] == 2 and rec[0]["completion_tokens_i"] == 2 and rec[0]["cached_i"] is False
    s = summarize(out, price_input=1.0, price_output=10.0)
    assert isinstance(s, RunSummary)
    assert (s.requested, s.completed, s.from_cache, s.failed) == (8, 7, 0, 1)
    assert s.failures[0].pair_id == "2" and s.failures[0].side == "j"
    assert s.reasons == {"refused: FAIL": 1} and not s.complete
    assert s.cost == pytest.approx((s.new_prompt_tokens * 1.0 + s.new_completion_tokens * 10.0) / 1e6)
    text = s.format()
    assert "failed 1" in text and "INCOMPLETE" in text and "refused: FAIL" in text
    assert s.to_dict()["failures"][0]["side"] == "j"


def test_shared_prompts_are_asked_once_and_samples_column() -> None:
    ps = PairSet.from_records(
        [{"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": "same", "x_j": f"other {k}"} for k in range(3)]
    )
    b = EchoBackend()
    out = ipcausal.run(ps, b, config=GenerationConfig(n=2), system="Be brief.", progress=False)
    assert b.asked["same"] == 1 and b.total_asked == 4
    assert out.records()[1]["samples_i"] == ["echo:same#0", "echo:same#1"]
    assert out.records()[1]["y_i"] == "echo:same#0"


def test_cache_resume_asks_only_for_what_is_missing(tmp_path) -> None:  # type: ignore[no-untyped-def]
    cache = tmp_path / "c.sqlite"
    first = ipcausal.run(_pairs(5, fail={1, 3}), EchoBackend(), cache=cache, progress=False)
    assert summarize(first).failed == 2
    fixed = EchoBackend(fail_word=None)
    again = ipcausal.run(_pairs(5, fail={1, 3}), fixed, cache=cache, progress=False)
    s = summarize(again)
    assert s.complete and s.from_cache == 8 and fixed.total_asked == 2
    assert s.new_completion_tokens == 4 and s.completion_tokens == 20
    with ResponseCache(cache) as c:
        assert len(c) == 10


@pytest.mark.parametrize(
    ("call", "exc", "match"),
    [
        (lambda b: ipcausal.run(_pairs(0), b), ValueError, r"`pairs` is empty"),
        (lambda b: ipcausal.run([{"x_i": "a"}], b), TypeError, r"`pairs` must be a PairSet"),  # type: ignore[arg-type]
        (lambda b: ipcausal.run(_pairs(1), object()), TypeError, r"`backend` must implement"),  # type: ignore[arg-type]
        (lambda b: ipcausal.run(_pairs(1), b, config={"n": 1}), TypeError, r"`config` must be a GenerationConfig"),
        (lambda b: ipcausal.run(_pairs(1), b, concurrency=0), ValueError, r"`concurrency` must be a positive integer"),
        (lambda b: ipcausal.run(_pairs(1), b, batch_size=0), ValueError, r"`batch_size` must be a positive integer"),
        (lambda b: ipcausal.run(_pairs(1), b, system=" "), ValueError, r"`system` must be a non-empty string"),
        (lambda b: ipcausal.run(_pairs(1), b, cache=3), TypeError, r"`cache` must be a path, a ResponseCache or None"),
        (lambda b: ipcausal.run(_pairs(1), b, progress="yes"), TypeError, r"`progress` must be True, False"),
        (lambda b: summarize(_pairs(1), price_input=-1), ValueError, r"`price_input` must be a non-negative number"),
        (lambda b: summarize("x"), TypeError, r"`pairs` must be a PairSet"),  # type: ignore[arg-type]
    ],
)
def test_run_validation(call, exc, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(exc, match=match):
        call(EchoBackend())


def test_pairs_without_prompt_text_are_rejected() -> None:
    ps = PairSet.from_records([{"pair_id": 1, "background_i": "US", "background_j": "UK", "x_i": "a", "x_j": "  "}])
    with pytest.raises(ValueError, match=r"`pairs`: column `x_j` has empty prompts .* row\(s\) 0"):
        ipcausal.run(ps, EchoBackend(), progress=False)


def test_run_with_the_real_local_model_and_progress_bar(capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("llama_cpp")
    backend = ipcausal.get_backend("local")
    out = ipcausal.run(_pairs(2), backend, config=GenerationConfig(max_tokens=4))
    backend.close()
    s = summarize(out)
    assert s.complete and s.completed == 4 and s.completion_tokens <= 16
    assert all(isinstance(v, str) for v in out["y_i"]) and "ipcausal run" in capsys.readouterr().err


# -- the command line --------------------------------------------------------------------------


def test_cli_run_then_rerun_from_cache(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("llama_cpp")
    src = _pairs(2).write(tmp_path / "pairs.jsonl")
    out = tmp_path / "out.jsonl"
    argv = ["run", str(src), "--backend", "local", "--max-tokens", "2", "--out", str(out), "--no-progress"]
    assert main(argv) == 0
    err = capsys.readouterr().err
    assert "requested 4, completed 4, from cache 0, failed 0" in err
    assert (tmp_path / "out.jsonl.cache.sqlite").is_file()
    assert main(argv) == 0
    assert "requested 4, completed 4, from cache 4, failed 0" in capsys.readouterr().err
    rows = PairSet.read(out).records()
    assert all(r["cached_i"] and r["cached_j"] for r in rows)
    assert main([*argv[:-1], "--no-cache", "--out", str(tmp_path / "o2.csv")]) == 0
    assert "from cache 0" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("extra", "rows", "match"),
    [
        (["--model", "/nonexistent/model.gguf"], None, r"`model`: no GGUF file"),
        (["--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m"], None, r"cannot reach the server"),
        (["--base-url", "http://127.0.0.1:9/v1"], None, r"--base-url is only for --backend openai"),
        (["--backend", "vllm"], None, r"--backend vllm needs --model"),
        ([], [], r"holds no pairs"),
        ([], [{"pair_id": 1, "background_i": "US", "background_j": "UK", "x_i": "a"}], r"missing required column\(s\) `x_j`"),
        ([], [{"pair_id": 1, "background_i": "US", "background_j": "UK", "x_i": "", "x_j": "b"}], r"`x_i` has empty prompts"),
        (["--max-tokens", "0"], None, r"argument --max-tokens: must be a positive integer, got 0"),
        (["--cache", "c.sqlite", "--no-cache"], None, r"--cache and --no-cache exclude each other"),
        (["--price-input", "1"], None, r"give both --price-input and --price-output"),
        (["--concurrency", "0"], None, r"argument --concurrency: must be a positive integer, got 0"),
        (["--seed", "-1"], None, r"argument --seed: must be a non-negative integer, got -1"),
    ],
)
def test_cli_errors_are_one_line(tmp_path, capsys, extra, rows, match) -> None:  # type: ignore[no-untyped-def]
    src = tmp_path / "pairs.jsonl"
    if rows is None:
        _pairs(1).write(src)
    else:
        _write_jsonl(src, rows)
    code = main(["run", str(src), "--out", str(tmp_path / "o.jsonl"), "--no-progress", *extra])
    err = capsys.readouterr().err
    assert code == 2
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    import re

    assert re.search(match, err), err


def test_cli_rejects_unknown_backend_and_output_type(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    src = _pairs(1).write(tmp_path / "p.jsonl")
    assert main(["run", str(src), "--backend", "gpt", "--out", str(tmp_path / "o.jsonl")]) == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'gpt'" in err and len(err.strip().splitlines()) == 1
    assert main(["run", str(src), "--out", str(tmp_path / "o.txt")]) == 2
    assert "--out: unknown file type '.txt'" in capsys.readouterr().err


def _count_rows(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=5) as con:
            return int(con.execute("SELECT COUNT(*) FROM samples").fetchone()[0])
    except sqlite3.OperationalError:
        return 0


def test_kill_9_then_resume_asks_only_for_the_rest(tmp_path) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("llama_cpp")
    n = 8
    src = _pairs(n, prefix="Tell me about item ").write(tmp_path / "pairs.jsonl")
    out, db = tmp_path / "out.jsonl", tmp_path / "out.jsonl.cache.sqlite"
    argv = [sys.executable, "-m", "ipcausal.cli", "run", str(src), "--max-tokens", "2", "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 240
        while _count_rows(db) < 4:
            assert proc.poll() is None, "the run finished before it could be killed"
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.05)
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.wait()
    assert proc.returncode == -signal.SIGKILL and not out.exists()
    stored = _count_rows(db)
    assert 4 <= stored < 2 * n
    done = subprocess.run(argv, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    assert f"requested {2 * n}, completed {2 * n}, from cache {stored}, failed 0" in done.stderr
    rows = PairSet.read(out).records()
    assert sum(r["cached_i"] + r["cached_j"] for r in rows) == stored
    assert _count_rows(db) == 2 * n
