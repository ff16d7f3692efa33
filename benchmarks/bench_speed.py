"""Issue 33's scale targets, measured in one run: exact lattice p + interval, PB, 10⁶ pairs, 10 pairs.

Rows (targets in brackets):

1. ``permutation_test`` on 66,667 Likert differences, exact route: the p alone, the inverted
   interval alone, and the call a user makes (p + interval) [≤ 100 ms].
2. ``personalization_bias`` with the prompt bootstrap on 400,000 responses (20,000 and 133,334
   prompts; B = 2,000), with the former numpy draws (``bootstrap="numpy"``) beside it [≤ 1 s].
3. ``ipcausal test likert.jsonl`` on 10⁶ Likert pairs (three background pairs, JSON Lines), a fresh
   process: wall time and peak RSS, the routes taken, pandas' own read of the file beside it, and
   where the time goes (one profiled run in another process) [≤ 10 s, ≤ 1.5 GB, exact route].
4. ``ipcausal test ten.jsonl`` on 10 pairs against the import floor ``python -c "import pandas,
   numba"``, interleaved fresh processes [≤ 1.0 s above the floor].

Every row carries the load average when it ran.  Run ``python benchmarks/bench_speed.py``
(``--only exact,pb,big,small`` for a part) → ``benchmarks/SPEED.txt``.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _common import fmt_time, interleaved, load, machine, run_python  # noqa: E402
from bench_scale import PB_DATA, generate_interval  # noqa: E402

OUT = HERE / "SPEED.txt"
ROWS: list[str] = []


def row(target: str, what: str, result: str, verdict: str = "") -> None:
    line = f"| {target} | {what} | {result} | {verdict} | {load()} |"
    ROWS.append(line)
    print(line, flush=True)


def verdict(value: float, target: float, unit: str = "s", higher: bool = False) -> str:
    met = value >= target if higher else value <= target
    if met:
        return f"{'≥' if higher else '≤'} {target:g} {unit}: met"
    by = target / value if higher else value / target
    return f"{'≥' if higher else '≤'} {target:g} {unit}: **NOT met** ({by:.2f}× over)"


def fmt_min(t: dict[str, Any]) -> str:
    return f"{fmt_time(t['min'])} (median {fmt_time(t['median'])}, n={t['n']})"


def bench_exact(args: argparse.Namespace) -> None:
    from ipcausal import permutation_test
    from ipcausal.stats import intervals as I
    from ipcausal.stats import permutation as P

    rng = np.random.default_rng(0)
    n = 66_667
    d = (rng.integers(1, 7, n) - rng.integers(1, 7, n)).astype(float)  # differences of two ratings 1..6
    nz = d[d != 0]
    a = np.abs(nz) / np.abs(nz).max()
    k = P.lattice_units(a)
    t = interleaved({"p": lambda: P._exact_fft(np.ascontiguousarray(k, dtype=np.int64), np.sign(nz), "two-sided"),
                     "interval": lambda: I.law(d, "lattice", lattice=k).interval(0.95),
                     "both": lambda: permutation_test(d)}, repeats=args.repeats)
    res = t["both"]["value"]
    cpu = {name: _cpu(fn, args.repeats) for name, fn in (("p", lambda: P._exact_fft(
        np.ascontiguousarray(k, dtype=np.int64), np.sign(nz), "two-sided")), ("both", lambda: permutation_test(d)))}
    row("exact", f"66,667 Likert differences: the exact p alone (`{res.method}`)",
        f"{fmt_min(t['p'])}; CPU {fmt_time(cpu['p'])}")
    row("exact", "  the inverted exact interval alone (live spectrum columns, closed-form row tails)", fmt_min(t["interval"]))
    row("exact", f"  `permutation_test(d)`: p + interval (`{res.ci_method}`)",
        f"{fmt_min(t['both'])}; CPU {fmt_time(cpu['both'])}",
        verdict(t["both"]["min"], 0.100, "s") + f" (CPU time: {verdict(cpu['both'], 0.100, 's')})")


def _cpu(fn: Any, repeats: int) -> float:
    """Least process CPU seconds of ``fn()`` over ``repeats`` calls (the work, without the waits for a core)."""
    fn()
    best = float("inf")
    for _ in range(repeats):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


_PB = PB_DATA + """
out = {{}}
for name, kw in (("stream", {{}}), ("numpy", {{"bootstrap": "numpy"}}), ("stream", {{}})):
    t0, c0 = time.perf_counter(), time.process_time()
    r = personalization_bias(v, b, clusters=c, rng=3, **kw)
    out.setdefault(name, []).append(time.perf_counter() - t0)
    out.setdefault(name + "_cpu", []).append(time.process_time() - c0)
    out[name + "_ci"] = [r.ci_low, r.ci_high]
