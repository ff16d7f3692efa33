"""A run that scores nothing still writes its responses and a report that says why (issue 30, item 1).

The SCM simulator answers "Answer: -0.87 (simulated response …)", which names no option of the echo
case's questions: scored by the case's own choice reader (not the simulator's number reader, which
``ipcausal case --backend simulated`` uses since 0.2), every pair is unparseable.  The run must leave responses.jsonl, dropped.jsonl and a
report.json whose warning says why, exit 3, and `ipcausal failures` must show the replies.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ipcausal.cli import main
from ipcausal.study.results import Report
from ipcausal.testing import SimulatedModel


def test_a_run_that_scores_nothing_writes_why(tmp_path: Path, capsys, monkeypatch: pytest.MonkeyPatch) -> None:
    # a backend whose own reader is not used: the case's scorer reads its answers (and reads none)
    monkeypatch.delattr(SimulatedModel, "answer_scorer")
    out = tmp_path / "echo"
    assert main(["case", "echo", "--backend", "simulated", "--limit", "4", "-o", str(out), "--no-progress"]) == 3
    printed = capsys.readouterr()
    assert "no pair could be scored, so nothing was tested" in printed.err and f"ipcausal failures {out}" in printed.err
    assert "nothing was tested: no pair could be scored" in printed.out
    for name in ("responses.jsonl", "dropped.jsonl", "report.json", "report.md", "report.html", "meta.json"):
        assert (out / name).is_file(), name
    payload = json.loads((out / "report.json").read_text())
    assert payload["counts"]["scored"] == 0 and payload["counts"]["unparseable"] == 4
    assert payload["record"]["dropped"] == {"unparseable": 4}
    report = Report.read(out / "report.json")
    assert report.groups == () and report.warnings[0].startswith("no pair could be scored: 4 of 4 pairs had an answer")
    assert "no pair could be scored" in (out / "report.md").read_text()
    assert main(["failures", str(out)]) == 3
    listed = capsys.readouterr().out
    rows = [line for line in listed.splitlines()[2:] if line.strip()]
    assert len(rows) == 4 and all("unparseable: 'Answer: " in r and "(simulated response" in r for r in rows)
    assert main(["report", str(out), "-o", str(tmp_path / "again.html")]) == 0  # it renders again from the file
