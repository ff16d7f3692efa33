"""Seeded size of the whole ``ipcausal.audit`` under H0: family-wise error with e-Holm, looks after every batch.

Each replication is a fresh null study of ``ipcausal.testing.SimulatedModel`` (no effect, ratings
1..5, three backgrounds, so three background pairs whose tests share responses' structure) audited
end to end — order, batches of 4 pairs (many looks), run, scoring, e-processes, e-Holm — and counts
as a family-wise error when any background pair is rejected.  The per-stream calibration of the
e-process itself (≥ 20,000 streams) is ``benchmarks/calib_sequential.py``; this checks that the
audit's own decisions (e-Holm at the batch ends, stopping groups) keep the level.

Usage: ``python benchmarks/calib_audit.py [REPS]`` (default 200); writes ``benchmarks/CALIB_AUDIT.txt``.
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import ipcausal
from ipcausal.scoring import get_scorer
from ipcausal.study.options import AuditSettings
from ipcausal.testing import SimulatedModel

HERE = Path(__file__).resolve().parent


def main(reps: int = 200, n: int = 40, alpha: float = 0.05) -> None:
    rows = ["# ipcausal.audit under H0: family-wise error (any of 3 background pairs rejected), looks every 4 pairs",
            "", "| correction | replications | pairs per background pair | FWER | SE | α + 3 SE | pairs sent (mean) |",
            "|---|---|---|---|---|---|---|"]
    for correction in ("e-holm", "e-bonferroni"):
        errors = sent = 0
        for rep in range(reps):
            sim = SimulatedModel(effect=0.0, levels=5, seed=rep, backgrounds=("a", "b", "c"))
            ps = sim.study(n=n, rng=rep).drop_columns("y_i", "y_j", "score_i", "score_j", "model")
            report = ipcausal.audit(ps, backend=sim, scorer=get_scorer("essay", rater=sim.score, bound=4), rng=rep,
                                    settings=AuditSettings(batch_size=4, correction=correction, alpha=alpha)).report
            errors += report.ip_detected
            sent += report.audit.pairs_sent
        rate = errors / reps
        se = math.sqrt(alpha * (1 - alpha) / reps)
        row = (f"| {correction} | {reps} | {n} | {rate:.3f} | {se:.3f} | {alpha + 3 * se:.3f} | "
               f"{sent / reps:.1f} of {3 * n} |")
        print(row, flush=True)
        rows.append(row)
    (HERE / "CALIB_AUDIT.txt").write_text("\n".join(rows) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 200)
