"""Every option with a meaningful range is checked by argparse: one test per command.

Each bad value must end in exit status 2 with one line that names the option, before any
file is read, any model is loaded or any request is sent (the paths below do not exist).
"""

from __future__ import annotations

import pytest

from ipcausal.cli import COMMANDS, main

MISSING = "no-such-file.jsonl"

# command -> list of (argv, option named in the message)
BAD: dict[str, list[tuple[list[str], str]]] = {
    "build": [
        (["build", "essays", "--prompts", MISSING, "--n-errors", "0", "-o", "o.jsonl"], "--n-errors"),
        (["build", "farm", "--source", "nodir", "--limit", "-3", "-o", "o.jsonl"], "--limit"),
        (["build", "ambrqa", "--topics-per-domain", "0", "-o", "o.jsonl"], "--topics-per-domain"),
        (["build", "essays", "--prompts", MISSING, "--seed", "-1", "-o", "o.jsonl"], "--seed"),
    ],
    "run": [
        (["run", MISSING, "-o", "o.jsonl", "--temperature", "-0.5"], "--temperature"),
        (["run", MISSING, "-o", "o.jsonl", "--top-p", "0"], "--top-p"),
        (["run", MISSING, "-o", "o.jsonl", "--top-p", "1.5"], "--top-p"),
        (["run", MISSING, "-o", "o.jsonl", "--repeat-penalty", "0"], "--repeat-penalty"),
        (["run", MISSING, "-o", "o.jsonl", "--max-tokens", "0"], "--max-tokens"),
        (["run", MISSING, "-o", "o.jsonl", "--n", "0"], "--n"),
        (["run", MISSING, "-o", "o.jsonl", "--concurrency", "0"], "--concurrency"),
        (["run", MISSING, "-o", "o.jsonl", "--limit", "-1"], "--limit"),
        (["run", MISSING, "-o", "o.jsonl", "--timeout", "0"], "--timeout"),
        (["run", MISSING, "-o", "o.jsonl", "--retries", "-1"], "--retries"),
        (["run", MISSING, "-o", "o.jsonl", "--price-input", "-1", "--price-output", "1"], "--price-input"),
        (["run", MISSING, "-o", "o.jsonl", "--currency", ""], "--currency"),
        (["run", MISSING, "-o", "o.jsonl", "--temperature", "nan"], "--temperature"),
    ],
    "score": [
        (["score", MISSING, "--scorer", "scale", "--scale-points", "0", "-o", "o.jsonl"], "--scale-points"),
        (["score", MISSING, "--scorer", "judge", "--retries", "-2", "-o", "o.jsonl"], "--retries"),
    ],
    "test": [
        (["test", MISSING, "--m0", "5"], "--m0"),
        (["test", MISSING, "--m0", "0"], "--m0"),
        (["test", MISSING, "--alpha", "1"], "--alpha"),
        (["test", MISSING, "--resamples", "0"], "--resamples"),
        (["test", MISSING, "--seed", "-1"], "--seed"),
    ],
    "report": [
        (["report", MISSING, "-o", "r.html", "--m0", "1.5"], "--m0"),
        (["report", MISSING, "-o", "r.html", "--alpha", "0"], "--alpha"),
        (["report", MISSING, "-o", "r.html", "--title", " "], "--title"),
    ],
    "case": [
        (["case", "echo", "--limit", "0", "-o", "out"], "--limit"),
        (["case", "echo", "--max-tokens", "-8", "-o", "out"], "--max-tokens"),
        (["case", "echo", "--seed", "-1", "-o", "out"], "--seed"),
        (["case", "echo", "--backend", "simulated", "--effect", "big", "-o", "out"], "--effect"),
    ],
    "cases": [
        (["cases", "--format", "x"], "--format"),
    ],
    "bench": [
        (["bench", "no-such-bench.toml", "-o", "d", "--jobs", "0"], "--jobs"),
        (["bench", "no-such-bench.toml", "-o", "d", "--cost-limit", "-1"], "--cost-limit"),
    ],
    "demo": [
        (["demo", "--limit", "-1"], "--limit"),
        (["demo", "--seed", "x"], "--seed"),
    ],
    "reproduce": [
        (["reproduce", "--released", "nodir", "--cases", "culture,farm"], "--cases"),
        (["reproduce", "--released", "nodir", "--cases", ","], "--cases"),
        (["reproduce", "--released", "nodir", "--alpha", "2"], "--alpha"),
        (["reproduce", "--released", "nodir", "--resamples", "0"], "--resamples"),
    ],
    "power": [
        (["power", "--effect", "nan", "--n", "10"], "--effect"),
        (["power", "--effect", "0.3", "--n", "10", "--outcome", "similarity", "--m0", "5"], "--m0"),
        (["power", "--effect", "0.3", "--n", "0"], "--n"),
        (["power", "--effect", "0.3", "--power", "1"], "--power"),
        (["power", "--effect", "0.3", "--n", "10", "--sd", "0"], "--sd"),
        (["power", "--effect", "0.3", "--n", "10", "--tests", "0"], "--tests"),
    ],
    "probe": [
        (["probe", MISSING, "--confidence-level", "1"], "--confidence-level"),
        (["probe", MISSING, "--max-tokens", "0"], "--max-tokens"),
        (["probe", MISSING, "--seed", "-1"], "--seed"),
        (["probe", MISSING, "--concurrency", "0"], "--concurrency"),
        (["probe", MISSING, "--alternative", "up"], "--alternative"),
    ],
    "failures": [
        (["failures", MISSING, "--limit", "-1"], "--limit"),
    ],
    "audit": [
        (["audit", MISSING, "--scorer", "mcq", "-o", "d", "--alpha", "2"], "--alpha"),
        (["audit", MISSING, "--scorer", "mcq", "-o", "d", "--batch-size", "0"], "--batch-size"),
        (["audit", MISSING, "--scorer", "mcq", "-o", "d", "--seed", "-1"], "--seed"),
    ],
    "mitigate": [
        (["mitigate", MISSING, "--mitigation", "strip", "--scorer", "mcq", "-o", "d", "--margin", "0"], "--margin"),
        (["mitigate", MISSING, "--mitigation", "strip", "--scorer", "mcq", "-o", "d", "--alpha", "2"], "--alpha"),
        (["mitigate", MISSING, "--mitigation", "strip", "--scorer", "mcq", "-o", "d", "--max-tokens", "0"],
         "--max-tokens"),
    ],
    "export": [
        (["export", "validation", MISSING, "-o", "s.csv", "--seed", "-1"], "--seed"),
        (["export", "lm-eval", MISSING, "-o", "d", "--max-gen-toks", "0"], "--max-gen-toks"),
    ],
    "new_case": [
        (["new-case", "Bad Name", "-o", "d"], "NAME"),
    ],
    "check_case": [
        (["check-case", "age", "--placebo-runs", "0"], "--placebo-runs"),
        (["check-case", "age", "--seed", "-1"], "--seed"),
        (["check-case", "age", "--format", "xml"], "--format"),
        (["check-case", "age", "--read-pairs", "0"], "--read-pairs"),
        (["check-case", "age", "--backend", "nope"], "--backend"),
    ],
    "validate": [
        (["validate", "sample", MISSING, "-n", "0", "-o", "s.csv"], "-n"),
        (["validate", "sample", MISSING, "-n", "10", "--rng", "-1", "-o", "s.csv"], "--rng"),
    ],
    "import_": [
        (["import", "lm-eval", MISSING, "-o", "p.jsonl", "--metric", "acc", "--pair-field", "a",
          "--side-field", "b", "--text", "nope"], "--text"),
    ],
    "compare": [
        (["compare", "lm-eval", MISSING, MISSING, "--alpha", "2"], "--alpha"),
        (["compare", "lm-eval", MISSING, MISSING, "--confidence-level", "1"], "--confidence-level"),
    ],
}


