"""ipcausal.audit and `ipcausal audit`: early stops, full runs, equivalence, resume, kill -9, the Report."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

import ipcausal
from ipcausal.backends import ResponseCache
from ipcausal.stats.results import SequentialSignResult, SequentialTestResult
from ipcausal.scoring import get_scorer
from ipcausal.study.audit import STOP_REASONS, audit
from ipcausal.study.options import AuditSettings, RunOptions
from ipcausal.testing import SimulatedModel

REPO = Path(__file__).resolve().parents[2]


class Counting:
    """A backend that counts (and remembers) every prompt it is asked, then lets ``inner`` answer."""

    def __init__(self, inner):
        self.inner, self.kind, self.model = inner, inner.kind, inner.model
        self.prompts: list[str] = []

    def generate(self, requests):
        self.prompts.extend(r.messages[-1]["content"] for r in requests)
        return self.inner.generate(requests)


def prompts_only(sim, n, rng=0):
    """The simulated study's pairs without its responses and scores (what an auditor starts from)."""
    return sim.study(n=n, rng=rng).drop_columns("y_i", "y_j", "score_i", "score_j", "model")


_SETTINGS = ("alpha", "correction", "margin", "batch_size", "max_pairs", "m0", "alternative", "method", "cluster",
             "order")
_OPTIONS = ("config", "system", "concurrency", "cache")
_SCORER = ("rater", "bound", "k", "backend_of_judge", "retries")


def run_audit(ps, *, backend, scorer, **kw):
    """The audit with its options given flat (as the tests read best): split into their objects."""
    made = {("backend" if k == "backend_of_judge" else k): kw.pop(k) for k in list(kw) if k in _SCORER}
    sets = {k: kw.pop(k) for k in list(kw) if k in _SETTINGS}
    opts = {k: kw.pop(k) for k in list(kw) if k in _OPTIONS}
    return audit(ps, backend=backend, scorer=get_scorer(scorer, **made) if isinstance(scorer, str) else scorer,
                 settings=kw.pop("settings") if "settings" in kw else AuditSettings(**sets),
                 options=kw.pop("options") if "options" in kw else RunOptions(**opts), **kw)


def interval_audit(sim, ps, **kw):
    kw.setdefault("rng", 0)
    return run_audit(ps, backend=kw.pop("backend", sim), scorer="essay", rater=sim.score, bound=4, **kw)


# -- stopping ----------------------------------------------------------------------------------
def test_strong_effect_stops_early_and_sends_far_fewer_requests():
    sim = SimulatedModel(effect=1.5, levels=5, seed=1)
    ps = prompts_only(sim, 500)
    counting = Counting(sim)
    res = interval_audit(sim, ps, backend=counting, batch_size=16)
    g = res.report.groups[0]
    assert g.sequential.stop_reason == "rejected" and g.reject and res.report.ip_detected
    assert len(counting.prompts) == res.counts.requests_sent == 2 * g.sequential.n_sent
    assert len(counting.prompts) < 0.2 * 2 * len(ps)  # far fewer than the full design's 1,000
    assert len(set(counting.prompts)) == len(counting.prompts)  # nothing asked twice
    assert g.sequential.e_value >= 20 and g.pvalue <= 0.05 and g.ci_low > 0  # the CS excludes 0 at a rejection
    assert res.report.audit.stopped == "decided" and res.counts.requests_saved == 1000 - 2 * g.sequential.n_sent


def test_no_effect_runs_to_the_end():
    sim = SimulatedModel(effect=0.0, levels=5, seed=1)
    ps = prompts_only(sim, 150, rng=1)
    counting = Counting(sim)
    res = interval_audit(sim, ps, backend=counting, rng=1)
    g = res.report.groups[0]
    q = g.sequential
    assert (q.stop_reason, q.n_sent, q.n_available, g.n) == ("exhausted", 150, 150, 150)
    assert len(counting.prompts) == 300 and not res.report.ip_detected and g.pvalue > 0.05
    assert g.ci_low < 0 < g.ci_high
    # the e-process path ends at the last batch with the e-value reported
    assert q.path_n[0] == 0 and q.path_e[0] == 1.0 and q.path_n[-1] == 150 and q.path_e[-1] == pytest.approx(q.e_value)


