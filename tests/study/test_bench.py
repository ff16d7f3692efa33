"""IP-Bench (issue 20 items 1-2): bench() over simulated models, resume, failed cells, the spec checks."""

from __future__ import annotations

import sqlite3
import threading

import numpy as np
import pytest

from ipcausal.backends.base import BackendError
from ipcausal.pairs import PairSet
from ipcausal.study.bench import bench
from ipcausal.study.bench import SCHEMA, BenchReport
from ipcausal.study.bench import BenchSpec, read_spec
from ipcausal.study.compare import compare_runs
from ipcausal.testing import SimulatedModel

MODELS = [{"name": "effect", "backend": "simulated", "effect": 2.0},
          {"name": "null", "backend": "simulated", "effect": 0.0, "seed": 1}]
CASES = [{"name": "echo", "limit": 8}, {"name": "education", "limit": 8}]
SPEC = {"settings": {"alpha": 0.05, "seed": 0}, "models": MODELS, "cases": CASES}


class Counter:
    """Counts the requests that reach the simulator (wraps SimulatedModel.generate)."""

    def __init__(self, monkeypatch, fail_after=None):
        self.sent, self.fail_after, orig = 0, fail_after, SimulatedModel.generate
        lock = threading.Lock()  # the models run in threads

        def generate(sim, requests):
            out = []
            for r in requests:
                with lock:
                    if self.fail_after is not None and self.sent >= self.fail_after:
                        raise BackendError("simulated outage")
                    self.sent += 1
                out += orig(sim, [r])
            return out

        monkeypatch.setattr(SimulatedModel, "generate", generate)


@pytest.fixture(scope="module")
def done(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    return out, bench(SPEC, out=out, progress=False)


def test_verdicts_effect_rejects_null_does_not(done):
    _, rep = done
    assert rep.models == ("effect", "null") and rep.cases == ("echo", "education") and not rep.failed
    for case in rep.cases:
        assert any(g.reject for g in rep.cell("effect", case).groups), case
        assert not any(g.reject for g in rep.cell("null", case).groups), case
    # education is unethical: IP present is misaligned (possibility 3); a non-rejection is never "aligned"
    assert rep.cell("effect", "education").alignment == "misaligned (possibility 3)"
    assert rep.cell("null", "education").alignment == "inconclusive"
    assert rep.cell("effect", "echo").stance == "mixed" and "desired: aligned" in rep.cell("effect", "echo").alignment


def test_cells_are_run_folders_and_groups_equal_their_reports(done):
    from ipcausal.study.results import Report

    out, rep = done
    for c in rep.cells:
        saved = Report.read(out / c.report)
        assert [(g.group, g.n, g.effect, g.reject) for g in saved.groups] == \
               [(g.group, g.n, g.effect, g.reject) for g in c.groups]
        assert (out / c.folder / "pairs.jsonl").is_file() and (out / c.folder / "responses.jsonl").is_file()
    assert sorted(p.name for p in (out / "cache").iterdir()) == ["effect.sqlite", "null.sqlite"]


def test_comparisons_equal_compare_runs_on_the_cells(done):
    out, rep = done
    for case in rep.cases:
        runs = {m: PairSet.read(out / "cells" / m / case / "pairs.jsonl") for m in rep.models}
        ref = compare_runs(runs, rng=0)
        rows = [x for x in rep.comparisons if x.case == case]
        assert [x.group for x in rows] == list(ref) and all((x.model_a, x.model_b) == ("effect", "null") for x in rows)
        for x in rows:
            r = ref[x.group]
            assert x.difference == pytest.approx(r.differences[0]) and x.pvalue == pytest.approx(r.pair_pvalues[0])
            assert x.pvalue_adjusted == pytest.approx(r.adjusted_pvalues[0])
            assert x.pvalue_holm == pytest.approx(r.pair_pvalues_holm[0])
    # the effect model's Δ exceeds the null model's on education's ordered backgrounds
    assert any(x.pvalue_adjusted <= 0.05 for x in rep.comparisons if x.case == "education")


def test_files_and_read_back(done):
    import pandas as pd

    out, rep = done
    back = BenchReport.read(out / "bench.json")
    assert back.models == rep.models and back.comparisons == rep.comparisons
    assert [c.groups for c in back.cells] == [c.groups for c in rep.cells]
    csv = pd.read_csv(out / "bench.csv")
    assert list(csv.columns[:3]) == ["model", "case", "group"] and len(csv) == sum(len(c.groups) for c in rep.cells)
    assert set(pd.read_csv(out / "comparisons.csv").columns) >= {"pvalue_adjusted", "pvalue_holm"}


def test_read_refuses_another_schema(tmp_path):
    (tmp_path / "bench.json").write_text('{"schema": "ipcausal.bench/0"}')
    with pytest.raises(ValueError, match=f"not a bench report of schema '{SCHEMA}'"):
        BenchReport.read(tmp_path)


def test_rerun_sends_no_request_again(tmp_path, monkeypatch):
    bench(SPEC, out=tmp_path, progress=False)
    rows = {p.name: sqlite3.connect(p).execute("select count(*) from samples").fetchone()[0]
            for p in (tmp_path / "cache").iterdir()}
    first = (tmp_path / "bench.csv").read_text()
    count = Counter(monkeypatch)
    rep = bench(SPEC, out=tmp_path, progress=False)
    assert count.sent == 0 and all(c.sent == 0 for c in rep.cells)
    assert rows == {p.name: sqlite3.connect(p).execute("select count(*) from samples").fetchone()[0]
                    for p in (tmp_path / "cache").iterdir()}
    assert (tmp_path / "bench.csv").read_text() == first


def test_an_interrupted_bench_resumes_without_resending(tmp_path, monkeypatch):
    full = Counter(monkeypatch)
    bench(SPEC, out=tmp_path / "full", progress=False)
    total = full.sent  # distinct requests (a prompt in two pairs is asked once)
    monkeypatch.undo()
    broken = Counter(monkeypatch, fail_after=30)  # the backend goes down after 30 answers
    rep = bench(SPEC, out=tmp_path / "b", progress=False)
    assert broken.sent == 30 and rep.failed
    assert sum(c.sent or 0 for c in rep.cells) == 30
    monkeypatch.undo()  # the backend is back
    again = Counter(monkeypatch)
    rep = bench(SPEC, out=tmp_path / "b", progress=False)
    assert not rep.failed and again.sent == total - 30
    assert (tmp_path / "b" / "bench.csv").read_text() == (tmp_path / "full" / "bench.csv").read_text()


def test_a_failed_cell_is_reported_and_the_rest_finish(tmp_path):
    spec = {**SPEC, "models": MODELS + [{"name": "down", "backend": "openai", "base_url": "http://127.0.0.1:9/v1",
                                         "model": "m"}]}
    rep = bench(spec, out=tmp_path, progress=False)
    assert {(c.model, c.case) for c in rep.failed} == {("down", "echo"), ("down", "education")}
    assert all("127.0.0.1:9" in c.error for c in rep.failed)
    assert all(c.status == "ok" for c in rep.cells if c.model != "down")
    assert {x.model_b for x in rep.comparisons} == {"null"}  # compared on the models that answered
    assert "down,echo,,,,,,,,,,failed" in (tmp_path / "bench.csv").read_text()


def test_spec_from_toml_resolves_source_next_to_it(tmp_path):
    from ipcausal.cases import get_case

    get_case("echo").source(given=False).load(0, 4).write(tmp_path / "p.jsonl")
    (tmp_path / "b.toml").write_text('[[models]]\nname = "m"\nbackend = "simulated"\n\n'
                                     '[[cases]]\nname = "echo"\nsource = "p.jsonl"\n')
    spec = read_spec(tmp_path / "b.toml")
    assert spec.cases[0].source == str(tmp_path / "p.jsonl")


BAD = [
    ({"models": [], "cases": CASES}, r"`models` must be a non-empty array of tables"),
    ({"models": MODELS}, r"`cases` must be a non-empty array"),
    ({"models": MODELS, "cases": CASES, "extra": 1}, r"`bench file`: unknown key\(s\) extra"),
    ({"models": [{"name": "m", "backend": "gpt"}], "cases": CASES}, r"`models\[0\].backend` must be one of"),
    ({"models": [{"name": "a/b", "backend": "simulated"}], "cases": CASES}, r"`models\[0\].name` must be a label"),
    ({"models": [{"name": "m", "backend": "simulated", "temp": 1}], "cases": CASES},
     r"`models\[0\]`: unknown key\(s\) temp"),
    ({"models": [{"name": "m", "backend": "openai", "effect": 1}], "cases": CASES},
     r"`models\[0\].effect` is a key of backend = \"simulated\" only"),
    ({"models": [{"name": "m", "backend": "local", "base_url": "http://x"}], "cases": CASES},
     r"`models\[0\].base_url` is a key of backend = \"openai\" only"),
    ({"models": [{"name": "m", "backend": "local", "api_key_env": "KEY"}], "cases": CASES},
     r"`models\[0\].api_key_env` is a key of backend = \"openai\" only"),
    ({"models": [{"name": "m", "backend": "openai", "api_key_env": "sk-123"}], "cases": CASES},
     r"`models\[0\].api_key_env` must be the NAME of an environment variable"),
    ({"models": [{"name": "m", "backend": "openai", "price_input": 1.0}], "cases": CASES},
     r"`models\[0\].price_input` and `models\[0\].price_output` go together"),
    ({"models": [{"name": "m", "backend": "openai", "concurrency": 0}], "cases": CASES},
     r"`models\[0\].concurrency` must be an integer >= 1"),
    ({"models": [{"name": "m", "backend": "vllm"}], "cases": CASES}, r"`models\[0\].model` is required"),
    ({"models": MODELS + MODELS[:1], "cases": CASES}, r"`models\[\].name` must be unique, 'effect'"),
    ({"models": MODELS, "cases": [{"name": "farm"}]}, r"`cases\[0\].name`: `case` must be one of"),
    ({"models": MODELS, "cases": [{"name": "echo", "limit": 0}]}, r"`cases\[0\].limit` must be an integer >= 1"),
    ({"models": MODELS, "cases": [{"name": "echo", "margin": -1}]}, r"`cases\[0\].margin` must be a positive number"),
    ({"models": MODELS, "cases": [{"name": "echo", "source": "nope.jsonl"}]}, r"`cases\[0\].source`: .* is not a file"),
    ({"models": MODELS, "cases": CASES + CASES[:1]}, r"`cases\[\].name` must be unique"),
    ({"models": MODELS, "cases": CASES, "settings": {"alpha": 1.5}}, r"`settings.alpha` must be a level in \(0, 1\)"),
    ({"models": MODELS, "cases": CASES, "settings": {"correction": "fdr"}}, r"`settings.correction` must be one of"),
    ({"models": MODELS, "cases": CASES, "settings": {"seed": -1}}, r"`settings.seed` must be an integer >= 0"),
]


@pytest.mark.parametrize(("spec", "message"), BAD)
def test_spec_errors_name_the_key(spec, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        bench(spec, out=tmp_path / "never", progress=False)
    assert not (tmp_path / "never").exists()  # checked before anything is written


def test_other_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="`spec` must be a BenchSpec, a mapping or a TOML file path"):
        read_spec(3)
    (tmp_path / "bad.toml").write_text("[[models]\n")
    with pytest.raises(ValueError, match="`spec`: .* is not valid TOML"):
        read_spec(tmp_path / "bad.toml")
    with pytest.raises(ValueError, match="`jobs` must be a positive integer"):
        bench(SPEC, out=tmp_path, jobs=0)
    (tmp_path / "f").write_text("")
    with pytest.raises(ValueError, match="`out` must be a folder"):
        bench(SPEC, out=tmp_path / "f")
    assert isinstance(read_spec(SPEC), BenchSpec) and np.isclose(read_spec(SPEC).alpha, 0.05)


def test_cost_estimate_and_limit(tmp_path):
    from ipcausal.cases import get_case
    from ipcausal.study.bench import estimate_cost

    priced = {"name": "api", "backend": "openai", "model": "m", "base_url": "http://127.0.0.1:9/v1",
              "price_input": 1.0, "price_output": 2.0}
    spec = {"models": MODELS + [priced], "cases": CASES[:1]}
    ps = get_case("echo").source(given=False).load(0, 8)
    texts = set(ps["x_i"]) | set(ps["x_j"])
    want = (sum(len(t) // 4 + 8 for t in texts) * 1.0
            + len(texts) * get_case("echo").source(given=False).max_tokens * 2.0) / 1e6
    assert estimate_cost(spec) == {"api": pytest.approx(want)}
    assert estimate_cost(SPEC) == {}
    with pytest.raises(ValueError, match=r"`cost_limit`: the priced models may cost up to .* nothing was sent"):
        bench(spec, out=tmp_path / "o", cost_limit=want / 2, progress=False)
    assert not (tmp_path / "o").exists()
    with pytest.raises(ValueError, match="`cost_limit` must be a non-negative number"):
        bench(spec, out=tmp_path / "o", cost_limit=-1.0)
