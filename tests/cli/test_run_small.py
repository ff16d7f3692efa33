"""Small things of `ipcausal run` / `score` / `failures` / `--open` (issue 13, item 10)."""

from __future__ import annotations

import json

import pytest

import ipcausal.commands.run as run_cmd
from ipcausal import PairSet
from ipcausal.backends.base import BackendError, Choice, Response
from ipcausal.cli import main
from ipcausal.commands.score import score_summary
from ipcausal.study.run import RunInterrupted, run


class Scripted:
    """A backend that answers, fails on prompts containing "FAIL", and can be interrupted (Ctrl-C)."""

    kind, model = "scripted", "scripted-1"

    def __init__(self, interrupt_after: int | None = None):
        self.interrupt_after, self.sent = interrupt_after, 0

    def generate(self, requests):
        out = []
        for r in requests:
            if self.interrupt_after is not None and self.sent >= self.interrupt_after:
                raise KeyboardInterrupt
            self.sent += 1
            text = r.messages[-1]["content"]
            if "FAIL" in text:
                raise BackendError("HTTP 500 from the test server")
            out.append(Response(choices=(Choice(text="A", finish_reason="stop", completion_tokens=1),),
                                model=self.model, prompt_tokens=3, completion_tokens=1))
        return out


def _pairs(tmp_path, n=6, fail=()):
    rows = [{"pair_id": f"p{k}", "background_i": "US", "background_j": "UK", "x_i": f"question {k} color",
             "x_j": f"question {k} colour" + (" FAIL" if k in fail else "")} for k in range(n)]
    return PairSet.from_records(rows).write(tmp_path / "pairs.jsonl")


def test_interrupt_says_what_is_kept_and_how_to_resume(tmp_path, capsys, monkeypatch):
    src = _pairs(tmp_path)
    ps = PairSet.read(src)
    with pytest.raises(RunInterrupted, match=r"interrupted: 4 of 12 responses are kept in the cache; run the same"):
        run(ps, Scripted(interrupt_after=4), cache=tmp_path / "c.sqlite", batch_size=2, progress=False)
    with pytest.raises(RunInterrupted, match="with no cache, are not kept"):
        run(ps, Scripted(interrupt_after=2), batch_size=2, progress=False)
    # through the CLI: one line, exit 130, and a rerun asks only for the rest
    monkeypatch.setattr(run_cmd, "_make_backend", lambda args: Scripted(interrupt_after=4))
    assert main(["run", str(src), "-o", str(tmp_path / "out.jsonl"), "--no-progress"]) == 130
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("ipcausal run: interrupted: 4 of 12 responses are kept") and "resume" in err[-1]
    second = Scripted()
    monkeypatch.setattr(run_cmd, "_make_backend", lambda args: second)
    assert main(["run", str(src), "-o", str(tmp_path / "out.jsonl"), "--no-progress"]) == 0
    assert second.sent <= 12 - 4


def test_cost_names_the_currency_and_is_estimated_first(tmp_path, capsys, monkeypatch):
    src = _pairs(tmp_path, n=3)
    monkeypatch.setattr(run_cmd, "_make_backend", lambda args: Scripted())
    assert main(["run", str(src), "-o", str(tmp_path / "o.jsonl"), "--no-progress", "--price-input", "2",
                 "--price-output", "10", "--currency", "EUR", "--max-tokens", "5"]) == 0
    err = capsys.readouterr().err
    est = [line for line in err.splitlines() if line.startswith("estimated cost before the run")]
    assert len(est) == 1 and "EUR" in est[0] and "an estimate" in est[0]
    assert err.index("estimated cost") < err.index("wrote 3 pairs")
    # 6 requests x (3 prompt tokens x 2 + 1 completion token x 10) per million
    assert "cost of the new tokens: 0.0001 EUR" in err
    assert main(["run", str(src), "-o", str(tmp_path / "o2.jsonl"), "--no-progress", "--price-input", "2",
                 "--price-output", "10"]) == 0
    assert "USD" in capsys.readouterr().err


def test_estimate_line_oracle():
    ps = PairSet.from_records([{"pair_id": 1, "background_i": "a", "background_j": "b", "x_i": "x" * 40,
                                "x_j": "x" * 40}])
    line = run_cmd.estimate_line(ps, 10, 1.0, 1.0, "USD")
    # one distinct prompt: 40 // 4 + 8 = 18 prompt tokens, 10 completion tokens
    assert "(1 request," in line and "~18 prompt tokens" in line and "up to 10 completion" in line
    assert "at most 0.0000 USD" in line