def test_e_process_equals_the_sequential_test_on_the_same_stream():
    sim = SimulatedModel(effect=0.0, levels=5, seed=3)
    res = interval_audit(sim, prompts_only(sim, 80, rng=3), rng=7)
    scored = res.scored.to_frame()
    d = scored["score_j"].to_numpy(float) - scored["score_i"].to_numpy(float)  # already in the order sent
    a, b = res.report.groups[0].background_a, res.report.groups[0].background_b
    sign = np.where(scored["background_i"].to_numpy() == a, 1.0, -1.0)
    assert set(scored["background_j"]) | set(scored["background_i"]) == {a, b}
    oracle = ipcausal.stats.sequential_test(d * sign, bound=4, alpha=0.05)
    g = res.report.groups[0]
    assert g.pvalue == pytest.approx(oracle.pvalue) and g.sequential.e_value == pytest.approx(oracle.e_value)


def test_three_backgrounds_e_holm_rejects_the_shifted_pairs_only():
    sim = SimulatedModel(effect={"c": 2.0}, levels=5, seed=5, backgrounds=("a", "b", "c"))
    counting = Counting(sim)
    res = interval_audit(sim, prompts_only(sim, 300, rng=1), backend=counting)
    by = {g.group: g for g in res.report.groups}
    assert set(by) == {"a vs b", "a vs c", "b vs c"}
    assert by["a vs b"].sequential.stop_reason == "exhausted" and not by["a vs b"].reject
    for name in ("a vs c", "b vs c"):
        g = by[name]
        assert g.sequential.stop_reason == "rejected" and g.sequential.n_sent < 100 and g.pvalue_adjusted <= 0.05
    assert len(counting.prompts) == 2 * sum(g.sequential.n_sent for g in by.values()) < 2 * 900
    assert res.report.correction == "e-holm" and res.report.audit.threshold_all == pytest.approx(60.0)


def test_equivalence_stop_with_a_margin():
    sim = SimulatedModel(effect=0.0, levels=5, seed=4, noise=0.3)
    res = interval_audit(sim, prompts_only(sim, 600), margin=0.3, batch_size=20)
    g = res.report.groups[0]
    assert g.sequential.stop_reason == "equivalent" and not g.reject
    assert -0.3 < g.ci_low and g.ci_high < 0.3 and g.sequential.n_sent < 600
    # without the margin the same audit goes on to the end
    again = interval_audit(sim, prompts_only(sim, 600), batch_size=20)
    assert again.report.groups[0].sequential.stop_reason == "exhausted"


def test_max_pairs_caps_the_audit():
    sim = SimulatedModel(effect=0.0, levels=5, seed=1)
    res = interval_audit(sim, prompts_only(sim, 200), max_pairs=50, batch_size=16)
    g = res.report.groups[0]
    assert (g.sequential.stop_reason, g.sequential.n_sent, res.report.audit.stopped) == ("max_pairs", 50, "max_pairs")
    assert g.sequential.path_n == (0, 16, 32, 48, 50)  # the last batch is cut to the cap
    assert g.sequential.stop_reason in STOP_REASONS


def test_similarity_scorer_uses_the_sequential_sign_test():
    sim = SimulatedModel(effect=1.5, levels=5, seed=1)
    res = run_audit(prompts_only(sim, 300), backend=sim, scorer="scale", k=5, rng=0)
    g = res.report.groups[0]
    assert isinstance(g.detail, SequentialSignResult) and g.detail.m0 == 0.8 and g.detail.alternative == "less"
    assert g.sequential.stop_reason == "rejected" and g.sequential.n_sent < 300
    assert 0.5 < g.effect <= 1.0  # share below m0
    assert res.report.outcome == "similarity" and res.report.m0 == 0.8


