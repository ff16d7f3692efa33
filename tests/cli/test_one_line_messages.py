"""One clear line for each mistake (issue 32 item 6): misspelt options, warnings, a resample count
that cannot fit in memory, an unset key variable, plurals.

Each test runs the command a user would and asserts the exact line.  The warning test runs the CLI
in a subprocess, since pytest records warnings in-process and a user's terminal does not.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import ipcausal
from ipcausal._words import count
from ipcausal.cli import main


def _pairs(path: Path, n: int = 12, **extra: object) -> Path:
    rows = [{"pair_id": f"p{k}", "background_i": "US", "background_j": "UK", "x_i": f"q{k}", "x_j": f"q{k}'",
             "score_i": 1, "score_j": 1 + (k % 3 == 0), **{c: (v(k) if callable(v) else v) for c, v in extra.items()}}
            for k in range(n)]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_misspelt_option_and_command_get_the_close_match(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = _pairs(tmp_path / "p.jsonl")
    assert main(["test", str(src), "--corection", "holm"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "ipcausal: error: unrecognized arguments: --corection holm; --corection: did you mean " \
                  "--correction? (see ipcausal --help)"
    assert main(["test", str(src), "--resampels=99"]) == 2
    assert "--resampels: did you mean --resamples?" in capsys.readouterr().err
    assert main(["tset", str(src)]) == 2
    assert "invalid choice: 'tset'" in (err := capsys.readouterr().err) and "did you mean 'test'?" in err
    assert main(["compare", "inspct", "a", "b"]) == 2
    assert "did you mean 'inspect'?" in capsys.readouterr().err
    assert main(["test", str(src), "--zzzz"]) == 2  # nothing close: no guess
    assert "did you mean" not in capsys.readouterr().err


def test_a_warning_is_one_line_without_the_source_line(tmp_path: Path) -> None:
    src = _pairs(tmp_path / "p.jsonl", prompt_id=lambda k: f"q{k // 2}")  # two pairs per prompt, no --cluster
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(Path(ipcausal.__file__).parents[1]),
                                                       os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-m", "ipcausal.cli", "test", str(src)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines == ["ipcausal test: warning: pairs within a group share an id, but no `cluster` was given, so they "
                     "are tested as independent (pass cluster=COLUMN to flip whole clusters): US vs UK ((model not "
                     "given)): `prompt_id` (ClusterWarning)"]


def test_a_resample_count_that_cannot_fit_is_refused_up_front(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    from ipcausal.stats import permutation_test

    x = np.random.default_rng(0).normal(size=300)
    with pytest.raises(ValueError, match=r"`n_resamples` \(--resamples\) = 10,000,000,000,000 does not fit in "
                                         r"memory: the Monte Carlo sign-flip law needs about [\d,.]+ GiB \(48 bytes "
                                         r"per resample\) and [\d,.]+ [GM]iB is available; at most [\d,]+ fit"):
        permutation_test(x, method="monte-carlo", n_resamples=10**13)
    src = tmp_path / "big.jsonl"
    src.write_text("".join(json.dumps({"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": "a",
                                       "x_j": "b", "score_i": 0.0, "score_j": float(v)}) + "\n"
                           for k, v in enumerate(x)))
    assert main(["test", str(src), "--resamples", str(10**13), "--method", "monte-carlo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("ipcausal test: error: `n_resamples` (--resamples) = 10,000,000,000,000 does not fit")
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    most = int(err.rsplit("at most ", 1)[1].split()[0].replace(",", ""))
    assert 10**6 < most < 10**13  # the largest count that fits is named, and it is a usable number


def test_an_unset_key_variable_stops_before_any_request(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    from ipcausal.backends.openai_backend import OpenAIBackend

    monkeypatch.delenv("IPCAUSAL_NOPE_KEY", raising=False)
    with pytest.raises(ValueError, match=r"`api_key_env`: \$IPCAUSAL_NOPE_KEY is not set \(export it before the run"):
        OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", api_key_env="IPCAUSAL_NOPE_KEY")
    src = _pairs(tmp_path / "p.jsonl")
    # port 9 answers nothing: had a request (or the preflight) gone out, the error would be "cannot reach"
    assert main(["run", str(src), "--backend", "openai", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--api-key-env", "IPCAUSAL_NOPE_KEY", "-o", str(tmp_path / "out.jsonl"), "--no-progress"]) == 2
    err = capsys.readouterr().err
    assert err.strip() == "ipcausal run: error: `api_key_env`: $IPCAUSAL_NOPE_KEY is not set (export it before the " \
                          "run; the key is never read from a file)"
    # the default variable may stay unset for a server that needs no key
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert OpenAIBackend("m", base_url="http://127.0.0.1:9/v1", check_model=False).model == "m"


def test_plurals(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (count(1, "new request"), count(2, "new request"), count(0, "pair")) == \
        ("1 new request", "2 new requests", "0 pairs")
    one = tmp_path / "one.jsonl"
    one.write_text(json.dumps({"pair_id": "a", "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q2",
                               "y_i": "Answer: 4", "y_j": "Answer: 5"}) + "\n")
    assert main(["score", str(one), "--scorer", "scale", "--scale-points", "5", "-o", str(tmp_path / "s.jsonl")]) == 0
    assert "scored 1 of 1 pair with scale" in capsys.readouterr().err
