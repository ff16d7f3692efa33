"""IPEarlyStopping: inspect_ai's EarlyStopping protocol on the audit's e-processes.

Driven two ways: by hand (the protocol's four calls, in an order we choose), checked against
``sequential_update`` and ``e_holm`` fed the same Δ in the same order; and by real
``inspect_ai.eval`` runs against the simulator (model ``ipcausal/simulated``).
"""

from __future__ import annotations

import asyncio
import tempfile
from types import SimpleNamespace as NS
from typing import Any

import numpy as np
import pytest

pytest.importorskip("inspect_ai", reason="needs inspect-ai: pip install 'ipcausal[interop]'")

import inspect_ai  # noqa: E402
from inspect_ai.util import EarlyStop  # noqa: E402

import ipcausal  # noqa: E402
import ipcausal.interop.inspect_model  # noqa: E402,F401  (registers ipcausal/simulated without the entry point)
from ipcausal.interop.inspect import IPEarlyStopping, import_inspect, ip_task  # noqa: E402
from ipcausal.stats.betting import sequential_state, sequential_update  # noqa: E402
from ipcausal.stats.eholm import e_holm  # noqa: E402
from ipcausal.testing import SimulatedModel  # noqa: E402

# inspect's own retry helper warns once per sample on this tenacity version; not ours to fix
pytestmark = pytest.mark.filterwarnings("ignore:The 'initial' parameter is deprecated:DeprecationWarning")

NULL_RUNS = 20  # seeded tasks without an effect, in one inspect_ai.eval call (benchmarks/ runs more)