def test_repeated_samples_use_the_mean_of_each_side():
    from ipcausal.backends import GenerationConfig

    sim = SimulatedModel(effect=0.0, levels=5, seed=2)
    cfg = GenerationConfig(n=3, temperature=1.0, max_tokens=16)
    res = interval_audit(sim, prompts_only(sim, 40), config=cfg, batch_size=40)
    scored = res.scored.to_frame()
    d = np.array([np.mean(b) - np.mean(a) for a, b in zip(scored["scores_i"], scored["scores_j"])])
    first = scored["score_j"].to_numpy(float) - scored["score_i"].to_numpy(float)
    assert not np.allclose(d, first)  # the samples differ, and the audit used their means
    sign = np.where(scored["background_i"].to_numpy() == res.report.groups[0].background_a, 1.0, -1.0)
    assert res.report.groups[0].effect == pytest.approx(float(np.mean(d * sign)))


def test_clusters_are_one_observation_each():
    sim = SimulatedModel(effect=0.0, levels=5, seed=2)
    ps = prompts_only(sim, 90)
    ps = ps.with_columns(question_id=[f"q{k // 3}" for k in range(len(ps))])
    res = interval_audit(sim, ps, cluster="question_id", batch_size=10)
    g = res.report.groups[0]
    assert g.unit == "clusters" and g.n_clusters == 30 and g.n == 90
    assert g.detail.bound == 12.0  # bound 4 × 3 pairs per cluster
    # every batch holds whole clusters: 10 pairs asked means 4 clusters (12 pairs) sent
    assert res.counts.batches == 8 and g.sequential.path_n[1] == 12


def test_released_echo_outputs_replayed_reach_the_verdict_with_few_pairs():
    """GPT-4's released echo-chamber correctness (3,704 pairs, two per question) served as responses."""
    from ipcausal.backends import Choice, Response
    from ipcausal.study.reproduce import load_case3

    root = Path(os.environ.get("IPCAUSAL_SHARED_DATA", REPO.parent / "shared" / "data")) / "jiarui-liu-IP"
    if not (root / "case_3").is_dir():
        pytest.skip("the released outputs (../shared/data/jiarui-liu-IP) are not here")
    df = load_case3(root).to_frame()
    sub = df[df["model"] == "gpt-4-0613"]
    answers = dict(zip(sub["x_i"], sub["score_i"])) | dict(zip(sub["x_j"], sub["score_j"]))

    class Released:
        kind, model = "replay", "gpt-4-0613"

        def generate(self, requests):
            return [Response((Choice(f"Answer: {answers[r.messages[-1]['content']]:g}"),), model=self.model)
                    for r in requests]

    pairs = ipcausal.PairSet.from_frame(sub.drop(columns=["score_i", "score_j", "model"]))
    counting = Counting(Released())
    g = run_audit(pairs, backend=counting, scorer="essay", rater=SimulatedModel.read, bound=1, rng=0,
                  cluster="question_id").report.groups[0]
    assert g.sequential.stop_reason == "rejected" and g.effect < 0  # correctness drops under the false belief
    assert len(counting.prompts) == 2 * g.sequential.n_sent < 0.1 * 2 * len(sub)


def test_a_prompt_shared_by_two_pairs_is_asked_once():
    sim = SimulatedModel(effect=0.0, levels=5, seed=1, backgrounds=("a", "b", "c"))
    recs = []
    for q in range(30):  # the a-prompt of every question serves both the a-b and the a-c pair
        x_a, x_b, x_c = (sim.prompt(f"q{q}", bg) for bg in ("a", "b", "c"))
        recs += [{"pair_id": f"{q}ab", "background_i": "a", "background_j": "b", "x_i": x_a, "x_j": x_b},
                 {"pair_id": f"{q}ac", "background_i": "a", "background_j": "c", "x_i": x_a, "x_j": x_c}]
    counting = Counting(sim)
    res = interval_audit(sim, ipcausal.PairSet.from_records(recs), backend=counting, batch_size=8)
    assert res.counts.pairs_sent == 60 and res.counts.requests_sent == 120
    assert len(counting.prompts) == len(set(counting.prompts)) == 90 == res.counts.requests_new