def test_every_command_is_covered():
    assert set(BAD) == set(COMMANDS)


@pytest.mark.parametrize("command", sorted(BAD))
def test_bad_values_are_rejected_by_name(command, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for argv, option in BAD[command]:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err.strip()
        assert len(err.splitlines()) == 1, err
        assert err.startswith(f"ipcausal {command.rstrip('_').replace('_', '-')}") and ": error: argument " + option in err, (argv, err)
    assert list(tmp_path.iterdir()) == []  # nothing written, nothing created


def test_good_values_still_parse():
    from ipcausal.cli import build_parser

    p = build_parser()
    a = p.parse_args(["run", "x.jsonl", "-o", "y.jsonl", "--temperature", "0.7", "--top-p", "1", "--repeat-penalty",
                      "1.1", "--currency", "EUR"])
    assert (a.temperature, a.top_p, a.repeat_penalty, a.currency) == (0.7, 1.0, 1.1, "EUR")
    assert p.parse_args(["reproduce", "--released", "d", "--cases", "echo, culture,echo"]).cases == ("echo", "culture")
    assert p.parse_args(["reproduce", "--released", "d"]).cases == ("culture", "education", "echo")
    assert p.parse_args(["power", "--effect", "-0.2", "--n", "5"]).effect == -0.2
    assert p.parse_args(["test", "f", "--m0", "1"]).m0 == 1.0


def test_help_never_splits_a_flag_at_its_hyphen(capsys):
    assert main(["score", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--essay-rater judge" in out
    assert not any(line.strip().startswith("rater") for line in out.splitlines())


def test_warm_up_compiles_into_the_numba_cache(tmp_path):
    """`make install`'s warm-up step fills numba's cache (a fresh folder here) and exits 0."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path))
    out = subprocess.run([sys.executable, "-m", "ipcausal._warm"], capture_output=True, text=True, env=env,
                         timeout=900)
    assert out.returncode == 0, out.stderr
    assert "compiled the statistics kernels" in out.stderr
    cached = {p.name.split("-")[0] for p in tmp_path.rglob("*.nbi")}
    for kernel in ("exact.lattice_null", "exact.exact_enumeration_counts", "multitest.mt_stepwise"):
        assert kernel in cached, sorted(cached)


def test_cli_test_names_the_backgrounds_and_says_it_in_plain_words(tmp_path, capsys):
    from ipcausal import PairSet

    f = PairSet.from_records({"pair_id": k, "background_i": "SAE", "background_j": "ESL", "x_i": "a", "x_j": "b",
                              "score_i": 3.0, "score_j": float(k % 3)} for k in range(30)).write(tmp_path / "p.jsonl")
    assert main(["test", str(f)]) == 0
    out = capsys.readouterr().out
    assert "background_a" not in out and "background_b" not in out
    assert "Δ = score(ESL) − score(SAE)" in out
    assert "in plain words:\n  - responses to ESL prompts scored" in out and "evidence of implicit" in out