print(json.dumps(out))
"""


def bench_pb(args: argparse.Namespace) -> None:
    for n_c in (20_000, 133_334):
        got = json.loads(run_python(_PB.format(n_c=n_c), timeout=3600).strip().splitlines()[-1])
        new = min(got["stream"])
        old = (f"former numpy draws (`bootstrap='numpy'`): {fmt_time(min(got['numpy']))}, CPU "
               f"{fmt_time(min(got['numpy_cpu']))}; stream ÷ numpy = {new / min(got['numpy']):.2f}× (wall)")
        lo, hi = got["stream_ci"]
        cpu = min(got["stream_cpu"])
        row("pb", f"PB, 400,000 responses, {n_c:,} prompts, B = 2,000 (B·n_c = {2000 * n_c:,} draws): stream",
            f"{fmt_time(new)} (min of 2; CPU {fmt_time(cpu)}, both threads); CI [{lo:.5f}, {hi:.5f}]; {old}",
            verdict(new, 1.0, "s") + f" (CPU time: {verdict(cpu, 1.0, 's')})" if n_c == 20_000 else "")


_PROFILE = """
import cProfile, io, pstats, sys, warnings
from ipcausal import cli
pr = cProfile.Profile()
out = io.StringIO()
import contextlib
with contextlib.redirect_stdout(out), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    pr.enable(); cli.main(["test", sys.argv[1], "--seed", "1"]); pr.disable()
st = pstats.Stats(pr)
keep = ("read_jsonl_frame", "_validate_frame", "summarise", "personalization_bias", "table_sums", "_responses",
        "test_group", "permutation_test", "_exact_fft", "interval", "null_distribution", "adjust_pvalues", "main")
rows = []
for (file, line, name), (cc, nc, tt, ct, callers) in st.stats.items():
    if name in keep and "ipcausal" in file:
        rows.append((ct, f"{file.split('ipcausal/')[-1]}:{name}"))
for ct, what in sorted(rows, reverse=True)[:12]:
    print(f"{ct:.2f} {what}")
