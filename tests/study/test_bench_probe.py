"""IP-Bench's probe column (issue 21 item 1, "can versus does"): the probe per cell and the 2 x 2 reading.

Simulated models whose probe accuracy (1.0, or chance 1/|B|) and effect (2 or 0) are known must land
in the four quadrants; the probe must reach the simulator with the prompt's true background (the
bench's tag), share the model's response cache (a rerun asks nothing) and survive bench.json.
"""

from __future__ import annotations

import json
import threading
from dataclasses import replace

import pandas as pd
import pytest

from ipcausal.study.bench import bench, run_cell
from ipcausal.study.bench import PROBE_COLUMNS, READINGS, CellProbe, reading
from ipcausal.study.bench import BENCH_COLUMNS, BenchReport
from ipcausal.study.bench import read_spec
from ipcausal.testing import SimulatedModel

CHANCE = 1 / 3  # education has three backgrounds
LIMIT = 12  # 12 items x 3 styles = 36 distinct prompts to probe
MODELS = [{"name": "infers-uses", "backend": "simulated", "effect": 2.0, "probe_accuracy": 1.0},
          {"name": "infers-only", "backend": "simulated", "effect": 0.0, "seed": 1, "probe_accuracy": 1.0},
          {"name": "uses-only", "backend": "simulated", "effect": 2.0, "seed": 2, "probe_accuracy": CHANCE},
          {"name": "neither", "backend": "simulated", "effect": 0.0, "seed": 3, "probe_accuracy": CHANCE},
          {"name": "seventy", "backend": "simulated", "effect": 0.0, "seed": 5, "probe_accuracy": 0.7}]
SPEC = {"settings": {"alpha": 0.05, "seed": 0, "probe": True}, "models": MODELS,
        "cases": [{"name": "education", "limit": LIMIT}, {"name": "echo", "limit": 4, "probe": False}]}
WANT = {"infers-uses": "infers and uses", "infers-only": "infers; use not shown",
        "uses-only": "use shown; inference not shown", "neither": "neither shown"}


class Counter:
    """Counts the requests that reach the simulator, probe prompts apart."""

    def __init__(self, monkeypatch):
        self.sent = self.probes = 0
        orig, lock = SimulatedModel.generate, threading.Lock()

        def generate(sim, requests):
            with lock:
                for r in requests:
                    self.sent += 1
                    self.probes += "[background probe]" in r.messages[-1]["content"]
            return orig(sim, requests)

        monkeypatch.setattr(SimulatedModel, "generate", generate)


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    out = tmp_path_factory.mktemp("probebench")
    return out, bench(SPEC, out=out, progress=False)


def test_the_four_quadrants(done):
    _, rep = done
    assert not rep.failed
    for name, want in WANT.items():
        p = rep.cell(name, "education").probe
        assert p.reading == want, (name, p)
        assert (p.can_infer, p.does_use) == next(k for k, v in READINGS.items() if v == want)
        assert p.does_use == any(g.reject for g in rep.cell(name, "education").groups)
        assert p.can_infer == (p.pvalue <= 0.05) and p.chance == pytest.approx(CHANCE) and p.alpha == 0.05


def test_the_simulator_knows_each_probed_prompts_background(done):
    _, rep = done
    for name in ("infers-uses", "infers-only"):  # accuracy 1: right on every prompt, so each was tagged
        p = rep.cell(name, "education").probe
        assert (p.correct, p.n, p.unparseable, p.failed, p.accuracy) == (3 * LIMIT, 3 * LIMIT, 0, 0, 1.0)
        assert p.calls == 3 * LIMIT and p.pvalue == pytest.approx(CHANCE ** (3 * LIMIT))
    p = rep.cell("seventy", "education").probe  # the exact interval covers the stated accuracy
    assert p.ci_low <= 0.7 <= p.ci_high and p.can_infer
    p = rep.cell("neither", "education").probe
    assert p.ci_low <= CHANCE <= p.ci_high and not p.can_infer


def test_a_case_can_opt_out(done):
    out, rep = done
    assert all(rep.cell(m["name"], "echo").probe is None for m in MODELS)
    assert rep.settings["probe"] == {"education": True, "echo": False}
    assert rep.settings["models"]["seventy"]["probe_accuracy"] == 0.7


def test_bench_json_round_trip_and_csv_columns(done):
    out, rep = done
    back = BenchReport.read(out / "bench.json")
    assert [c.probe for c in back.cells] == [c.probe for c in rep.cells]
    csv = pd.read_csv(out / "bench.csv")
    assert tuple(csv.columns) == BENCH_COLUMNS and BENCH_COLUMNS[14:14 + len(PROBE_COLUMNS)] == PROBE_COLUMNS
    assert BENCH_COLUMNS[14 + len(PROBE_COLUMNS):] == ("direction", "scale", "cannot_reject", "d_z", "mde", "rank_low",
                                                        "rank_high", "rank_set", "tie_group")  # issue 32, appended
    assert BENCH_COLUMNS[:14] == ("model", "case", "group", "n", "effect", "ci_low", "ci_high", "pvalue",
                                  "pvalue_adjusted", "reject", "equivalence", "alignment", "calls", "cost")
    edu = csv[csv["case"] == "education"]
    seventy = rep.cell("seventy", "education").probe.reading
    assert dict(zip(edu["model"], edu["reading"])) == {**WANT, "seventy": seventy}
    row = edu[edu["model"] == "infers-uses"].iloc[0]
    assert (row["probe_n"], row["probe_accuracy"], bool(row["can_infer"])) == (36, 1.0, True)
    assert csv[csv["case"] == "echo"]["reading"].isna().all()  # not probed: empty


def test_an_old_bench_json_without_the_probe_still_reads(done, tmp_path):
    out, rep = done
    d = json.loads((out / "bench.json").read_text())
    for c in d["cells"]:
        c.pop("probe")
    d["settings"].pop("probe")
    (tmp_path / "bench.json").write_text(json.dumps(d))
    old = BenchReport.read(tmp_path)
    assert all(c.probe is None for c in old.cells)
    assert [c.groups for c in old.cells] == [c.groups for c in BenchReport.read(out).cells]
    old.write_csv(tmp_path)
    assert pd.read_csv(tmp_path / "bench.csv")["reading"].isna().all()


def test_rerun_asks_nothing_new_for_the_probe(tmp_path, monkeypatch):
    spec = {**SPEC, "models": MODELS[:2], "cases": SPEC["cases"][:1]}
    first = Counter(monkeypatch)
    rep = bench(spec, out=tmp_path, progress=False)
    assert first.probes == 2 * 3 * LIMIT and all(c.probe.sent == 3 * LIMIT for c in rep.cells)
    monkeypatch.undo()
    again = Counter(monkeypatch)
    rep2 = bench(spec, out=tmp_path, progress=False)
    assert again.sent == 0 and all(c.probe.sent == 0 for c in rep2.cells)
    assert [replace(c.probe, sent=0) for c in rep.cells] == [c.probe for c in rep2.cells]


def test_run_cell_with_a_cache_object_carries_the_probe(tmp_path):
    """The Ray path runs the same run_cell with the cache actor's ResponseCache; an open cache does too."""
    from ipcausal.backends.cache import ResponseCache

    spec = read_spec({**SPEC, "models": MODELS[:1], "cases": SPEC["cases"][:1]})
    with ResponseCache(tmp_path / "c.sqlite") as cache:
        cell, _ = run_cell(spec.models[0], spec.cases[0], spec, tmp_path, {}, False, cache=cache)
        assert cell.probe.reading == "infers and uses" and cell.probe.sent == 3 * LIMIT
        assert len(cache) == cell.sent + cell.probe.sent == 2 * 3 * LIMIT  # the run and the probe, one cache


def test_the_probe_off_by_default():
    spec = read_spec({"models": MODELS[:1], "cases": [{"name": "echo", "probe": True}, {"name": "education"}]})
    assert not spec.probe and [spec.probes(c) for c in spec.cases] == [True, False]