# -- resume ------------------------------------------------------------------------------------
def test_resumed_audit_replays_the_cache_in_the_same_order_and_never_asks_twice(tmp_path):
    sim = SimulatedModel(effect=0.6, levels=5, seed=8)
    ps = prompts_only(sim, 400)
    cache = tmp_path / "cache.sqlite"
    first = Counting(sim)
    part = interval_audit(sim, ps, backend=first, cache=cache, max_pairs=64, batch_size=16)
    assert part.counts.pairs_sent == 64 and len(first.prompts) == 128
    second = Counting(sim)
    full = interval_audit(sim, ps, backend=second, cache=cache, batch_size=16)
    fresh = interval_audit(sim, ps, batch_size=16)
    assert not set(first.prompts) & set(second.prompts)
    assert len(second.prompts) == full.counts.requests_sent - 128 == full.counts.requests_new
    assert full.responses["pair_id"].tolist()[:64] == part.responses["pair_id"].tolist()
    assert full.report.to_dict() == fresh.report.to_dict()
    with ResponseCache(cache) as rc:
        assert len(rc) == full.counts.requests_sent


# -- the Report --------------------------------------------------------------------------------
@pytest.mark.parametrize("scorer", ["essay", "scale"])
def test_report_round_trip_with_the_new_fields(tmp_path, scorer):
    sim = SimulatedModel(effect=1.0, levels=5, seed=1)
    kw = {"rater": sim.score, "bound": 4} if scorer == "essay" else {"k": 5}
    report = run_audit(prompts_only(sim, 120), backend=sim, scorer=scorer, rng=0, **kw).report
    back = ipcausal.Report.read(report.write(tmp_path / "r.json"))
    assert back.to_dict() == report.to_dict()
    g, h = report.groups[0], back.groups[0]
    assert type(h.detail) is (SequentialTestResult if scorer == "essay" else SequentialSignResult)
    assert (h.test, h.sequential) == (g.test, g.sequential)
    assert back.method == "sequential" and back.audit == report.audit and back.audit.pairs_available == 120
    assert len(report.to_frame()) == 1


def test_html_report_has_the_e_process_figure(tmp_path):
    from ipcausal.report import Section, format_html

    sim = SimulatedModel(effect={"c": 2.0}, levels=5, seed=5, backgrounds=("a", "b", "c"))
    report = interval_audit(sim, prompts_only(sim, 60)).report
    html = format_html(Section("audit", report))
    assert "e-process of each background pair" in html and html.count("data:image/png") >= 2
    assert "pairs sent" in html and "rejected" in html and "exhausted" in html


def test_progress_bar_shows_each_groups_e_value():
    class Bar:
        def __init__(self):
            self.n, self.texts = 0, []

        def update(self, k):
            self.n += k

        def set_postfix_str(self, text, refresh=True):
            self.texts.append(text)

    sim = SimulatedModel(effect=0.0, levels=5, seed=1)
    bar = Bar()
    interval_audit(sim, prompts_only(sim, 40), progress=bar, batch_size=16)
    assert bar.n == 40 and len(bar.texts) == 3 and bar.texts[-1].startswith("american~british e=")


# -- validation --------------------------------------------------------------------------------
def test_default_bounds():
    assert get_scorer("mcq").bound == 1.0 and get_scorer("essay").bound == 5.0
    assert get_scorer("embedding").bound is None and get_scorer("essay", rater=len).bound is None
    sim = SimulatedModel(effect=0.0, levels=5, seed=1)
    with pytest.raises(ValueError, match="`bound` is required for scorer 'essay\\(rater=len\\)'"):
        audit(prompts_only(sim, 10), backend=sim, scorer=get_scorer("essay", rater=len))


