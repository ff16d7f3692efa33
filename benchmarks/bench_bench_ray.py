"""IP-Bench on a local Ray cluster vs in process (issue 20): the same bench, target <= 1.5 x.

The bench of ``bench_bench.py`` — 4 simulated models x (echo, education; limit 8), 50 ms per
request (the bench file's ``latency``, a sleep inside the simulated backend, so it also holds in
the Ray workers) — run in process (threads, ``jobs=4``) and then with ``ray=True`` on a local Ray
cluster started beforehand with 4 CPU slots (the cells mostly wait, as on a real model; the
machine has 2 cores).  The cluster's start is timed apart; the ratio is of the bench alone.  Each
run writes a fresh folder; both must give the same ``bench.csv``.

    python benchmarks/bench_bench_ray.py      # -> benchmarks/BENCH_bench_ray.txt
"""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

from ipcausal.study.bench import bench

CASES = [{"name": "echo", "limit": 8}, {"name": "education", "limit": 8}]
MODELS = [{"name": f"m{k}", "backend": "simulated", "effect": 0.5 * k, "seed": k, "latency": 0.05} for k in range(4)]
SPEC = {"models": MODELS, "cases": CASES}


def _time(**kw):
    out = tempfile.mkdtemp()
    t0 = time.perf_counter()
    bench(SPEC, out=out, progress=False, **kw)
    return time.perf_counter() - t0, Path(out, "bench.csv").read_text()


def main() -> None:
    import ray

    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
    _time()  # warm numba (the comparisons' kernels included) and the imports
    local, csv_local = _time()
    t0 = time.perf_counter()
    ray.init(num_cpus=4, include_dashboard=False, log_to_driver=False)
    start = time.perf_counter() - t0
    try:
        _time(ray=True)  # the workers import ipcausal once
        on_ray, csv_ray = _time(ray=True)
    finally:
        ray.shutdown()
    lines = [f"4 simulated models x (echo, education; limit 8), 50 ms per request; ray {ray.__version__}, "
             f"{os.cpu_count()} cores",
             f"in process (threads, jobs=4): {local:.2f} s",
             f"local Ray cluster (4 CPU slots, started beforehand in {start:.1f} s; its workers warm): {on_ray:.2f} s "
             f"= {on_ray / local:.2f} x in process (target <= 1.5)",
             f"same bench.csv: {csv_ray == csv_local}"]
    Path(__file__).with_name("BENCH_bench_ray.txt").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