BAD = [
    ({"name": "m", "backend": "simulated", "probe_accuracy": 1.5},
     r"`models\[0\].probe_accuracy` must be a probability in \[0, 1\], got 1.5"),
    ({"name": "m", "backend": "simulated", "probe_accuracy": -0.1}, r"`models\[0\].probe_accuracy` must be a number"),
    ({"name": "m", "backend": "simulated", "probe_accuracy": "high"}, r"`models\[0\].probe_accuracy` must be a num"),
    ({"name": "m", "backend": "openai", "probe_accuracy": 0.5},
     r"`models\[0\].probe_accuracy` is a key of backend = \"simulated\" only"),
]


@pytest.mark.parametrize(("model", "message"), BAD)
def test_bad_probe_accuracy_names_the_key(model, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        bench({"models": [model], "cases": [{"name": "echo"}]}, out=tmp_path / "never", progress=False)
    assert not (tmp_path / "never").exists()


@pytest.mark.parametrize(("spec", "message"), [
    ({"settings": {"probe": "yes"}}, r"`settings.probe` must be true or false, got 'yes'"),
    ({"settings": {"probe": 1}}, r"`settings.probe` must be true or false, got 1"),
    ({"cases": [{"name": "echo", "probe": "no"}]}, r"`cases\[0\].probe` must be true or false"),
])
def test_bad_probe_flag_names_the_key(spec, message, tmp_path):
    full = {"models": MODELS[:1], "cases": [{"name": "echo"}], **spec}
    with pytest.raises(ValueError, match=message):
        bench(full, out=tmp_path / "never", progress=False)


def test_reading_and_cell_probe_checks():
    assert [reading(a, b) for a in (True, False) for b in (True, False)] == list(READINGS.values())
    assert all("not" not in r or "not shown" in r for r in READINGS.values())  # never "does not use"
    with pytest.raises(TypeError, match="`can_infer` and `does_use` must be True or False"):
        reading(None, True)
    with pytest.raises(TypeError, match="`probe` must be a mapping"):
        CellProbe.from_dict([1])


def test_a_probe_whose_requests_fail_keeps_the_cell_and_is_retried(tmp_path, monkeypatch, capsys):
    from ipcausal.backends.base import BackendError
    from ipcausal.cli import main

    orig = SimulatedModel.generate

    def down_for_probes(sim, requests):
        if any("[background probe]" in r.messages[-1]["content"] for r in requests):
            raise BackendError("probe outage")
        return orig(sim, requests)

    monkeypatch.setattr(SimulatedModel, "generate", down_for_probes)
    spec = {**SPEC, "models": MODELS[:1], "cases": SPEC["cases"][:1]}
    rep = bench(spec, out=tmp_path, progress=False)
    cell = rep.cell("infers-uses", "education")
    assert cell.status == "ok" and any(g.reject for g in cell.groups)  # the cell's own results stand
    p = cell.probe
    assert (p.n, p.failed, p.can_infer, p.reading, p.does_use) == (0, 3 * LIMIT, None, None, True)
    toml = tmp_path / "b.toml"
    toml.write_text('[settings]\nprobe = true\n[[models]]\nname = "infers-uses"\nbackend = "simulated"\n'
                    f'effect = 2.0\nprobe_accuracy = 1.0\n[[cases]]\nname = "education"\nlimit = {LIMIT}\n')
    assert main(["bench", str(toml), "-o", str(tmp_path), "--no-progress"]) == 3
    cap = capsys.readouterr()
    assert "the probe of 1 cell(s) did not finish" in cap.err and "no probe answer" in cap.out
    monkeypatch.undo()  # the model answers again: the rerun asks only the probe
    count = Counter(monkeypatch)
    assert main(["bench", str(toml), "-o", str(tmp_path), "--no-progress"]) == 0
    assert count.sent == count.probes == 3 * LIMIT
    assert BenchReport.read(tmp_path).cell("infers-uses", "education").probe.reading == "infers and uses"