@pytest.mark.parametrize("kwargs, error, match", [
    ({"pairs": 3}, TypeError, "`pairs` must be a PairSet"),
    ({"backend": object()}, TypeError, "`backend` must implement"),
    ({"scorer": "nope"}, ValueError, "`scorer` must be one of"),
    ({"scorer": 3}, ValueError, "`scorer` must be one of"),
    ({"bound": 0}, ValueError, "`bound` must be > 0"),
    ({"bound": float("nan")}, ValueError, "`bound` must be a finite number"),
    ({"rater": None, "bound": None, "scorer": "essay"}, None, None),
    ({"alpha": 1.5}, ValueError, "`alpha`"),
    ({"correction": "holm"}, ValueError, "`correction` must be one of"),
    ({"margin": -1}, ValueError, "`margin` must be a positive finite number"),
    ({"batch_size": 0}, ValueError, "`batch_size`"),
    ({"batch_size": 2.5}, TypeError, "`batch_size`"),
    ({"max_pairs": 0}, ValueError, "`max_pairs`"),
    ({"rng": "seed"}, TypeError, "`rng`"),
    ({"cache": 5}, TypeError, "`cache` must be a path"),
    ({"config": {}}, TypeError, "`config` must be a GenerationConfig"),
    ({"system": " "}, ValueError, "`system` must be a non-empty string"),
    ({"concurrency": 0}, ValueError, "`concurrency`"),
    ({"cluster": "nope"}, ValueError, "`cluster`"),
    ({"order": ["x", "y"]}, ValueError, "`order`"),
    ({"m0": 1.5}, ValueError, r"`m0` must lie in \(0, 1\]"),
    ({"alternative": "up"}, ValueError, "`alternative` must be one of"),
    ({"method": "kelly"}, ValueError, "`method` must be one of"),
    ({"unparseable": "drop"}, ValueError, "unparseable"),
    ({"backend_of_judge": 1}, TypeError, "the scorer's `backend` \\(the judge\\) must implement"),
    ({"settings": {}}, TypeError, "`settings` must be an AuditSettings"),
    ({"options": {}}, TypeError, "`options` must be a RunOptions"),
    ({"progress": 1}, TypeError, "`progress` must be True, False"),
    ({"retries": -1}, ValueError, "`retries`"),
])
def test_every_argument_is_validated_before_the_first_request(kwargs, error, match):
    sim = SimulatedModel(effect=0.0, levels=5, seed=1)
    counting = Counting(sim)
    args = dict(backend=counting, scorer="essay", rater=sim.score, bound=4, rng=0)
    args.update(kwargs)
    ps = args.pop("pairs", prompts_only(sim, 10))
    if kwargs.get("rater", 1) is None:  # the essay scorer's own rater on text: bound 5 from its scale
        report = run_audit(ps, **args, max_pairs=4).report
        assert report.audit.bound == 5.0
        return
    with pytest.raises(error, match=match):
        run_audit(ps, **args)
    assert counting.prompts == []


def test_a_batch_where_every_request_fails_stops_the_audit(tmp_path):
    from ipcausal.backends import BackendError

    class Down:
        kind, model = "down", "m"

        def generate(self, requests):
            raise BackendError("HTTP 503: service unavailable")

    sim = SimulatedModel(effect=0.0, levels=5, seed=1)
    with pytest.raises(BackendError, match="every request of a batch failed .*HTTP 503"):
        run_audit(prompts_only(sim, 100), backend=Down(), scorer="essay", rater=sim.score, bound=4,
                  cache=tmp_path / "c.sqlite")


def test_bound_rules_for_similarity_and_custom_raters():
    sim = SimulatedModel(effect=0.0, levels=5, seed=1)
    ps = prompts_only(sim, 10)
    with pytest.raises(ValueError, match="scorer 'scale' takes no option `bound`"):
        run_audit(ps, backend=sim, scorer="scale", k=5, bound=1)
    with pytest.raises(ValueError, match="`bound` is required for scorer 'essay\\(rater=score\\)'"):
        run_audit(ps, backend=sim, scorer="essay", rater=sim.score)
    with pytest.raises(ValueError, match="`margin` is on the scale of the share below m0"):
        run_audit(ps, backend=sim, scorer="scale", k=5, margin=0.6)
    with pytest.raises(ValueError, match="`bound` is too small"):
        run_audit(ps, backend=sim, scorer="essay", rater=sim.score, bound=0.5, rng=0)
    with pytest.raises(ValueError, match="`pairs` is empty"):
        run_audit(ps.head(0), backend=sim, scorer="essay", rater=sim.score, bound=4)


# -- the command line --------------------------------------------------------------------------
@pytest.fixture
def cli_sim(monkeypatch):
    import ipcausal.commands._common as common

    sim = SimulatedModel(effect=1.0, levels=5, seed=1)
    monkeypatch.setattr(common, "make_backend", lambda args, prefix="", **kw: None if prefix else sim)
    return sim


