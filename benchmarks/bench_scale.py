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

Run it with ``python benchmarks/bench_scale.py`` (``--sizes 10000`` for a quick look).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

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


def generate(n: int, folder: Path, seed: int = 0, chunk: int = 100_000) -> dict[str, Path]:
    """Write ``n`` scored pairs as ``pairs_N.jsonl`` and ``pairs_N.parquet`` in ``folder`` (in chunks)."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    rng = np.random.default_rng(seed)
    paths = {"jsonl": folder / f"pairs_{n}.jsonl", "parquet": folder / f"pairs_{n}.parquet"}
    writer = None
    with open(paths["jsonl"], "w", encoding="utf-8") as fh:
        for start in range(0, n, chunk):
            cols = _chunk(start, min(chunk, n - start), rng)
            names = list(cols)
            for row in zip(*cols.values()):
                fh.write(json.dumps(dict(zip(names, row)), ensure_ascii=False) + "\n")
            table = pa.table(cols)
            writer = writer or pq.ParquetWriter(paths["parquet"], table.schema)
            writer.write_table(table)
    if writer is not None:
        writer.close()
    return paths


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
    "pandas read": ("import pandas as pd\nt0 = time.perf_counter()\n"
                    "df = pd.read_json({path!r}, lines=True) if {path!r}.endswith('.jsonl') "
                    "else pd.read_parquet({path!r})"),
}


def measure(step: str, path: Path) -> dict[str, float]:
    """Seconds and peak RSS (MB) of one step in a fresh interpreter (imports not timed)."""
    code = _STEP.format(body=_BODIES[step].format(path=str(path)))
    return json.loads(run_python(code, timeout=1800).strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args(argv)
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
    info = machine()
    lines += ["", f"Machine: {info.get('Model name', '?')}, {info.get('CPU(s)', '?')} CPU(s); "
              f"load {info.get('load average (1, 5, 15 min)', '?')}.",
              "Each cell: one run in a fresh interpreter (imports not timed); peak RSS = ru_maxrss of that process.",
              "ratio = ipcausal time / pandas' own read of the same file."]
    Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
