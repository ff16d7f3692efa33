"""Early stopping inside inspect_ai: share of samples run, size under no effect, the manager's overhead.

Every run is a real ``inspect_ai.eval`` of :func:`ipcausal.interop.inspect.ip_task` on a fresh
seeded study of :class:`ipcausal.testing.SimulatedModel` (three backgrounds a, b, c — so three
background pairs under e-Holm — ``n`` pairs each, ratings 1..5, bound 4), answered by the
model ``ipcausal/simulated`` with the same effect, with :class:`IPEarlyStopping` (α = 0.05)
attached.  Tasks are run ``BATCH`` at a time in one ``eval`` call (``max_tasks=4``,
``max_samples=8``).

* per effect (``EFFECTS``; the shift of background b over a; c is shifted twice as much): the median share
  of the samples that inspect ran, the share of runs that stopped with every group decided,
  and the share rejecting;
* no effect: the rate of runs with any background pair rejected (the family-wise error, ≤ α
  by Ville's inequality) with its SE, and the share of runs that ran to the end;
* overhead: the manager's own time per sample (``schedule_sample`` + ``complete_sample``, the
  protocol driven by hand with the same scores), beside inspect's wall time per sample for the
  same task with the simulator (a model that answers at once: the worst case for the ratio).

Also, for a size estimate with a smaller SE than the inspect runs fit on two cores: the same
manager fed ``REPLAY_RUNS`` further null studies by hand, calling the protocol in the order
inspect does (dataset order, eight samples in flight) — labelled as such, it is not inspect.

Usage: ``python benchmarks/inspect_stopping.py [NULL_RUNS] [EFFECT_RUNS] [REPLAY_RUNS]`` (default 60,
10 and 1000); writes ``benchmarks/INSPECT_STOPPING.txt``.
"""

from __future__ import annotations

import asyncio
import math
import statistics
import sys
import tempfile
import time
import warnings
from pathlib import Path
from types import SimpleNamespace as NS

import inspect_ai

import ipcausal.interop.inspect_model  # noqa: F401  (the provider, also without the entry point)
from ipcausal.interop.inspect import IPEarlyStopping, ip_task
from ipcausal.testing import SimulatedModel

HERE = Path(__file__).resolve().parent
BACKGROUNDS = ("a", "b", "c")
BATCH = 20
ALPHA = 0.05
EFFECTS = (1.0, 1.5, 2.5)


def _pairs(n: int, seed: int, effect: float):
    sim = SimulatedModel(effect=effect, levels=5, seed=seed, backgrounds=BACKGROUNDS)
    return sim.study(n=n, rng=seed).drop_columns("y_i", "y_j", "score_i", "score_j", "model")


def _runs(effect: float, runs: int, n: int, first_seed: int) -> list[dict]:
    out = []
    for start in range(0, runs, BATCH):
        seeds = range(first_seed + start, first_seed + min(runs, start + BATCH))
        managers = [IPEarlyStopping(alpha=ALPHA) for _ in seeds]
        tasks = [ip_task(_pairs(n, s, effect), scorer="answer", bound=4, rng=s, early_stopping=es, name=f"run_{s}")
                 for s, es in zip(seeds, managers)]
        logs = inspect_ai.eval(tasks, model="ipcausal/simulated",
                               model_args={"effect": effect, "levels": 5, "seed": 1, "backgrounds": list(BACKGROUNDS)},
                               display="none", log_dir=tempfile.mkdtemp(prefix="ipcausal-bench-"), max_samples=8,
                               max_tasks=4)
        assert all(lg.status == "success" for lg in logs), [lg.error for lg in logs if lg.error]
        out.extend(es.summary for es in managers)
        print(f"  effect {effect}: {len(out)}/{runs} runs", file=sys.stderr, flush=True)
    return out


def _drive(ps, seed: int) -> tuple[IPEarlyStopping, float]:
    """The protocol replayed by hand as inspect calls it (dataset order of ip_task, 8 samples in flight)."""
    task = ip_task(ps.drop_columns("y_i", "y_j", "score_i", "score_j", "model"), scorer="answer", bound=4, rng=seed)
    samples = list(task.dataset)
    score = {f"{r['pair_id']}:{s}": r[f"score_{s}"] for r in ps.records() for s in "ij"}
    es = IPEarlyStopping(alpha=ALPHA)

    async def go() -> float:
        await es.start_task(NS(model="sim", metadata=task.metadata), samples, 1)
        flight: list[str] = []
        t0 = time.perf_counter()
        for smp in samples:
            if await es.schedule_sample(smp.id, 1) is None:
                flight.append(smp.id)
            if len(flight) > 8:
                sid = flight.pop(0)
                await es.complete_sample(sid, 1, {"answer_number": NS(score=NS(value=score[sid]))})
        for sid in flight:
            await es.complete_sample(sid, 1, {"answer_number": NS(score=NS(value=score[sid]))})
        elapsed = time.perf_counter() - t0
        await es.complete_task()
        return elapsed

    return es, asyncio.run(go())


def _replay(runs: int, n: int, first_seed: int) -> tuple[list[dict], float]:
    out, spent, calls = [], 0.0, 0
    for s in range(first_seed, first_seed + runs):
        sim = SimulatedModel(effect=0.0, levels=5, seed=s, backgrounds=BACKGROUNDS)
        es, t = _drive(sim.study(n=n, rng=s), s)
        out.append(es.summary)
        spent += t
        calls += es.summary["samples_run"]
    return out, spent / calls * 1e6


def _overhead(n: int, reps: int = 5) -> tuple[float, float]:
    """µs per sample of the manager, driven by hand (scores from one simulated study)."""
    sim = SimulatedModel(effect=0.0, levels=5, seed=7, backgrounds=BACKGROUNDS)
    ps = sim.study(n=n, rng=7)
    samples, value = [], {}
    for rec in ps.records():
        for s in "ij":
            sid = f"{rec['pair_id']}:{s}"
            samples.append(NS(id=sid, input=rec[f"x_{s}"], metadata={"pair_id": rec["pair_id"], "side": s,
                                                                     "background": rec[f"background_{s}"]}))
            value[sid] = {"answer_number": NS(score=NS(value=rec[f"score_{s}"]))}
    times = []

    async def once() -> float:
        es = IPEarlyStopping(alpha=ALPHA, bound=4)
        await es.start_task(NS(model="sim", metadata={}), samples, 1)
        t0 = time.perf_counter()
        for k, smp in enumerate(samples):
            await es.schedule_sample(smp.id, 1)
            if k >= 8:  # eight in flight, as with max_samples=8
                done = samples[k - 8]
                await es.complete_sample(done.id, 1, value[done.id])
        for done in samples[-8:]:
            await es.complete_sample(done.id, 1, value[done.id])
        return time.perf_counter() - t0

    asyncio.run(once())  # warm-up (numba kernels)
    for _ in range(reps):
        times.append(asyncio.run(once()))
    per = statistics.median(times) / len(samples) * 1e6
    # inspect's own wall time per sample for the same task, without early stopping
    t0 = time.perf_counter()
    task = ip_task(_pairs(n, 7, 0.0), scorer="answer", bound=4)
    inspect_ai.eval(task, model="ipcausal/simulated", model_args={"effect": 0.0, "levels": 5, "seed": 7,
                                                                  "backgrounds": list(BACKGROUNDS)},
                    display="none", log_dir=tempfile.mkdtemp(prefix="ipcausal-bench-"), max_samples=8)
    inspect_per = (time.perf_counter() - t0) / len(samples) * 1e6
    return per, inspect_per


def main(null_runs: int = 60, effect_runs: int = 10, replay_runs: int = 1000, n: int = 40) -> None:
    warnings.simplefilter("ignore", DeprecationWarning)
    t_start = time.perf_counter()
    total = 2 * n * len(BACKGROUNDS)
    rows = [f"# IPEarlyStopping inside inspect_ai.eval with the simulator: 3 background pairs x {n} pairs "
            f"({total} samples per run), α = {ALPHA}, e-Holm, bound 4", "",
            "| effect (b − a; c − a twice) | runs | median share of samples run (min–max) | all decided | "
            "rejecting |", "|---|---|---|---|---|"]
    for k, effect in enumerate(EFFECTS):
        res = _runs(effect, effect_runs, n, 1000 * (k + 1))
        shares = [r["share_run"] for r in res]
        decided = sum(r["stopped"] == "decided" for r in res) / len(res)
        rejecting = sum(r["ip_detected"] for r in res) / len(res)
        rows.append(f"| {effect} | {len(res)} | {statistics.median(shares):.3f} ({min(shares):.3f}–{max(shares):.3f}) "
                    f"| {decided:.2f} | {rejecting:.2f} |")
        print(rows[-1], flush=True)
    null = _runs(0.0, null_runs, n, 100_000)
    fwer = sum(r["ip_detected"] for r in null) / len(null)
    to_end = sum(r["samples_run"] == total for r in null) / len(null)
    se = math.sqrt(max(fwer * (1 - fwer), ALPHA * (1 - ALPHA)) / len(null))
    rows += ["", "| no effect: runs | any group rejected (FWER) | SE (at max(rate, α)) | α + 3 SE | ran to the end |",
             "|---|---|---|---|---|",
             f"| {len(null)} | {fwer:.3f} | {se:.3f} | {ALPHA + 3 * se:.3f} | {to_end:.3f} |"]
    print(rows[-1], flush=True)
    replay, replay_per = _replay(replay_runs, n, 200_000)
    rfwer = sum(r["ip_detected"] for r in replay) / len(replay)
    rse = math.sqrt(max(rfwer * (1 - rfwer), ALPHA * (1 - ALPHA)) / len(replay))
    rend = sum(r["samples_run"] == total for r in replay) / len(replay)
    rows += [f"| {len(replay)} (the protocol replayed by hand, same call order: not inspect) | {rfwer:.3f} | {rse:.3f} "
             f"| {ALPHA + 3 * rse:.3f} | {rend:.3f} |"]
    print(rows[-1], flush=True)
    per, inspect_per = _overhead(n)
    rows += ["", "| manager overhead per sample (schedule + complete, µs) | inspect_ai.eval wall time per sample "
             "with the simulator (µs) | share |", "|---|---|---|",
             f"| {per:.1f} | {inspect_per:.0f} | {per / inspect_per:.1%} |", "",
             f"(whole benchmark: {time.perf_counter() - t_start:.0f} s)"]
    print("\n".join(rows[-4:]), flush=True)
    (HERE / "INSPECT_STOPPING.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(*(int(a) for a in sys.argv[1:4]))
