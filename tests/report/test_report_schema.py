"""The Report's JSON: schema version 2 (typed parts), round trips, and files of version 1 still read.

``fixtures/report_v1_test.json`` and ``fixtures/report_v1_audit.json`` were written by the code of
main at 49c8c16 (schema version 1, flat NaN-defaulted fields): the first by
``ipcausal.test(_pairs(), correction="westfall-young", margin=1.5, method="exact", rng=0)``, the
second by an audit of a SimulatedModel(effect=2.0, levels=5, seed=1) study (n=40, batch_size=8).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

import ipcausal
from ipcausal.study.results import SCHEMA_VERSION, AuditInfo, EquivalenceInfo, OmnibusInfo, SequentialInfo

FIXTURES = Path(__file__).parent / "fixtures"


def _pairs(n: int = 10, seed: int = 3) -> ipcausal.PairSet:
    """The pairs of the v1 fixture: three backgrounds, each prompt answered under each."""
    rng = np.random.default_rng(seed)
    recs = []
    for k in range(n):
        s = {"sae": float(rng.integers(2, 6))}
        s["esl"] = s["sae"] + float(rng.integers(-1, 2))
        s["aae"] = s["sae"] - 1.0 + float(rng.integers(-1, 2))
        for a, b in (("sae", "esl"), ("sae", "aae"), ("esl", "aae")):
            recs.append({"pair_id": f"{k}{a}{b}", "prompt_id": f"p{k}", "background_i": a, "background_j": b,
                         "x_i": "p", "x_j": "p'", "score_i": s[a], "score_j": s[b], "model": "m1"})
    return ipcausal.PairSet.from_records(recs)


@pytest.fixture(scope="module")
def fresh() -> ipcausal.Report:
    return ipcausal.test(_pairs(), correction="westfall-young", margin=1.5, method="exact", rng=0)


def _with_v1_mean_intervals(fresh: ipcausal.Report, back: ipcausal.Report) -> ipcausal.Report:
    """``fresh`` with the per-background mean intervals of the v1 file.

    Those intervals changed on purpose after v1 (issue 24: a bounded-outcome interval instead of
    Student's t), so a v1 file keeps its own; the means and counts must still agree.  The groups'
    minimal detectable effect (``mde``, issue 30) came after v1 too: a v1 file has none.  A v1 file
    carries no example pairs (issue 32 added them): it reads with none, and ``fresh`` has some.
    """
    assert back.examples == () and len(fresh.examples) > 0
    for model, per in fresh.backgrounds.items():
        for b, summary in per.items():
            old = back.backgrounds[model][b]
            assert (summary["mean"], summary["n"]) == (old["mean"], old["n"])
    # the names of the intervals came later too (issue 28): a v1 file reads them as unknown ("")
    groups = tuple(dataclasses.replace(g, ci_method="", mde=None, equivalence=None if g.equivalence is None else
                                       dataclasses.replace(g.equivalence, ci_method="")) for g in fresh.groups)
    assert all(g.ci_method == "" for g in back.groups)
    # the PB's bootstrap draws changed after v1 (issue 33: the draws of the kernel): the statistic agrees,
    # the interval is the file's own
    for model, p in fresh.pb.items():
        assert p.statistic == back.pb[model].statistic and p.means == back.pb[model].means
    return dataclasses.replace(fresh, backgrounds=back.backgrounds, groups=groups, examples=(), pb=back.pb)


def test_a_version_1_file_reads_as_the_same_report_today(fresh):
    v1 = json.loads((FIXTURES / "report_v1_test.json").read_text(encoding="utf-8"))
    assert v1["schema_version"] == 1 and "equivalence_pvalue" in v1["report"]["groups"][0]
    back = ipcausal.Report.read(FIXTURES / "report_v1_test.json")
    same = _with_v1_mean_intervals(fresh, back)
    assert back.to_dict() == same.to_dict()  # the same numbers, now in the typed parts
    assert str(back) == str(same)
    for old, g in zip(v1["report"]["groups"], back.groups):
        assert g.equivalence == EquivalenceInfo(margin=old["margin"], verdict=old["equivalence"],
                                                pvalue=old["equivalence_pvalue"], ci_low=old["equivalence_ci_low"],
                                                ci_high=old["equivalence_ci_high"], confidence_level=0.9)
        assert g.sequential is None
    assert back.audit is None
    assert back.omnibus == {m: OmnibusInfo(**o) for m, o in v1["report"]["omnibus"].items()}


def test_a_version_1_report_entry_without_its_header_is_recognised(fresh):
    v1 = json.loads((FIXTURES / "report_v1_test.json").read_text(encoding="utf-8"))["report"]
    back = ipcausal.Report.from_dict(v1)
    assert back.to_dict() == _with_v1_mean_intervals(fresh, back).to_dict()
    audit = json.loads((FIXTURES / "report_v1_audit.json").read_text(encoding="utf-8"))["report"]
    assert ipcausal.Report.from_dict(audit).groups[0].sequential.n_sent == audit["groups"][0]["n_sent"]


def test_a_version_1_audit_reads_into_sequential_info_and_audit_info():
    v1 = json.loads((FIXTURES / "report_v1_audit.json").read_text(encoding="utf-8"))["report"]
    back = ipcausal.Report.read(FIXTURES / "report_v1_audit.json")
    old, g = v1["groups"][0], back.groups[0]
    assert g.sequential == SequentialInfo(n_available=old["n_available"], n_sent=old["n_sent"],
                                          stop_reason=old["stop_reason"], e_value=old["e_value"],
                                          e_adjusted=old["e_adjusted"], path_n=tuple(old["path_n"]),
                                          path_e=tuple(old["path_e"]))
    assert g.equivalence is None and back.audit == AuditInfo(**v1["audit"])
    assert back.audit.stopped == "decided" and back.audit.requests_saved == 16
    # the flat v1 names survive as the columns of to_frame
    row = back.to_frame().iloc[0]
    assert (row["n_sent"], row["stop_reason"], row["e_value"]) == (old["n_sent"], old["stop_reason"], old["e_value"])


def test_version_2_is_written_and_round_trips_every_part(fresh, tmp_path):
    audit = ipcausal.Report.read(FIXTURES / "report_v1_audit.json")
    for r in (fresh, audit):
        path = r.write(tmp_path / "r.json")
        payload = json.loads(path.read_text(encoding="utf-8"))
        assert payload["schema_version"] == SCHEMA_VERSION == 2
        assert "equivalence_pvalue" not in payload["report"]["groups"][0]
        back = ipcausal.Report.read(path)
        assert back.to_dict() == r.to_dict()
        assert back.groups == r.groups and back.audit == r.audit and back.omnibus == r.omnibus
        # without the header, to_dict's output is read as the current version
        assert ipcausal.Report.from_dict(r.to_dict()).to_dict() == r.to_dict()


def test_optional_parts_are_none_without_a_margin_or_an_audit():
    r = ipcausal.test(_pairs(), method="exact")
    assert all(g.equivalence is None and g.sequential is None for g in r.groups)
    assert r.audit is None and r.omnibus == {} and r.margin is None
    assert {"equivalence", "n_sent"}.isdisjoint(r.to_frame().columns)


def test_a_rejected_group_has_the_verdict_reject_and_keeps_its_tost(fresh):
    by = {g.group: g for g in fresh.groups}
    g = by["sae vs aae"]
    assert g.reject and g.equivalence.verdict == "reject" and g.equivalence.margin == 1.5
    assert 0 < g.equivalence.pvalue <= 1 and g.equivalence.ci_low < g.equivalence.ci_high
    assert all(h.equivalence.verdict == "equivalent" for h in fresh.groups if not h.reject)
