"""RunRecord and write_outputs: run metadata with one owner, on every route (issue 19 item 5, issue 24 item 2)."""

from __future__ import annotations

import json

import pytest

import ipcausal
from ipcausal.cli import main
from ipcausal.study.record import RunRecord, dropped_by_reason, write_outputs, write_report_file


def _answered(tmp_path):
    rows = [{"pair_id": k, "background_i": "true_belief", "background_j": "false_belief", "x_i": f"q{k}",
             "x_j": f"q{k}!", "options": ["yes", "no"], "correct_option": 1,
             "y_i": "yes", "y_j": ["no", "maybe", None, "yes"][k % 4]} for k in range(16)]
    return ipcausal.PairSet.from_records(rows).write(tmp_path / "answered.jsonl")


def test_test_then_report_shows_the_counts_of_the_scored_file(tmp_path, capsys):
    answered = _answered(tmp_path)
    scored = tmp_path / "scored.jsonl"
    assert main(["score", str(answered), "--scorer", "mcq", "-o", str(scored)]) == 0
    assert main(["test", str(scored), "-o", str(tmp_path / "r.json")]) == 0
    payload = json.loads((tmp_path / "r.json").read_text())
    record = RunRecord.from_dict(payload["record"])
    assert record.counts["requested"] == 16 and record.counts["scored"] == 8
    assert dict(record.dropped) == {"missing": 4, "unparseable": 4} and record.settings["scorer"]
    assert payload["counts"] == dict(record.counts)  # the key the current release reads, too
    assert ipcausal.Report.read(tmp_path / "r.json").to_dict() == payload["report"]
    capsys.readouterr()
    assert main(["report", str(tmp_path / "r.json"), "-o", str(tmp_path / "r.md")]) == 0
    md = (tmp_path / "r.md").read_text()
    assert "**Counts**" in md and "| 16 | 8 | 4 | 4 | 0 | 0 |" in md  # the counts are shown
    # without the .meta.json sibling there is nothing to show, and nothing is made up
    (tmp_path / "scored.meta.json").unlink()
    assert main(["test", str(scored), "-o", str(tmp_path / "bare.json")]) == 0
    assert "record" not in json.loads((tmp_path / "bare.json").read_text())


def test_write_outputs_writes_a_run_folder_the_report_command_reads(tmp_path):
    from ipcausal.scoring import score_pairs

    res = score_pairs(ipcausal.PairSet.read(_answered(tmp_path)), "mcq")
    report = ipcausal.test(res.pairs)
    record = RunRecord("a run", {"requested": 32, "scored": len(res.pairs)}, dropped_by_reason(res),
                       {"model": "m"}, {"run": 1.5}, 0.25)
    files = write_outputs(tmp_path / "run", report, record, scored=res.pairs, dropped=res.dropped,
                          meta={"title": "a run", "counts": dict(record.counts)})
    assert set(files) == {"pairs", "dropped", "report.json", "meta.json"}
    assert RunRecord.read(tmp_path / "run") == record == RunRecord.read(files["report.json"])
    assert main(["report", str(tmp_path / "run"), "-o", str(tmp_path / "r.md")]) == 0
    assert "a run" in (tmp_path / "r.md").read_text()


def test_records_of_the_current_release_are_read(tmp_path):
    (tmp_path / "meta.json").write_text(json.dumps({"case": "echo", "title": "Echo", "counts": {"pairs": 3},
                                                    "settings": {"seed": 0}}))
    got = RunRecord.read(tmp_path)
    assert (got.title, dict(got.counts), dict(got.settings)) == ("Echo", {"pairs": 3}, {"seed": 0})
    assert RunRecord.read(tmp_path / "nothing.jsonl") is None


def test_record_validation():
    with pytest.raises(ValueError, match="`dropped` reasons must be among missing, unparseable, failed"):
        RunRecord(dropped={"lost": 1})
    with pytest.raises(TypeError, match="`counts` must be a mapping"):
        RunRecord(counts=[1])
    with pytest.raises(TypeError, match="`record` must be a RunRecord or None"):
        write_report_file("x.json", None, {"counts": {}})


def test_counts_are_typed_and_keep_their_labels() -> None:
    from ipcausal.study.record import Counts

    c = Counts(pairs=3, requested=6, completed=6, from_cache=2, failed=0, unparseable=1, excluded=1, scored=2)
    assert list(c.to_dict()) == ["pairs", "requested", "completed", "from cache", "failed", "unparseable",
                                 "excluded", "scored"]  # the labels and order of the reports before 0.2
    assert Counts.from_dict({**c.to_dict(), "other": 5}) == c
    assert RunRecord("t", c).counts == c.to_dict()
    with pytest.warns(DeprecationWarning, match=r"counts\['from cache'\] is deprecated .* read counts.from_cache"):
        assert c["from cache"] == 2
    with pytest.raises(KeyError):
        c["pairs_sent"]  # an audit's count that a case run does not make
    with pytest.raises(ValueError, match="`requested` must be a non-negative integer or None, got -1"):
        Counts(requested=-1)
