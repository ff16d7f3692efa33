"""``ipcausal.audit`` end to end on the study's released echo-chamber outputs (case 3), replayed.

Every model's released correctness scores (``../shared/data/jiarui-liu-IP/case_3``, 3,704 pairs,
two per Farm question) are served by a replay backend (``"Answer: 1"`` / ``"Answer: 0"`` for each
prompt), so the whole audit runs as it would against the model: seeded order, batches of 32
pairs, the cache, the scorer, the e-process, the stop.  Per model and design (pairs as units, and
the question as the cluster, as SPEC §8 asks for the Farm data): the fixed-n verdict of
``ipcausal.test`` (same unit), the share of ORDERS seeds whose audit verdict agrees, the median
and 90th percentile of the pairs sent, and the requests saved against the full design.

Usage: ``python benchmarks/audit_replay.py [ORDERS]`` (default 10); writes ``benchmarks/AUDIT_REPLAY.txt``.
"""

from __future__ import annotations

import os
import sys
import time
import warnings
from pathlib import Path

import numpy as np

import ipcausal
from ipcausal.backends import Choice, Response
from ipcausal.scoring import get_scorer
from ipcausal.study.audit import audit
from ipcausal.study.groups import ClusterWarning
from ipcausal.study.options import AuditSettings
from ipcausal.study.reproduce import load_case3
from ipcausal.testing import SimulatedModel

HERE = Path(__file__).resolve().parent
DATA = Path(os.environ.get("IPCAUSAL_SHARED_DATA", HERE.parent.parent / "shared" / "data")) / "jiarui-liu-IP"


class Replay:
    """A backend that answers each prompt with its released score, as text."""

    kind = "replay"

    def __init__(self, model: str, answers: dict[str, float]) -> None:
        self.model, self.answers = model, answers

    def generate(self, requests):  # noqa: ANN001, ANN201 - the Backend protocol
        return [Response((Choice(f"Answer: {self.answers[r.messages[-1]['content']]:g}"),), model=self.model)
                for r in requests]


def replay_inputs(df, model: str):  # noqa: ANN001, ANN201
    """The prompts of ``model``'s pairs (scores removed) and its replay backend."""
    sub = df[df["model"] == model]
    answers = dict(zip(sub["x_i"], sub["score_i"])) | dict(zip(sub["x_j"], sub["score_j"]))
    pairs = ipcausal.PairSet.from_frame(sub.drop(columns=["score_i", "score_j", "model"]))
    return sub, pairs, Replay(model, answers)


def main(orders: int = 10) -> None:
    if not DATA.is_dir():
        sys.exit(f"research data not found at {DATA}")
    df = load_case3(DATA).to_frame()
    lines = [f"# ipcausal.audit on the released echo-chamber outputs (case 3), {orders} random orders per model",
             "", "| model | unit | fixed-n p | fixed-n verdict | audit agrees | median pairs sent | p90 pairs sent "
             "| requests saved (median) | seconds per audit |", "|---|---|---|---|---|---|---|---|---|"]
    for model in sorted(df["model"].unique()):
        sub, pairs, backend = replay_inputs(df, model)
        for cluster in (None, "question_id"):
            with warnings.catch_warnings():  # the pair design ignores the question on purpose (compared)
                warnings.simplefilter("ignore", ClusterWarning)
                fixed = ipcausal.test(ipcausal.PairSet.from_frame(sub), cluster=cluster, rng=0).groups[0]
            sent, agree, secs = [], 0, []
            for seed in range(orders):
                t0 = time.perf_counter()
                res = audit(pairs, backend=backend, scorer=get_scorer("essay", rater=SimulatedModel.read, bound=1),
                            rng=seed, settings=AuditSettings(cluster=cluster))
                secs.append(time.perf_counter() - t0)
                g = res.report.groups[0]
                sent.append(g.sequential.n_sent)
                agree += g.reject == (fixed.pvalue <= 0.05)
            n = len(sub)
            med = float(np.median(sent))
            row = (f"| {model} | {'question' if cluster else 'pair'} | {fixed.pvalue:.2e} | "
                   f"{'IP' if fixed.pvalue <= 0.05 else 'no IP'} | {agree}/{orders} | {med:.0f} ({med / n:.1%}) | "
                   f"{np.percentile(sent, 90):.0f} | {2 * (n - med):.0f} of {2 * n} | {np.median(secs):.2f} |")
            print(row, flush=True)
            lines.append(row)
    (HERE / "AUDIT_REPLAY.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10)
