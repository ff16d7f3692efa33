"""How fast the command line answers: ``--help``, ``--version`` and ``ipcausal test`` on 10 pairs.

Each timing is a fresh interpreter (``python -m ipcausal.cli ...``), the median of 7 after one
warm-up run (so numba's on-disk cache and the OS file cache are warm).  The competitor is the
eager parser this package had before issue 24: every command registered in full at start-up
(``build_parser()`` then ``--help``), which imported scipy, numba and pandas just to print help.
The last rows time the imports the ``test`` route cannot avoid, one fresh interpreter each.

Run: ``python benchmarks/bench_cli.py`` → ``benchmarks/CLI.txt`` (targets: ``--help`` and
``--version`` ≤ 0.3 s, ``ipcausal test`` on 10 pairs ≤ 1.0 s above the import floor ``import pandas,
numba`` measured in the same run).
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import kernel_choice, load, machine  # noqa: E402

OUT = Path(__file__).with_name("CLI.txt")


def _time(cmd: list[str], repeats: int = 7) -> dict[str, float]:
    subprocess.run(cmd, capture_output=True, check=False, timeout=300)  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False, timeout=300)
        times.append(time.perf_counter() - t0)
    return {"median": statistics.median(times), "min": min(times), "max": max(times)}


def main() -> None:
    py = sys.executable
    folder = Path(tempfile.mkdtemp())
    pairs = folder / "ten.jsonl"
    with pairs.open("w") as fh:
        for k in range(10):
            fh.write(json.dumps({"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q",
                                 "score_i": k % 3, "score_j": (k * 7) % 4}) + "\n")
    eager = ("from ipcausal.cli import build_parser\n"
             "try:\n    build_parser().parse_args(['--help'])\nexcept SystemExit:\n    pass")
    rows = [
        ("ipcausal --help", [py, "-m", "ipcausal.cli", "--help"], 0.3),
        ("ipcausal --version", [py, "-m", "ipcausal.cli", "--version"], 0.3),
        ("eager parser --help (before)", [py, "-c", eager], None),
        ("ipcausal test ten.jsonl (10 pairs)", [py, "-m", "ipcausal.cli", "test", str(pairs)], None),
        ("import pandas, numba (the floor)", [py, "-c", "import pandas, numba"], None),
        ("python -c pass (interpreter start)", [py, "-c", "pass"], None),
        ("import pandas", [py, "-c", "import pandas"], None),
        ("import numba", [py, "-c", "import numba"], None),
        ("import scipy.special", [py, "-c", "import scipy.special"], None),
    ]
    results = {name: (_time(cmd), target) for name, cmd, target in rows}
    lines = [f"# bench_cli.py  {machine().get('date', '')}", ""]
    lines += [f"{'what':40s} {'median':>8s} {'min':>8s} {'max':>8s}  target"]
    for name, (t, target) in results.items():
        verdict = "" if target is None else (f"<= {target} s: " + ("met" if t["median"] <= target else "NOT met"))
        lines.append(f"{name:40s} {t['median']:8.3f} {t['min']:8.3f} {t['max']:8.3f}  {verdict}")
    ratio = results["eager parser --help (before)"][0]["median"] / results["ipcausal --help"][0]["median"]
    above = results["ipcausal test ten.jsonl (10 pairs)"][0]["median"] - results["import pandas, numba (the floor)"][0]["median"]
    lines += ["", f"--help: eager / lazy = {ratio:.1f}x",
              f"ipcausal test on 10 pairs: {above:+.3f} s above the floor `import pandas, numba` (medians; target "
              f"<= 1.0 s above it: {'met' if above <= 1.0 else 'NOT met'}); load {load()}",
              f"kernel auto chose: {kernel_choice()}"]
    text = "\n".join(lines) + "\n"
    OUT.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