def _samples(groups: dict[tuple[str, str], int]) -> list[Any]:
    out = []
    for (a, b), n in groups.items():
        for k in range(n):
            for s, bg in (("i", a), ("j", b)):
                out.append(NS(id=f"{a}{b}{k}:{s}", input=f"q{k}",
                              metadata={"pair_id": f"{a}{b}{k}", "side": s, "background": bg, "pair": {"c": k // 2}}))
    return out


def _drive(es: IPEarlyStopping, samples: list[Any], value: Any, *, epochs: int = 1, task: Any = None,
           delay: int = 0) -> tuple[int, dict[str, Any]]:
    """Call the protocol like inspect does: schedule each sample in order, complete it ``delay`` samples later."""

    async def go() -> tuple[int, dict[str, Any]]:
        await es.start_task(task or NS(model="m", metadata={}), samples, epochs)
        ran, pending = 0, []
        for ep in range(1, epochs + 1):
            for s in samples:
                stop = await es.schedule_sample(s.id, ep)
                if stop is None:
                    ran += 1
                    pending.append((s.id, ep))
                else:
                    assert isinstance(stop, EarlyStop) and stop.id == s.id and stop.epoch == ep
                while len(pending) > delay:
                    sid, e = pending.pop(0)
                    await es.complete_sample(sid, e, {"sc": NS(score=NS(value=value(sid, e)))})
        for sid, e in pending:
            await es.complete_sample(sid, e, {"sc": NS(score=NS(value=value(sid, e)))})
        return ran, await es.complete_task()

    return asyncio.run(go())


def _coin(seed: int, p_j: float = 0.5) -> Any:
    """0/1 scores: side i correct with probability 1/2, side j with ``p_j`` (a fixed draw per sample id)."""
    cache: dict[str, float] = {}
    rng = np.random.default_rng(seed)

    def value(sid: str, epoch: int) -> float:
        if (sid, epoch) not in cache:
            cache[(sid, epoch)] = float(rng.random() < (p_j if sid.endswith(":j") else 0.5))
        return cache[(sid, epoch)]

    return value


def test_e_values_are_those_of_the_audit_e_process_and_e_holm() -> None:
    samples = _samples({("a", "b"): 40, ("a", "c"): 40})
    value = _coin(3, p_j=0.9)
    es = IPEarlyStopping(alpha=0.05, bound=1.0)
    ran, summary = _drive(es, samples, value, delay=3)
    # the oracle: each group's Δ in dataset order into sequential_update, then e-Holm across the groups
    states = []
    for g, (a, b) in enumerate((("a", "b"), ("a", "c"))):
        used = summary["groups"][g]["n"]
        deltas = [value(f"{a}{b}{k}:j", 1) - value(f"{a}{b}{k}:i", 1) for k in range(used)]
        states.append(sequential_update(sequential_state(bound=1.0, alpha=0.05), deltas))
    for g, st in enumerate(states):
        assert summary["groups"][g]["e_value"] == pytest.approx(st.e_value, rel=1e-12)
        assert summary["groups"][g]["pvalue"] == pytest.approx(st.pvalue, rel=1e-12)
    adjusted = e_holm([st.e_value for st in states], alpha=0.05).e_adjusted
    assert [g["e_adjusted"] for g in summary["groups"]] == pytest.approx(list(adjusted), rel=1e-12)
    assert summary["stopped"] == "decided" and all(g["stop_reason"] == "rejected" for g in summary["groups"])
    assert ran == summary["samples_run"] < len(samples) and summary["samples_saved"] == len(samples) - ran
    assert es.report is not None and es.report.method == "sequential" and es.report.ip_detected


def test_units_enter_in_schedule_order_not_completion_order() -> None:
    samples = _samples({("a", "b"): 30})
    value = _coin(5, p_j=0.8)

    async def go() -> list[float]:
        es = IPEarlyStopping(bound=1.0)
        await es.start_task(NS(model="m", metadata={}), samples, 1)
        for s in samples[:4]:  # pairs 0 and 1 scheduled
            assert await es.schedule_sample(s.id, 1) is None
        seen = []
        for sid in ("ab1:i", "ab1:j"):  # pair 1 comes back first: it waits for pair 0
            await es.complete_sample(sid, 1, {"sc": NS(score=NS(value=value(sid, 1)))})
        seen.append(es._plan.streams[0].state.n)
        for sid in ("ab0:i", "ab0:j"):
            await es.complete_sample(sid, 1, {"sc": NS(score=NS(value=value(sid, 1)))})
        seen.append(es._plan.streams[0].state.n)
        seen.append(es._plan.streams[0].values == [value(f"ab{k}:j", 1) - value(f"ab{k}:i", 1) for k in (0, 1)])
        return seen

    assert asyncio.run(go()) == [0, 2, True]


def test_epochs_clusters_and_the_bound_from_ip_task() -> None:
    samples = _samples({("a", "b"): 24})
    value = _coin(8, p_j=0.5)
    es = IPEarlyStopping(cluster="c")
    ran, summary = _drive(es, samples, value, epochs=2, task=NS(model="m", metadata={"ipcausal": {"bound": 1.0}}))
    assert summary["bound"] == 1.0 and summary["samples_total"] == 96
    g = summary["groups"][0]
    assert g["stop_reason"] == "exhausted" and es.report.groups[0].n_clusters == 12  # two pairs per cluster
    cl = [sum(np.mean([value(f"ab{k}:j", e) for e in (1, 2)]) - np.mean([value(f"ab{k}:i", e) for e in (1, 2)])
              for k in (2 * c, 2 * c + 1)) for c in range(12)]
    want = sequential_update(sequential_state(bound=2.0, alpha=0.05), cl)  # a cluster of 2 pairs: |Δ| ≤ 2
    assert g["e_value"] == pytest.approx(want.e_value, rel=1e-12)


def test_errors_name_the_parameter() -> None:
    with pytest.raises(ValueError, match=r"`alpha` must"):
        IPEarlyStopping(alpha=1.5)
    with pytest.raises(ValueError, match=r"`bound` must be a finite number > 0"):
        IPEarlyStopping(bound=0)
    with pytest.raises(ValueError, match=r"`correction` must be one of"):
        IPEarlyStopping(correction="holm")
    with pytest.raises(TypeError, match=r"`scorer` must be a scorer name or None"):
        IPEarlyStopping(scorer=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`side_field` must be a non-empty metadata key"):
        IPEarlyStopping(side_field="")
    es = IPEarlyStopping()
    with pytest.raises(RuntimeError, match=r"start_task was not called"):
        asyncio.run(es.schedule_sample("x:i", 1))
    samples = _samples({("a", "b"): 3})
    with pytest.raises(ValueError, match=r"`bound` is required"):
        asyncio.run(es.start_task(NS(model="m", metadata={}), samples, 1))
    with pytest.raises(ValueError, match=r"metadata lacks \['side'\]"):
        asyncio.run(es.start_task(NS(model="m", metadata={}), [NS(id="x", input="q", metadata={"pair_id": "x"})], 1))
    with pytest.raises(ValueError, match=r"1 sample\(s\) have no partner side: 'ab2:i'; an IP task needs both sides"):
        asyncio.run(IPEarlyStopping(bound=1).start_task(NS(model="m", metadata={}), samples[:5], 1))
    with pytest.raises(ValueError, match=r"`cluster`: the pairs' metadata has no field 'nope'"):
        asyncio.run(IPEarlyStopping(bound=1, cluster="nope").start_task(NS(model="m", metadata={}), samples, 1))

    async def two_scores() -> None:
        es = IPEarlyStopping(bound=1)
        await es.start_task(NS(model="m", metadata={}), samples, 1)
        await es.complete_sample("ab0:i", 1, {"x": NS(score=NS(value=1)), "y": NS(score=NS(value=0))})

    with pytest.raises(ValueError, match=r"`scorer`: sample 'ab0:i' has several scores \['x', 'y'\]"):
        asyncio.run(two_scores())


# -- through inspect_ai.eval with the simulator ------------------------------------------------------------

def _sim_pairs(n: int, seed: int, effect: float) -> Any:
    sim = SimulatedModel(effect=effect, levels=5, seed=seed)
    return sim.study(n=n, rng=seed).drop_columns("y_i", "y_j", "score_i", "score_j", "model")


def _eval(task: Any, effect: float, seed: int, **kw: Any) -> Any:
    logs = inspect_ai.eval(task, model="ipcausal/simulated", model_args={"effect": effect, "levels": 5, "seed": seed},
                           display="none", log_dir=tempfile.mkdtemp(prefix="ipcausal-inspect-"), max_samples=8, **kw)
    assert logs[0].status == "success", logs[0].error
    return logs[0]


def test_strong_effect_stops_early_with_the_full_runs_verdict() -> None:
    ps = _sim_pairs(150, seed=4, effect=1.5)
    es = IPEarlyStopping(alpha=0.05)
    log = _eval(ip_task(ps, scorer="answer", bound=4, early_stopping=es), 1.5, 4)
    full = _eval(ip_task(ps, scorer="answer", bound=4), 1.5, 4)
    assert len(full.samples) == 300 and full.results.early_stopping is None
    run = len(log.samples)
    assert run == es.summary["samples_run"] and run < 300 / 2  # far fewer than the dataset holds
    stops = log.results.early_stopping
    assert stops.manager == "ipcausal" and len(stops.early_stops) == 300 - run
    assert stops.metadata["groups"][0]["stop_reason"] == "rejected"
    assert dict(stops.metadata) == es.summary
    # the same verdict as the full run: its paired test rejects too
    metrics = full.results.scores[0].metrics
    assert metrics["reject"].value == 1.0 and metrics["ip_detected"].value == 1.0
    assert ipcausal.test(import_inspect(_save(full), scorer="answer_number").pairs).ip_detected


def _save(log: Any) -> str:
    return log.location


@pytest.mark.parametrize("seed", [0, 1])
def test_the_echo_pairs_stop_early_with_an_effect_and_run_out_without(seed: int) -> None:
    """The embedded echo pairs (42, a stated true vs false belief): the simulator reads the belief as inspect
    sends it, so ``-M effect=1`` personalizes and IPEarlyStopping stops early; ``effect=0`` runs to the end."""
    from ipcausal.builders import demo_pairs

    echo = demo_pairs("echo")
    runs = {}
    for effect in (1.0, 0.0):
        es = IPEarlyStopping(alpha=0.05)
        log, = inspect_ai.eval(ip_task(echo, scorer="answer", bound=2, early_stopping=es), model="ipcausal/simulated",
                               model_args={"effect": effect, "levels": 3, "noise": 0.5, "seed": seed}, display="none",
                               log_dir=tempfile.mkdtemp(prefix="ipcausal-inspect-"), max_samples=8)
        assert log.status == "success", log.error
        runs[effect] = es.summary
        said = {s.metadata["background"]: s.output.completion for s in log.samples}
        assert said and all(text.endswith(f"background inferred: {bg})") for bg, text in said.items())
    assert runs[1.0]["stopped"] == "decided" and runs[1.0]["groups"][0]["stop_reason"] == "rejected"
    assert runs[1.0]["samples_run"] < 2 * len(echo)
    assert runs[0.0]["stopped"] == "exhausted" and runs[0.0]["samples_run"] == 2 * len(echo)


@pytest.mark.slow
def test_no_effect_runs_to_the_end() -> None:
    managers = [IPEarlyStopping(alpha=0.05) for _ in range(NULL_RUNS)]
    tasks = [ip_task(_sim_pairs(60, seed=100 + k, effect=0.0), scorer="answer", bound=4, rng=k, early_stopping=es,
                     name=f"null_{k}") for k, es in enumerate(managers)]
    logs = inspect_ai.eval(tasks, model="ipcausal/simulated", model_args={"effect": 0.0, "levels": 5, "seed": 1},
                           display="none", log_dir=tempfile.mkdtemp(prefix="ipcausal-inspect-"), max_samples=8,
                           max_tasks=4)
    assert [lg.status for lg in logs] == ["success"] * NULL_RUNS
    full = sum(es.summary["samples_run"] == 120 and es.summary["stopped"] == "exhausted" for es in managers)
    assert full >= 0.95 * NULL_RUNS


def test_the_log_metric_is_ipcausal_test_on_the_imported_pairs() -> None:
    ps = _sim_pairs(40, seed=9, effect=0.5)
    log = _eval(ip_task(ps, scorer="answer", bound=4), 0.5, 9)
    want = ipcausal.test(import_inspect(log.location, scorer="answer_number").pairs)
    m = log.results.scores[0].metrics
    g = want.groups[0]
    assert m["effect"].value == pytest.approx(g.effect) and m["p_adjusted"].value == pytest.approx(g.pvalue_adjusted)
    assert m["reject"].value == float(g.reject) and m["pairs"].value == 40.0 and m["unpaired"].value == 0.0


def test_ip_task_and_ip_test_validate_their_arguments() -> None:
    from ipcausal.builders import demo_pairs
    from ipcausal.interop.inspect import ip_test

    echo = demo_pairs("echo", limit=3)
    task = ip_task(echo, rng=1)
    ids = [s.id for s in task.dataset]
    assert sorted(ids) == sorted(f"{p}:{s}" for p in echo["pair_id"] for s in "ij")
    assert all(ids[k][:-2] == ids[k + 1][:-2] for k in range(0, len(ids), 2))  # sides stay together
    order = np.random.default_rng(5).permutation(len(echo))  # the seeded order of the pairs
    shuffled = [s.id for s in ip_task(echo, rng=5).dataset]
    assert shuffled == [f"{echo['pair_id'].iloc[k]}:{s}" for k in order for s in "ij"]
    assert task.dataset[0].target == str(echo.to_frame().set_index("pair_id").loc[ids[0][:-2], "correct_option"])
    sim_pairs = _sim_pairs(3, seed=1, effect=0.0)
    with pytest.raises(ValueError, match=r"`scorer`: the pairs have no `options`/`correct_option` columns"):
        ip_task(sim_pairs)
    with pytest.raises(ValueError, match=r"`scorer` must be one of"):
        ip_task(sim_pairs, scorer="bleu")
    with pytest.raises(ValueError, match=r"`scorer`: 'mcq' needs the columns \['options', 'correct_option'\]"):
        ip_task(sim_pairs, scorer="mcq")
    with pytest.raises(TypeError, match=r"`scorer` must be one of \['mcq', 'answer'\], an inspect Scorer or None"):
        ip_task(sim_pairs, scorer=3)
    with pytest.raises(ValueError, match=r"`bound` must be a finite number > 0 or None"):
        ip_task(sim_pairs, scorer="answer", bound=-1)
    with pytest.raises(ValueError, match=r"`epochs` must be a positive integer or None"):
        ip_task(sim_pairs, scorer="answer", epochs=0)
    with pytest.raises(ValueError, match=r"`cluster`: the pairs have no column 'nope'"):
        ip_task(sim_pairs, scorer="answer", cluster="nope")
    with pytest.raises(ValueError, match=r"`correction` must be one of"):
        ip_test(correction="e-holm")
    with pytest.raises(ValueError, match=r"`alpha` must"):
        ip_test(alpha=0)