def test_cli_audit_end_to_end_and_rerun_from_the_cache(tmp_path, cli_sim, capsys):
    from ipcausal.cli import main

    pairs = tmp_path / "pairs.jsonl"
    prompts_only(cli_sim, 300).write(pairs)
    out = tmp_path / "out"
    argv = ["audit", str(pairs), "--scorer", "scale", "--k", "5", "-o", str(out), "--no-progress",
            "--price-input", "1", "--price-output", "2"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    report = ipcausal.Report.read(out / "report.json")
    g = report.groups[0]
    assert g.sequential.stop_reason == "rejected" and g.sequential.n_sent < 300
    assert f"requests: {2 * g.sequential.n_sent} of the full design's 600" in text and "saved:" in text
    assert "asked of the model in this run: " + str(2 * g.sequential.n_sent) in text
    assert {p.name for p in out.iterdir()} >= {"cache.sqlite", "responses.jsonl", "pairs.jsonl", "report.json",
                                               "report.html"}
    assert "e-process" in (out / "report.html").read_text(encoding="utf-8")
    assert len(ipcausal.PairSet.read(out / "responses.jsonl")) == g.sequential.n_sent
    assert main(argv) == 0
    assert "asked of the model in this run: 0," in capsys.readouterr().out
    assert ipcausal.Report.read(out / "report.json").to_dict() == report.to_dict()
    # `ipcausal report` renders the written audit again, without asking or testing anything
    assert main(["report", str(out / "report.json"), "-o", str(tmp_path / "again.md")]) == 0
    md = (tmp_path / "again.md").read_text(encoding="utf-8")
    assert "sequential" in md and "american vs british" in md
    assert main(["report", str(out / "report.json"), "-o", str(tmp_path / "again.html")]) == 0
    assert "e-process of each background pair" in (tmp_path / "again.html").read_text(encoding="utf-8")


def test_cli_audit_errors_are_one_line(tmp_path, cli_sim, capsys):
    from ipcausal.cli import main

    pairs = tmp_path / "pairs.jsonl"
    prompts_only(cli_sim, 10).write(pairs)
    assert main(["audit", str(pairs), "--scorer", "scale", "-o", str(tmp_path / "o"), "--price-input", "1"]) == 2
    assert "give both --price-input and --price-output" in capsys.readouterr().err
    assert main(["audit", str(pairs), "--scorer", "scale", "-o", str(tmp_path / "o"), "--no-progress"]) == 2
    assert "scorer 'scale' needs `k`" in capsys.readouterr().err
    assert main(["audit", str(pairs), "--scorer", "scale", "--k", "5", "--bound", "2", "-o",
                 str(tmp_path / "o")]) == 2
    assert "--bound applies to interval scorers only" in capsys.readouterr().err


def test_case_sequential(tmp_path, monkeypatch):
    import ipcausal.commands.case as case_cmd
    from ipcausal.cli import main

    sim = SimulatedModel(effect=1.0, levels=5, seed=1)
    monkeypatch.setattr(case_cmd, "make_backend", lambda args, prefix="", **kw: None if prefix else sim)
    out = tmp_path / "echo"
    assert main(["case", "echo", "--sequential", "--limit", "40", "--max-pairs", "20", "-o", str(out),
                 "--no-progress"]) == 0
    report = ipcausal.Report.read(out / "report.json")
    assert report.method == "sequential" and report.audit.pairs_sent <= 20
    assert all(g.test == "sequential" for g in report.groups) and (out / "report.html").exists()
    assert main(["case", "echo", "--max-pairs", "20", "-o", str(tmp_path / "x")]) == 2  # needs --sequential


# -- kill -9 and rerun -------------------------------------------------------------------------
_SCRIPT = """
import sys, time
import ipcausal.commands._common as common
from ipcausal.testing import SimulatedModel

class Slow:
    def __init__(self, log):
        self.inner = SimulatedModel(effect=0.0, levels=5, seed=11, noise=0.3)
        self.kind, self.model, self.log = self.inner.kind, self.inner.model, log

    def generate(self, requests):
        out = []
        for r in requests:
            time.sleep(0.01)
            with open(self.log, "a", encoding="utf-8") as f:
                f.write(r.messages[-1]["content"] + "\\n")
            out.extend(self.inner.generate([r]))
        return out

common.make_backend = lambda args, prefix="", **kw: None if prefix else Slow(sys.argv[1])
from ipcausal.cli import main
sys.exit(main(sys.argv[2:]))
"""


def _cached_prompts(cache: Path) -> list[str]:
    with sqlite3.connect(cache) as db:
        rows = db.execute("SELECT request FROM samples").fetchall()
        dup = db.execute("SELECT key FROM samples GROUP BY key HAVING COUNT(*) > 1").fetchall()
    assert dup == []
    return [json.loads(r[0])["messages"][-1]["content"] for r in rows]


def test_kill_9_during_cli_audit_then_rerun(tmp_path):
    sim = SimulatedModel(effect=0.0, levels=5, seed=11, noise=0.3)  # similarities near 1: never rejected
    ps = prompts_only(sim, 160)
    pairs = tmp_path / "pairs.jsonl"
    ps.write(pairs)
    script = tmp_path / "slow_audit.py"
    script.write_text(textwrap.dedent(_SCRIPT), encoding="utf-8")
    out = tmp_path / "out"
    argv = ["audit", str(pairs), "--scorer", "scale", "--k", "5", "--batch-size", "8", "--seed", "3",
            "-o", str(out), "--no-progress"]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    log1, log2 = tmp_path / "asked1.txt", tmp_path / "asked2.txt"
    proc = subprocess.Popen([sys.executable, str(script), str(log1), *argv], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 240
    while time.monotonic() < deadline:  # kill once a few batches are in the cache
        if (out / "cache.sqlite").exists() and log1.exists() and len(log1.read_text().splitlines()) >= 60:
            break
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    assert proc.poll() is None, "the audit finished before it could be killed"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)
    cached = set(_cached_prompts(out / "cache.sqlite"))
    assert 16 <= len(cached) < 320 and not (out / "report.json").exists()
    done = subprocess.run([sys.executable, str(script), str(log2), *argv], env=env, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    asked_again = log2.read_text(encoding="utf-8").splitlines()
    assert not cached & set(asked_again)  # nothing answered before the kill is asked again
    assert len(asked_again) == len(set(asked_again))
    final = _cached_prompts(out / "cache.sqlite")
    assert len(final) == len(set(final)) == len(cached) + len(asked_again)
    report = ipcausal.Report.read(out / "report.json")
    fresh = run_audit(ps, backend=sim, scorer="scale", k=5, batch_size=8, rng=3,
                      config=ipcausal.backends.GenerationConfig(max_tokens=256, seed=3)).report
    assert report.to_dict() == fresh.to_dict()  # the same verdict, the same numbers
    assert report.groups[0].sequential.stop_reason == "exhausted" and report.groups[0].sequential.n_sent == 160
    assert f"asked of the model in this run: {len(asked_again)}," in done.stdout


def test_audit_and_test_orient_a_group_by_the_one_rule():
    """A group stored mostly b -> a is oriented b -> a by both (study.groups.orient)."""
    sim = SimulatedModel(effect=1.0, levels=5, seed=1)
    df = prompts_only(sim, 40).to_frame()
    flip = df.index < 25  # 25 of 40 stored british -> american
    df.loc[flip, ["background_i", "background_j"]] = df.loc[flip, ["background_j", "background_i"]].to_numpy()
    df.loc[flip, ["x_i", "x_j"]] = df.loc[flip, ["x_j", "x_i"]].to_numpy()
    res = interval_audit(sim, ipcausal.PairSet.from_frame(df), batch_size=40, max_pairs=40)
    fixed = ipcausal.test(res.scored).groups[0]
    g = res.report.groups[0]
    assert (g.background_a, g.background_b) == (fixed.background_a, fixed.background_b) == ("british", "american")
    # a similarity has no direction: a one-sided similarity audit of pairs stored both ways runs
    sims = run_audit(ipcausal.PairSet.from_frame(df), backend=sim, scorer="scale", k=5, rng=0, max_pairs=16)
    assert sims.report.groups[0].sequential.n_sent == 16
