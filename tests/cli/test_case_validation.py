"""`ipcausal case` / `run_case` check everything before the first request (issue 13, item 4).

The backend is the SCM simulator (a real Backend) wrapped to count the requests it is sent:
every validation error below must leave the count at zero.
"""

from __future__ import annotations

import json

import pytest

import ipcausal.commands.case as case_cmd
from ipcausal import PairSet
from ipcausal.cli import main
from ipcausal.study.cases import prepare_case, run_case
from ipcausal.testing import SimulatedModel


class Counting:
    """Any backend, counting the requests it receives."""

    def __init__(self, inner):
        self.inner, self.kind, self.model, self.sent = inner, inner.kind, inner.model, 0

    def generate(self, requests):
        self.sent += len(requests)
        return self.inner.generate(requests)


@pytest.fixture
def backend():
    return Counting(SimulatedModel(effect=0.5, seed=1, backgrounds=("true_belief", "false_belief")))


def _echo_without_options(tmp_path):
    rows = [{"pair_id": k, "background_i": "true_belief", "background_j": "false_belief",
             "x_i": f"I think {k} is even. Is it?", "x_j": f"I think {k} is odd. Is it?"} for k in range(4)]
    return PairSet.from_records(rows).write(tmp_path / "echo.jsonl")


def test_missing_scorer_column_fails_before_any_request(backend, tmp_path):
    src = _echo_without_options(tmp_path)
    with pytest.raises(ValueError, match="scorer 'mcq' needs the column `options`"):
        run_case(prepare_case("echo", src), backend, out=tmp_path / "out", progress=False)
    assert backend.sent == 0
    assert not (tmp_path / "out").exists()  # nothing created either


@pytest.mark.parametrize("kwargs, match", [
    ({"scorer": "judge"}, "`backend` is required for scorer 'judge'"),
    ({"scorer": "nope"}, "`scorer` must be one of"),
    ({"unparseable": "drop"}, "`unparseable` must be one of"),
    ({"limit": 0}, "`limit` must be a positive integer"),
    ({"seed": -1}, "`seed` must be a non-negative integer"),
    ({"pairs": "no-such-file.jsonl"}, "no-such-file"),
])
def test_other_validation_errors_send_nothing(backend, tmp_path, kwargs, match):
    with pytest.raises((ValueError, TypeError, FileNotFoundError), match=match):
        run_case(prepare_case("culture", **kwargs), backend, out=tmp_path / "out", progress=False)
    assert backend.sent == 0


def test_out_that_is_a_file_fails_before_any_request(backend, tmp_path):
    f = tmp_path / "taken"
    f.write_text("x")
    with pytest.raises(ValueError, match="`out` must be a folder"):
        run_case(prepare_case("echo", limit=2), backend, out=f, progress=False)
    assert backend.sent == 0


def test_valid_case_does_send(backend, tmp_path):
    res = run_case(prepare_case("echo", limit=3, unparseable="zero"), backend, out=tmp_path / "out", progress=False)
    assert backend.sent == 6 and res.counts.requested == 6


def test_the_keywords_of_prepare_case_still_work_with_a_warning(backend, tmp_path):
    """Before 0.2 run_case took the preparation keywords itself; until 0.3 they work and warn."""
    with pytest.warns(DeprecationWarning, match=r"run_case\(case, \.\.\., limit=, unparseable=\) is deprecated"):
        old = run_case("echo", backend, limit=3, progress=False, unparseable="zero")
    new = run_case(prepare_case("echo", limit=3, unparseable="zero"), backend, progress=False)
    assert old.report.to_dict() == new.report.to_dict()
    with pytest.raises(TypeError, match="`limit`: the PreparedCase fixes it"):
        run_case(prepare_case("echo"), backend, limit=3)
    with pytest.warns(DeprecationWarning, match=r"unpacking prepare_case\(...\) as \(pairs, source, scorer\)"):
        ps, source, scorer = prepare_case("echo", limit=3)
    assert len(ps) == 3 and source == "embedded demo set" and scorer.name == "mcq"


def test_cached_rerun_keeps_the_first_run_seconds(backend, tmp_path, monkeypatch):
    import ipcausal.study.cases as cases

    clock = iter([100.0, 107.5, 200.0, 200.25])  # first run 7.5 s, rerun 0.25 s
    monkeypatch.setattr(cases.time, "perf_counter", lambda: next(clock))
    prepared = prepare_case("echo", limit=2, unparseable="zero")
    run_case(prepared, backend, out=tmp_path / "o", progress=False)
    first = json.loads((tmp_path / "o" / "meta.json").read_text())["settings"]
    assert first["run seconds"] == 7.5 and "rerun seconds (from cache)" not in first
    sent = backend.sent
    run_case(prepared, backend, out=tmp_path / "o", progress=False)
    assert backend.sent == sent  # all from the cache
    again = json.loads((tmp_path / "o" / "meta.json").read_text())["settings"]
    assert again["run seconds"] == 7.5 and again["rerun seconds (from cache)"] == 0.2
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["settings"]["run seconds"] == 7.5


def test_prepare_case_reads_and_limits(tmp_path):
    src = _echo_without_options(tmp_path)
    prepared = prepare_case("culture", src, limit=2)
    scorer = prepared.scorer
    assert len(prepared.pairs) == 2 and prepared.label == "given pairs" and prepared.given
    assert scorer.name == "embedding" and dict(scorer.options) == {}
    assert prepared.config.max_tokens == prepared.source.max_tokens and prepared.cluster is None
    with pytest.raises(ValueError, match="`backend` is required for scorer 'judge'"):
        prepare_case("culture", src, scorer="judge")
    judged = prepare_case("culture", src, judge=True).scorer
    assert judged.name == "judge"  # the case's judged variant, checked as if the judge were there


def test_cli_case_rejects_before_loading_the_model(tmp_path, capsys, monkeypatch):
    loaded = []
    monkeypatch.setattr(case_cmd, "make_backend", lambda *a, **k: loaded.append(a) or None)
    src = _echo_without_options(tmp_path)
    rc = main(["case", "echo", "--source", str(src), "-o", str(tmp_path / "out"), "--no-progress"])
    err = capsys.readouterr().err
    assert rc == 2 and "scorer 'mcq' needs the column `options`" in err and len(err.strip().splitlines()) == 1
    assert loaded == []  # no backend was made: the model was never loaded
    rc = main(["case", "echo", "--source", str(tmp_path / "absent.jsonl"), "-o", str(tmp_path / "out")])
    assert rc == 2 and "--source" in capsys.readouterr().err and loaded == []
    (tmp_path / "file").write_text("")
    assert main(["case", "echo", "-o", str(tmp_path / "file")]) == 2
    assert "is a file" in capsys.readouterr().err and loaded == []


def test_cli_demo_negative_limit_fails_before_loading_the_model(capsys, monkeypatch, tmp_path):
    import ipcausal.backends as backends
    import ipcausal.study.cases as cases

    def boom(*a, **k):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(backends, "get_backend", boom)
    monkeypatch.setattr(cases, "run_demo", boom)
    monkeypatch.chdir(tmp_path)
    assert main(["demo", "--limit", "-1"]) == 2
    assert "argument --limit: must be a positive integer, got -1" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []
