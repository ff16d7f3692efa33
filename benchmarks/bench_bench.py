"""IP-Bench concurrency (issue 20): 4 simulated models with 50 ms per request, in one bench vs alone.

Each request to the simulator sleeps 50 ms (a model's latency; the sleep releases the GIL as a
network wait does).  The bench runs the four models at once (``jobs=4``); the target is a wall
time <= 1.2 x the slowest model's cells run alone.  Also: the same bench with ``jobs=1`` (models
one after another), and a rerun of the finished bench (every answer from the caches).

    python benchmarks/bench_bench.py      # -> benchmarks/BENCH_bench.txt
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from ipcausal.study.bench import bench
from ipcausal.testing import SimulatedModel

LATENCY = 0.05
CASES = [{"name": "echo", "limit": 8}, {"name": "education", "limit": 8}]
MODELS = [{"name": f"m{k}", "backend": "simulated", "effect": 0.5 * k, "seed": k} for k in range(4)]


def _slow(generate):
    def slow(sim, requests):
        time.sleep(LATENCY * len(requests))
        return generate(sim, requests)
    return slow


def _time(spec, jobs=4, out=None):
    t0 = time.perf_counter()
    bench(spec, out=out or tempfile.mkdtemp(), jobs=jobs, progress=False)
    return time.perf_counter() - t0


def main() -> None:
    SimulatedModel.generate = _slow(SimulatedModel.generate)
    bench({"models": MODELS[:1], "cases": CASES}, out=tempfile.mkdtemp(), progress=False)  # warm numba/imports
    alone = [_time({"models": [m], "cases": CASES}) for m in MODELS]
    out = tempfile.mkdtemp()
    together = _time({"models": MODELS, "cases": CASES}, out=out)
    rerun = _time({"models": MODELS, "cases": CASES}, out=out)
    serial = _time({"models": MODELS, "cases": CASES}, jobs=1)
    lines = [f"4 simulated models x (echo, education; limit 8), {LATENCY * 1000:.0f} ms per request",
             "alone (s): " + ", ".join(f"{t:.2f}" for t in alone),
             f"bench, jobs=4: {together:.2f} s = {together / max(alone):.2f} x the slowest alone (target <= 1.2)",
             f"bench, jobs=1: {serial:.2f} s = {serial / sum(alone):.2f} x the sum alone",
             f"rerun of the finished bench (all from the caches): {rerun:.2f} s"]
    Path(__file__).with_name("BENCH_bench.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
