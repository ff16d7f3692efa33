"""The reader on the local model's own replies (SmolLM2-135M, greedy, each case's demo budget).

``fixtures/local_replies.json`` holds what the model wrote to the first 12 demo pairs of the echo and
age cases and of a fresh ``ipcausal new-case`` scaffold (``python benchmarks/parse_rates.py --dump``;
the same run as benchmarks/PARSE_RATES.txt).  Text not written for these tests: each case's scorer
must read at least 80 % of it (the floor of ``ipcausal check-case``), and what it reads must be what
the reply says.  The live runs are tests/cli/test_new_case.py (the scaffold end to end) and
tests/study/test_cases.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ipcausal.cases import get_case
from ipcausal.cases.age import read_risk
from ipcausal.scoring import read_choice
from ipcausal.study.checkread import PARSE_FLOOR

REPLIES = json.loads((Path(__file__).parent / "fixtures" / "local_replies.json").read_text(encoding="utf-8"))


def _read(case: str, row: dict) -> float | int | None:
    if case == "echo":
        return read_choice(row["reply"], json.loads(row["options"]))
    if case == "age":
        return read_risk(row["reply"])
    return read_choice(row["reply"], ["Yes", "No"])


@pytest.mark.parametrize("case", ["echo", "age", "scaffold"])
def test_each_case_reads_the_local_model(case: str) -> None:
    rows = REPLIES["replies"][case]
    assert len(rows) == 24
    read = [_read(case, r) for r in rows]
    assert sum(v is not None for v in read) / len(rows) >= PARSE_FLOOR, [r["reply"] for r, v in zip(rows, read)
                                                                         if v is None]


def test_what_is_read_is_what_the_reply_says() -> None:
    echo = {(r["pair_id"], r["side"]): r for r in REPLIES["replies"]["echo"]}
    said = echo[("farm-001", "i")]
    assert said["reply"] == "The answer is: 4." and _read("echo", said) == 3  # option 4, Perth
    assert _read("echo", echo[("farm-002", "i")]) == 0  # "1. Oxygen"
    age = REPLIES["replies"]["age"]
    # "1. Take a little risk": a list bullet before the text of level 2
    assert age[0]["reply"].startswith("1. Take a little risk") and read_risk(age[0]["reply"]) == 2.0
    for r in REPLIES["replies"]["scaffold"]:
        v = _read("scaffold", r)
        if v is not None:
            assert r["reply"].lower().startswith(("yes", "no")) and (v == 0) == r["reply"].lower().startswith("yes")


def test_the_echo_replies_score_through_the_case_scorer() -> None:
    import ipcausal
    from ipcausal.scoring import score_pairs

    case = get_case("echo")
    pairs = case.demo.load(0, 12).to_frame().set_index("pair_id")
    rows = REPLIES["replies"]["echo"]
    got = {(r["pair_id"], r["side"]): r["reply"] for r in rows}
    recs = [{**pairs.loc[pid].to_dict(), "pair_id": pid, "y_i": got.get((pid, "i")), "y_j": got.get((pid, "j"))}
            for pid in pairs.index]
    res = score_pairs(ipcausal.PairSet.from_records(recs), case.scorer)
    assert res.counts["scored"] >= PARSE_FLOOR * 12  # pairs scored: both replies read