"""


def bench_big(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory(prefix="ipcausal-speed-") as tmp:
        path = generate_interval(1_000_000, Path(tmp), "likert")["jsonl"]
        mb = path.stat().st_size / 2**20
        # `ipcausal test FILE --json` as the console script runs it (cli.main), reporting its own peak RSS
        cmd = [sys.executable, "-c", "import resource, sys\nfrom ipcausal import cli\nrc = cli.main(sys.argv[1:])\n"
               "u = resource.getrusage(resource.RUSAGE_SELF)\n"
               "print('RSS', u.ru_utime + u.ru_stime, u.ru_maxrss, file=sys.stderr)\nsys.exit(rc)",
               "test", str(path), "--seed", "1", "--json"]
        runs, peaks, cpus = [], [], []
        for _ in range(2):
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
            wall = time.perf_counter() - t0
            if proc.returncode != 0:
                raise RuntimeError(proc.stderr[-2000:])
            runs.append(wall)
            _, cpu_s, peak_kb = proc.stderr.strip().splitlines()[-1].split()
            peaks.append(int(peak_kb) / 1024)
            cpus.append(float(cpu_s))
        rss = max(peaks)
        rep = json.loads(proc.stdout)
        routes = sorted({g["detail"]["method"] for g in rep["groups"]})
        cis = sorted({g["detail"]["ci_method"] for g in rep["groups"]})
        ref = json.loads(run_python("import json, time, pandas as pd\nt0 = time.perf_counter()\n"
                                    f"pd.read_json({str(path)!r}, lines=True)\n"
                                    "print(json.dumps({'s': time.perf_counter() - t0}))", timeout=3600).strip()
                         .splitlines()[-1])["s"]
        prof = subprocess.run([sys.executable, "-c", _PROFILE, str(path)], capture_output=True, text=True, timeout=3600)
        best = min(runs)
        row("big", f"`ipcausal test` 10⁶ Likert pairs, JSONL ({mb:.0f} MB), 3 background pairs, fresh process",
            f"{fmt_time(best)} (min of 2; {', '.join(fmt_time(r) for r in runs)}); CPU {fmt_time(min(cpus))} "
            f"(both threads); peak RSS {rss:.0f} MB; p: {', '.join(routes)}; CI: {', '.join(cis)}",
            verdict(best, 10.0, "s") + f" (CPU time: {verdict(min(cpus), 10.0, 's')}); " + verdict(rss / 1024, 1.5, "GB"))
        row("big", "  pandas.read_json(lines=True) of the same file (the floor of a pandas reader)",
            f"{fmt_time(ref)}; ipcausal test (everything) ÷ pandas' read alone = {best / ref:.2f}×")
        top = "; ".join(line.split(" ", 1)[1] + " " + line.split(" ", 1)[0] + " s"
                        for line in prof.stdout.strip().splitlines()[:8]) if prof.returncode == 0 else prof.stderr[-300:]
        row("big", "  profile of one more run (cProfile, cumulative s; under the profiler)", top.replace("|", "/"))


def bench_small(args: argparse.Namespace) -> None:
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="ipcausal-speed-") as tmp:
        pairs = Path(tmp) / "ten.jsonl"
        pairs.write_text("".join(json.dumps({"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q",
                                             "x_j": "q", "score_i": k % 3, "score_j": (k * 7) % 4}) + "\n"
                                 for k in range(10)))
        cmds = {"floor": [py, "-c", "import pandas, numba"],
                "ten": [py, "-m", "ipcausal.cli", "test", str(pairs), "--seed", "1"]}
        for c in cmds.values():
            subprocess.run(c, capture_output=True, timeout=300)
        times: dict[str, list[float]] = {k: [] for k in cmds}
        for _ in range(args.repeats):
            for k, c in cmds.items():
                t0 = time.perf_counter()
                subprocess.run(c, capture_output=True, timeout=300, check=True)
                times[k].append(time.perf_counter() - t0)
    med = {k: statistics.median(v) for k, v in times.items()}
    low = {k: min(v) for k, v in times.items()}
    row("small", "`python -c \"import pandas, numba\"` (the import floor)",
        f"{fmt_time(low['floor'])} (median {fmt_time(med['floor'])}, n={args.repeats})")
    row("small", "`ipcausal test ten.jsonl` (10 interval pairs), interleaved with the floor",
        f"{fmt_time(low['ten'])} (median {fmt_time(med['ten'])}, n={args.repeats}); above the floor: "
        f"{low['ten'] - low['floor']:+.2f} s (minima), {med['ten'] - med['floor']:+.2f} s (medians)",
        verdict(med["ten"] - med["floor"], 1.0, "s above the floor"))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default="", help="comma-separated subset: exact,pb,big,small")
    ap.add_argument("--repeats", type=int, default=7)
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
    info = machine()
    parts = {"exact": bench_exact, "pb": bench_pb, "big": bench_big, "small": bench_small}
    chosen = [p for p in args.only.split(",") if p] or list(parts)
    head = [f"Machine: {info.get('Model name', '?')}, {info.get('CPU(s)', '?')} CPU(s), flags {info.get('Flags', '?')}; "
            f"{info.get('versions', '')}; numba threads {info.get('numba threads', '?')}; {info.get('date', '')}.",
            f"Kernel auto chose: {info.get('kernel auto chose', '?')}.", "",
            "| part | measurement | result | target | load (1, 5, 15 min) |", "|---|---|---|---|---|"]
    print("\n".join(head), flush=True)
    for name in chosen:
        parts[name](args)
    lines = head + ROWS + ["", "Times: minimum of repeats (median beside it) unless the row says otherwise; the "
                           "machine is shared (see the load column), so absolute times carry the load of the moment."]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
