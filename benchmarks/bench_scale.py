"""Scale: ``PairSet.read`` and ``ipcausal.test`` on 10⁴, 10⁵ and 10⁶ generated scored pairs.

What it does
------------
1. Generates scored pairs (not committed; in a temporary folder): two models, four
   backgrounds (six background pairs per model), prompts and responses of ~45 and ~60
   characters (about 250 bytes a row, like the study's 50 MB file of 196,874 pairs), and a
   similarity per pair.  Each size is written as JSON Lines and as Parquet.
2. For each size and format, runs in a fresh interpreter (so that ``ru_maxrss`` is that
   step's own peak): ``PairSet.read(path)`` alone, then ``ipcausal.test(path)``
   (read + group + sign test per group + correction + PB), timing each and reading the
   process's peak resident memory.
3. Prints the table and writes it to ``benchmarks/SCALE.txt`` (Markdown table lines).

The competitor is pandas itself: ``pandas.read_json(lines=True)`` / ``pandas.read_parquet``
of the same file, in the same kind of subprocess, which is the floor any pandas-backed reader
pays.  Targets (issue 13 item 11): 1,000,000 scored pairs — JSONL ≤ 30 s and ≤ 1.5 GB peak
RSS, Parquet ≤ 5 s (for ``ipcausal.test``).

**Interval outcomes** (issue 23): the same sizes with Likert scores (1–6) and with 0/1 scores,
three background pairs (SAE–AAE, SAE–ESL, AAE–ESL) of one model, each prompt asked under all
three, so ``prompt_id`` is shared by three pairs.  Variants: ``likert`` and ``binary`` (the pair is
the unit), ``likert, clusters of two`` (``cluster=`` a column that pairs consecutive rows), and
``likert, westfall-young`` (``correction="westfall-young"``: whole prompts relabelled).  Each row
is ``ipcausal.test`` in a fresh interpreter (JSONL and Parquet), with the route the groups' p took,
next to pandas' own read of the same file.  Targets: 10⁶ Likert pairs ≤ 10 s and ≤ 1.5 GB peak
(JSONL), exact route, also with clusters of two.

Run it with ``python benchmarks/bench_scale.py`` (``--sizes 10000`` for a quick look;
``--only interval`` or ``--only similarity`` for one half).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import machine, run_python  # noqa: E402

OUT = Path(__file__).resolve().parent / "SCALE.txt"
_BACKGROUNDS = ("US", "UK", "India", "Nigeria")
_MODELS = ("model-a", "model-b")


def _chunk(start: int, n: int, rng: object) -> dict[str, list[object]]:
    import numpy as np

    nb = len(_BACKGROUNDS)
    bi = rng.integers(0, nb, n)
    bj = (bi + rng.integers(1, nb, n)) % nb
    bi, bj = np.minimum(bi, bj), np.maximum(bi, bj)  # each background pair stored one way round
    model = rng.integers(0, len(_MODELS), n)
    sim = np.round(np.clip(rng.beta(8, 2, n) - 0.02 * (bi == 0), 0, 1), 4)
    words = np.array("the a colour color answer question river bank model holiday vacation football soccer "
                     "flat apartment lorry truck biscuit cookie queue line autumn fall".split())
    text = [" ".join(row) for row in words[rng.integers(0, words.size, (n, 9))]]  # ~60 characters
    ids = range(start, start + n)
    return {
        "pair_id": [f"p{k}" for k in ids],
        "background_i": [_BACKGROUNDS[k] for k in bi],
        "background_j": [_BACKGROUNDS[k] for k in bj],
        "x_i": [f"Q{k}: {t[:40]}?" for k, t in zip(ids, text)],
        "x_j": [f"Q{k}: {t[:40]}, please?" for k, t in zip(ids, text)],
        "y_i": text,
        "y_j": [t[::-1] for t in text],
        "model": [_MODELS[k] for k in model],
        "similarity": sim.tolist(),
    }


def _write_chunk(cols: dict[str, list[object]], fh: Any, writer: Any, parquet: Path) -> Any:
    """Append one chunk of columns to the JSONL file ``fh`` and to the Parquet ``writer`` (opened here)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    names = list(cols)
    for row in zip(*cols.values()):
        fh.write(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n")
    table = pa.table(cols)
    writer = writer or pq.ParquetWriter(parquet, table.schema)
    writer.write_table(table)
    return writer


def generate(n: int, folder: Path, seed: int = 0, chunk: int = 100_000) -> dict[str, Path]:
    """Write ``n`` scored pairs as ``pairs_N.jsonl`` and ``pairs_N.parquet`` in ``folder`` (in chunks)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    paths = {"jsonl": folder / f"pairs_{n}.jsonl", "parquet": folder / f"pairs_{n}.parquet"}
    writer = None
    with open(paths["jsonl"], "w", encoding="utf-8") as fh:
        for start in range(0, n, chunk):
            cols = _chunk(start, min(chunk, n - start), rng)
            writer = _write_chunk(cols, fh, writer, paths["parquet"])
    if writer is not None:
        writer.close()
    return paths


_BACKS3 = ("SAE", "AAE", "ESL")
_PAIRS3 = (("SAE", "AAE"), ("SAE", "ESL"), ("AAE", "ESL"))


def generate_interval(n: int, folder: Path, kind: str, seed: int = 0, chunk: int = 150_000) -> dict[str, Path]:
    """``n`` interval-scored pairs (``kind``: "likert" 1–6 or "binary" 0/1) as JSONL and Parquet
    (``n`` rounded up to whole prompts of three pairs)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n += -n % 3  # whole prompts (each asked under the three backgrounds)
    paths = {"jsonl": folder / f"{kind}_{n}.jsonl", "parquet": folder / f"{kind}_{n}.parquet"}
    writer = None
    with open(paths["jsonl"], "w", encoding="utf-8") as fh:
        for start in range(0, n, chunk):
            m = min(chunk, n - start)
            ids = np.arange(start, start + m)
            which = ids % 3  # the three background pairs of one prompt in consecutive rows
            q = ids // 3 - start // 3
            n_q = int(q.max()) + 1
            if kind == "likert":  # one score per prompt and background; ESL a little higher
                per = np.clip(rng.integers(1, 7, (n_q, 1)) + rng.integers(-1, 2, (n_q, 3))
                              + (rng.random((n_q, 3)) < [0.0, 0.1, 0.25]), 1, 6)
            else:
                per = (rng.random((n_q, 3)) < [0.6, 0.62, 0.65]).astype(np.int64)
            col = {b: i for i, b in enumerate(_BACKS3)}
            si = per[q, [col[_PAIRS3[w][0]] for w in which]]
            sj = per[q, [col[_PAIRS3[w][1]] for w in which]]
            cols = {
                "pair_id": [f"p{k}" for k in ids],
                "prompt_id": [f"q{k // 3}" for k in ids],
                "cluster": [f"c{k // 2}" for k in ids],
                "background_i": [_PAIRS3[w][0] for w in which],
                "background_j": [_PAIRS3[w][1] for w in which],
                "x_i": [f"Q{k // 3}?" for k in ids],
                "x_j": [f"Q{k // 3}, please?" for k in ids],
                "model": ["model-a"] * m,
                "score_i": si.astype(float).tolist(),
                "score_j": sj.astype(float).tolist(),
            }
            writer = _write_chunk(cols, fh, writer, paths["parquet"])
    if writer is not None:
        writer.close()
    return paths


_VARIANTS = {  # name: (data kind, extra keyword arguments of ipcausal.test)
    "likert": ("likert", ""),
    "binary 0/1": ("binary", ""),
    "likert, clusters of two": ("likert", ", cluster='cluster'"),
    "likert, westfall-young": ("likert", ", correction='westfall-young'"),
}


_STEP = """
import resource, time, json, warnings
t0 = time.perf_counter()
{body}
dt = time.perf_counter() - t0
print(json.dumps({{"s": dt, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}}))
"""
_BODIES = {
    "PairSet.read": "from ipcausal import PairSet\nt0 = time.perf_counter()\nps = PairSet.read({path!r})",
    "ipcausal.test": ("import ipcausal\nfrom ipcausal import PairSet, test\nt0 = time.perf_counter()\n"
                      "with warnings.catch_warnings():\n"
                      "    warnings.simplefilter('ignore')\n"
                      "    rep = test({path!r}, rng=0)"),
    "ipcausal.test interval": ("import ipcausal\nfrom ipcausal import Design, test\nt0 = time.perf_counter()\n"
                               "with warnings.catch_warnings():\n"
                               "    warnings.simplefilter('ignore')\n"
                               "    rep = test({path!r}, design=Design(outcome='interval'), rng=0{extra})\n"
                               "routes = sorted({{g.detail.method for g in rep.groups}})\n"
                               "print(json.dumps({{'routes': routes}}))"),
    "pandas read": ("import pandas as pd\nt0 = time.perf_counter()\n"
                    "df = pd.read_json({path!r}, lines=True) if {path!r}.endswith('.jsonl') "
                    "else pd.read_parquet({path!r})"),
}


def measure(step: str, path: Path, extra: str = "") -> dict[str, Any]:
    """Seconds and peak RSS (MB) of one step in a fresh interpreter (imports not timed)."""
    code = _STEP.format(body=_BODIES[step].format(path=str(path), extra=extra))
    out = {}
    for line in run_python(code, timeout=1800).strip().splitlines():
        if line.startswith("{"):
            out.update(json.loads(line))
    return out


#: PB's benchmark data (also bench_speed.py's): 400,000 ratings of three backgrounds in n_c prompts
PB_DATA = """
import time, json, numpy as np
from ipcausal import personalization_bias
rng = np.random.default_rng(1)
n, n_c = 400_000, {n_c}
v = rng.integers(1, 7, n).astype(float)
b = np.array(["SAE", "AAE", "ESL"])[rng.integers(0, 3, n)]
c = np.array([f"q{{i}}" for i in rng.integers(0, n_c, n)], dtype=object)
personalization_bias(v[:3000], b[:3000], clusters=c[:3000], rng=0)  # compiled, cached
"""
_PB = PB_DATA + """
t0 = time.perf_counter()
personalization_bias(v, b, clusters=c, rng=3)  # the counter-based stream inside the kernels (the default)
dt = time.perf_counter() - t0
old = None
if n_c <= 20_000:  # numpy's draws (bootstrap="numpy") against the all-in-memory matrix of the same draws
    r = personalization_bias(v, b, clusters=c, rng=3, bootstrap="numpy")
    gen = np.random.default_rng(3)
    t1 = time.perf_counter()
    ids = np.unique(c.astype(str), return_inverse=True)[1]
    draws = gen.integers(0, n_c, size=(2000, n_c)) + (np.arange(2000) * n_c)[:, None]
    w = np.bincount(draws.ravel(), minlength=2000 * n_c).reshape(2000, n_c).astype(np.float64)
    boot = np.stack([(w @ np.bincount(ids[b == lab], weights=v[b == lab], minlength=n_c))
                     / (w @ np.bincount(ids[b == lab], minlength=n_c)) for lab in sorted(set(b))], axis=1)
    lo, hi = np.quantile(np.sqrt(np.var(boot, axis=1)), [0.025, 0.975])
    old = {{"s": time.perf_counter() - t1, "same": bool(abs(lo - r.ci_low) < 1e-12 and abs(hi - r.ci_high) < 1e-12)}}
print(json.dumps({{"s": dt, "old": old}}))
"""


def pb_rows() -> list[str]:
    """PB with the prompt bootstrap on 400,000 responses (target ≤ 1 s), by number of prompts."""
    lines = ["| responses | prompts (clusters) | draws B·n_c | `personalization_bias` s (stream) | matrix bootstrap s "
             "(numpy draws) | `bootstrap='numpy'` gives the matrix's interval |",
             "|---:|---:|---:|---:|---:|---|"]
    for n_c in (20_000, 133_334):
        got = json.loads(run_python(_PB.format(n_c=n_c), timeout=1800).strip().splitlines()[-1])
        old = got["old"]
        row = (f"| 400,000 | {n_c:,} | {2000 * n_c:,} | {got['s']:.2f} | "
               f"{'%.2f' % old['s'] if old else 'not run (B·n_c matrix too large)'} | {old['same'] if old else '—'} |")
        print(row, flush=True)
        lines.append(row)
    return lines


def interval_rows(sizes: list[int], tmp: Path) -> list[str]:
    """The interval-outcome table (one ``ipcausal.test`` per size, format and variant)."""
    lines = ["| pairs | format | variant | `ipcausal.test` s | peak RSS MB | route of p | pandas read s | ratio |",
             "|---:|---|---|---:|---:|---|---:|---:|"]
    for n in sizes:
        files = {kind: generate_interval(n, tmp, kind) for kind in ("likert", "binary")}
        for fmt in ("jsonl", "parquet"):
            refs = {kind: measure("pandas read", files[kind][fmt]) for kind in files}
            for name, (kind, extra) in _VARIANTS.items():
                try:
                    got = measure("ipcausal.test interval", files[kind][fmt], extra)
                except RuntimeError as exc:  # a refusal is a result: say what it said
                    why = str(exc).strip().splitlines()[-1][:160].replace("|", "/")
                    row = f"| {n:,} | {fmt} | {name} | refused | — | {why} | {refs[kind]['s']:.2f} | — |"
                    print(row, flush=True)
                    lines.append(row)
                    continue
                ref = refs[kind]
                row = (f"| {n:,} | {fmt} | {name} | {got['s']:.2f} | {got['rss_mb']:.0f} | "
                       f"{', '.join(got.get('routes', []))} | {ref['s']:.2f} | {got['s'] / ref['s']:.2f}x |")
                print(row, flush=True)
                lines.append(row)
        for kind in files:
            for path in files[kind].values():
                path.unlink()
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--only", choices=("similarity", "interval"), default=None)
    args = ap.parse_args(argv)
    if args.only == "interval":
        with tempfile.TemporaryDirectory(prefix="ipcausal-scale-") as tmp:
            lines = interval_rows(args.sizes, Path(tmp))
        lines += ["", "PB, prompt bootstrap (B = 2,000):", ""] + pb_rows()
        return _write(lines, Path(args.out).with_name("SCALE_INTERVAL.txt") if args.out == str(OUT) else Path(args.out))
    lines = ["| pairs | format | file MB | step | ipcausal s | peak RSS MB | pandas read s | pandas peak MB | ratio |",
             "|---:|---|---:|---|---:|---:|---:|---:|---:|"]
    with tempfile.TemporaryDirectory(prefix="ipcausal-scale-") as tmp:
        for n in args.sizes:
            paths = generate(n, Path(tmp))
            for fmt, path in paths.items():
                mb = path.stat().st_size / 2**20
                ref = measure("pandas read", path)
                for step in ("PairSet.read", "ipcausal.test"):
                    got = measure(step, path)
                    row = (f"| {n:,} | {fmt} | {mb:.0f} | `{step}` | {got['s']:.2f} | {got['rss_mb']:.0f} | "
                           f"{ref['s']:.2f} | {ref['rss_mb']:.0f} | {got['s'] / ref['s']:.2f}x |")
                    print(row, flush=True)
                    lines.append(row)
                path.unlink()
        if args.only is None:
            lines += ["", "Interval outcomes (three background pairs of one model; Likert 1–6 or 0/1):", ""]
            lines += interval_rows(args.sizes, Path(tmp))
            lines += ["", "PB, prompt bootstrap (B = 2,000):", ""] + pb_rows()
    return _write(lines, Path(args.out))


def _write(lines: list[str], out: Path) -> int:
    info = machine()
    lines += ["", f"Machine: {info.get('Model name', '?')}, {info.get('CPU(s)', '?')} CPU(s); "
              f"load {info.get('load average (1, 5, 15 min)', '?')}.",
              "Each cell: one run in a fresh interpreter (imports not timed); peak RSS = ru_maxrss of that process.",
              "ratio = ipcausal time / pandas' own read of the same file."]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