def test_score_summary_wording():
    c = {"requested": 0, "scored": 0, "unparseable": 0, "missing": 0, "failed": 0, "zeroed": 0}
    line = score_summary(c, "mcq", "scored.jsonl")
    assert line == "scored 0 of 0 pairs with mcq; written to scored.jsonl"
    assert "0 scored 0" not in line and "->" not in line
    c = {"requested": 9, "scored": 6, "unparseable": 2, "missing": 1, "failed": 0, "zeroed": 0}
    assert score_summary(c, "mcq", "s.jsonl") == ("scored 6 of 9 pairs with mcq (2 unparseable: 2 pairs dropped; "
                                                  "1 without a response (dropped)); written to s.jsonl")


def test_failures_lists_failed_and_dropped(tmp_path, capsys, monkeypatch):
    src = _pairs(tmp_path, n=4, fail={1, 3})
    monkeypatch.setattr(run_cmd, "_make_backend", lambda args: Scripted())
    answered = tmp_path / "answered.jsonl"
    assert main(["run", str(src), "-o", str(answered), "--no-progress", "--no-cache"]) == 3
    capsys.readouterr()
    assert main(["failures", str(answered)]) == 3
    out = capsys.readouterr()
    lines = out.out.splitlines()
    assert lines[0].split() == ["pair_id", "stage", "reason"]
    body = [line.split()[0] for line in lines[2:]]
    assert body == ["p1", "p3"] and all("HTTP 500" in line and "run (UK)" in line for line in lines[2:])
    assert "2 failed requests, 0 dropped pairs" in out.err
    # a scored file: its .dropped.jsonl sibling is listed too
    dropped = tmp_path / "scored.dropped.jsonl"
    dropped.write_text(json.dumps({"pair_id": "p9", "status_i": "ok", "status_j": "unparseable"}) + "\n")
    PairSet.read(src).write(tmp_path / "scored.jsonl")
    assert main(["failures", str(tmp_path / "scored.jsonl")]) == 3
    out = capsys.readouterr().out
    assert "p9" in out and "answer j unparseable" in out
    (tmp_path / "clean").mkdir()
    clean = _pairs(tmp_path / "clean", n=1)
    assert main(["failures", str(clean)]) == 0
    assert "no failed requests and no dropped pairs" in capsys.readouterr().out
    assert main(["failures", str(tmp_path / "nope.jsonl")]) == 2


def test_open_uses_the_browser_only_when_asked(tmp_path, monkeypatch, capsys):
    import webbrowser

    import ipcausal

    opened = []
    monkeypatch.setattr(webbrowser, "open", lambda url: opened.append(url) or True)
    ps = PairSet.from_records({"pair_id": k, "background_i": "A", "background_j": "B", "x_i": "q", "x_j": "q",
                               "score_i": 1.0, "score_j": float(k % 3)} for k in range(12))
    rep = ipcausal.test(ps).write(tmp_path / "r.json")
    assert main(["report", str(rep), "-o", str(tmp_path / "r.html")]) == 0
    assert opened == []
    assert main(["report", str(rep), "-o", str(tmp_path / "r.html"), "--open"]) == 0
    assert opened == [(tmp_path / "r.html").resolve().as_uri()]


def test_failures_reads_a_case_folder(tmp_path, capsys):
    case = tmp_path / "echo"
    case.mkdir()
    PairSet.from_records([
        {"pair_id": "a", "background_i": "true_belief", "background_j": "false_belief", "x_i": "q", "x_j": "q'",
         "y_i": "1", "y_j": None, "error_j": "timed out after 60 s"},
        {"pair_id": "b", "background_i": "true_belief", "background_j": "false_belief", "x_i": "r", "x_j": "r'",
         "y_i": "2", "y_j": "maybe"}]).write(case / "responses.jsonl")
    (case / "dropped.jsonl").write_text(json.dumps({"pair_id": "b", "status_i": "ok", "status_j": "unparseable"}) + "\n")
    assert main(["failures", str(case)]) == 3
    out = capsys.readouterr()
    rows = [line.split()[0] for line in out.out.splitlines()[2:]]
    assert rows == ["a", "b"] and "timed out after 60 s" in out.out and "answer j unparseable" in out.out
    assert "1 failed request, 1 dropped pair" in out.err
    assert main(["failures", str(tmp_path)]) == 2  # a folder that is not a case folder: one line
    assert "not an `ipcausal case` output folder" in capsys.readouterr().err
