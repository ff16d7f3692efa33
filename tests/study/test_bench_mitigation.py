"""A bench [[cases]] `mitigation` key: each cell also run with it on the same pairs and cache (simulated)."""

from __future__ import annotations

import json
import threading

import pytest

from ipcausal.report.bench import bench_html, bench_markdown
from ipcausal.study.bench import bench
from ipcausal.study.bench import BenchReport, CellMitigation
from ipcausal.study.bench import read_spec
from ipcausal.testing import SimulatedModel

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")
MODELS = [{"name": "effect", "backend": "simulated", "effect": 2.0},
          {"name": "null", "backend": "simulated", "effect": 0.0, "seed": 1}]
CASES = [{"name": "echo", "limit": 12, "mitigation": "strip", "margin": 0.5},
         {"name": "age", "limit": 12, "mitigation": "markers", "margin": 0.5},
         {"name": "education", "limit": 4}]


def _counting(monkeypatch) -> list[int]:
    sent, lock, orig = [0], threading.Lock(), SimulatedModel.generate

    def generate(sim, requests):
        with lock:
            sent[0] += len(requests)
        return orig(sim, requests)

    monkeypatch.setattr(SimulatedModel, "generate", generate)
    return sent


def test_bench_cells_record_the_mitigation_and_a_rerun_sends_nothing(tmp_path, monkeypatch):
    sent = _counting(monkeypatch)
    rep = bench({"models": MODELS, "cases": CASES}, out=tmp_path, progress=False)
    echo = rep.cell("effect", "echo").mitigation
    assert len(echo) == 1 and isinstance(echo[0], CellMitigation)
    assert echo[0].mitigation == "strip" and echo[0].effect_without > 1 and echo[0].effect_with == 0
    assert echo[0].change_pvalue < 0.05 and echo[0].removed == "yes" and echo[0].dropped == 0
    age = rep.cell("effect", "age").mitigation[0]  # markers: the tag (the simulator's cue) stays
    assert age.change == 0 and age.removed == "no"
    assert rep.cell("effect", "education").mitigation == ()  # no key: no comparison
    assert rep.cell("null", "echo").mitigation[0].effect_without == pytest.approx(0, abs=1.5)
    assert (tmp_path / "cells" / "effect" / "echo" / "mitigation.json").is_file()
    assert BenchReport.read(tmp_path).cell("effect", "echo").mitigation == echo  # serialised in bench.json
    first = sent[0]
    assert first > 0
    again = bench({"models": MODELS, "cases": CASES}, out=tmp_path, progress=False)
    assert sent[0] == first  # both arms from the models' caches
    assert again.cell("effect", "echo").mitigation == rep.cell("effect", "echo").mitigation


def test_the_pages_show_the_mitigation(tmp_path):
    rep = bench({"models": MODELS[:1], "cases": CASES[:1]}, out=tmp_path, progress=False)
    md, page = bench_markdown(rep), bench_html(rep)
    assert "| effect | strip | true_belief vs false_belief | 12 |" in md and "| yes | 0 |" in md
    assert "<h2>Mitigations</h2>" in page and "data-mitigation='strip'" in page


def test_an_old_bench_json_without_mitigations_still_reads(tmp_path):
    rep = bench({"models": MODELS[:1], "cases": [{"name": "echo", "limit": 8}]}, out=tmp_path, progress=False)
    d = json.loads((tmp_path / "bench.json").read_text())
    for c in d["cells"]:
        del c["mitigation"], c["mitigation_error"]
    old = BenchReport.from_dict(d)
    assert old == rep and old.cells[0].mitigation == ()
    assert "Mitigations" not in bench_html(old)


def test_a_comparison_that_cannot_run_is_recorded_not_raised(tmp_path):
    # dialect needs recorded edits: the echo pairs have none, so the cell stands and says why
    rep = bench({"models": MODELS[:1], "cases": [{"name": "echo", "limit": 8, "mitigation": "dialect"}]},
                out=tmp_path, progress=False)
    cell = rep.cell("effect", "echo")
    assert cell.status == "ok" and cell.mitigation == () and "edits_i" in cell.mitigation_error
    assert "not compared" in bench_markdown(rep)


@pytest.mark.parametrize("case, message", [
    ({"name": "echo", "mitigation": "hide"}, "`cases[0].mitigation` must be one of markers, dialect, strip, instruct"),
    ({"name": "echo", "mitigation": "strip", "instruction": "Be fair."}, "`cases[0].instruction` applies to"),
    ({"name": "echo", "instruction": "Be fair."}, "`cases[0].instruction` applies to"),
    ({"name": "echo", "mitigation": "instruct", "instruction": ""}, "`cases[0].instruction` must be a non-empty"),
])
def test_the_bench_file_checks_the_mitigation_keys(case, message):
    with pytest.raises(ValueError, match=message.replace("[", r"\[").replace("]", r"\]")):
        read_spec({"models": MODELS[:1], "cases": [case]})


def test_instruct_with_an_instruction_reads():
    spec = read_spec({"models": MODELS[:1], "cases": [{"name": "echo", "mitigation": "instruct",
                                                       "instruction": "Be fair."}]})
    assert (spec.cases[0].mitigation, spec.cases[0].instruction) == ("instruct", "Be fair.")


def test_run_cell_with_a_cache_object_as_the_ray_path_passes_it(tmp_path):
    # bench.distributed runs run_cell with each cell an ActorCache (a ResponseCache): the comparison shares it, leaves it open
    from ipcausal.backends.cache import ResponseCache
    from ipcausal.study.bench import run_cell

    spec = read_spec({"models": MODELS[:1], "cases": CASES[:1]})
    cache = ResponseCache(":memory:")
    cell, _ = run_cell(spec.models[0], spec.cases[0], spec, tmp_path, {}, False, cache=cache)
    assert cell.mitigation[0].removed == "yes" and len(cache) > cell.calls  # both arms in the one cache
    again, _ = run_cell(spec.models[0], spec.cases[0], spec, tmp_path, {}, False, cache=cache)
    assert again.sent == 0 and again.mitigation == cell.mitigation
    cache.close()
