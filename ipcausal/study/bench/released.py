"""IP-Bench's first table, offline: the study's released outputs as a :class:`BenchReport` (issue 20 item 5).

:func:`released_bench` reads the released folder (``../shared/data/jiarui-liu-IP``): every model
of the three cases under one label per model (:data:`ipcausal.study.bench.leaderboard.MODEL_LABELS`;
the two GPT-4 snapshots stay apart, so a model missing from a case has no cell there).  Each
cell is tested with the method the study states (exact tests, Bonferroni within the model; the
culture case on its objective AmbrQA questions, the sign test of median similarity 0.8), gets
the case's alignment verdict and its ``report.json`` under ``DIR/cells/<label>/<case>/``; the
models are compared per background pair on the pairs every model answered
(:func:`~ipcausal.study.compare.compare_runs`; the echo case's two statement variants of a
question as one cluster, as its cell tests use).  The culture case's similarity outcome has no
per-pair Δ, so its models are not compared.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from typing import Any

from ipcausal.study.bench.report import BenchCell, BenchReport

__all__ = ["released_bench", "RELEASED_BENCH_CASES", "CLUSTERS"]

RELEASED_BENCH_CASES = ("culture", "education", "echo")
#: The cluster column of each case's cells and comparisons.
CLUSTERS = {"culture": None, "education": None, "echo": "question_id"}


def _runs(root: Path, case: str) -> dict[str, Any]:
    from ipcausal.pairs import PairSet
    from ipcausal.study.bench.leaderboard import label_of, released_runs
    from ipcausal.study.reproduce import load_case1

    if case != "culture":
        return released_runs(root, case)
    df = load_case1(root).to_frame()
    out = {}
    for name, sub in df.groupby("model", sort=True):
        sub = sub.copy()
        sub["released_model"], sub["model"] = str(name), label_of(str(name))
        out[label_of(str(name))] = PairSet.from_frame(sub.reset_index(drop=True))
    return dict(sorted(out.items()))


#: The unit of each released case's effect (the study's own scores).
RELEASED_UNITS = {"culture": "median similarity of the paired answers (1 = same)",
                  "education": "points of the study's essay score", "echo": "share answered correctly (0/1)"}


def released_bench(released: str | os.PathLike[str], *, out: str | os.PathLike[str], alpha: float = 0.05,
                   seed: int = 0) -> BenchReport:
    """The study's models × its three cases from the released outputs, written into ``out``.

    Parameters
    ----------
    released : path
        The released folder (the jiarui-liu/IP layout: ``case_1/``, ``case_2/``, ``case_3/``).
    out : path
        The bench folder: ``cells/<label>/<case>/report.json``, ``bench.json``, ``bench.csv``,
        ``comparisons.csv``.
    alpha : float
        Family-wise level within each model.
    seed : int
        Seed of the comparisons' Monte Carlo and the intervals.

    Returns
    -------
    BenchReport

    Examples
    --------
    >>> import tempfile
    >>> from pathlib import Path
    >>> root = Path("../shared/data/jiarui-liu-IP")
    >>> rep = released_bench(root, out=tempfile.mkdtemp()) if root.is_dir() else None  # doctest: +SKIP
    >>> rep.cell("alpaca", "education").alignment  # doctest: +SKIP
    'misaligned (possibility 3)'
    """
    from ipcausal.cases.registry import get_case
    from ipcausal.study.alignment import align_groups
    from ipcausal.study.bench.cell import cell_examples, cell_groups
    from ipcausal.study.bench.runner import comparison_rows, rank_rows
    from ipcausal.study.compare import compare_runs
    from ipcausal.study.groups import ClusterWarning
    from ipcausal.study.record import RunRecord, write_outputs
    from ipcausal.study.reproduce import released_dir
    from ipcausal.study.test import MonteCarloResolutionWarning, test

    root = released_dir(released)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"`alpha` must lie in (0, 1), got {alpha!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"`seed` must be a non-negative integer, got {seed!r}")
    base = Path(out)
    if base.exists() and not base.is_dir():
        raise ValueError(f"`out` must be a folder, but {str(base)!r} is a file")
    cells, comparisons, ranks, labels = [], [], [], {}
    for case in RELEASED_BENCH_CASES:
        stance = get_case(case).stance
        runs = _runs(root, case)
        for label, ps in runs.items():
            labels.setdefault(label, None)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", MonteCarloResolutionWarning)
                warnings.simplefilter("ignore", ClusterWarning)
                report = test(ps, alpha=alpha, method="exact", correction="bonferroni", rng=seed,
                              cluster=CLUSTERS[case])
            rel = Path("cells") / label / case
            record = RunRecord(f"{label} on {case} (released outputs)", {"pairs": len(ps)}, {},
                               {"model": label, "released model": str(ps["released_model"].iloc[0]),
                                "released": str(root), "method": "exact", "correction": "bonferroni",
                                "cluster": CLUSTERS[case]})
            write_outputs(base / rel, report, record)
            verdict = align_groups(stance, report.groups)
            cells.append(BenchCell(label, case, "ok", str(rel), str(rel / "report.json"), cell_groups(report),
                                   verdict.verdict, verdict.reason, stance, margin=report.margin,
                                   unit=RELEASED_UNITS[case], examples=cell_examples(report)))
        if case != "culture" and len(runs) >= 2:
            compared = compare_runs(runs, cluster=CLUSTERS[case], rng=seed, ranks=True)
            comparisons += comparison_rows(case, compared)
            ranks += rank_rows(case, compared)
    order = {m: k for k, m in enumerate(sorted(labels))}
    cells.sort(key=lambda c: (order[c.model], RELEASED_BENCH_CASES.index(c.case)))
    notes = ("released outputs: every model of the study under one label (ipcausal.study.bench.leaderboard.MODEL_LABELS); "
             "a model a case did not run has no cell there (—)",
             "culture: the objective AmbrQA questions; its similarity outcome has no per-pair Δ, so its models "
             "are not compared")
    settings = {"released": str(root), "alpha": alpha, "seed": seed, "correction": "bonferroni", "method": "exact",
                "clusters": dict(CLUSTERS)}
    rep = BenchReport(tuple(sorted(labels)), RELEASED_BENCH_CASES, tuple(cells), tuple(comparisons), settings, notes,
                      tuple(ranks))
    rep.write(base / "bench.json")
    rep.write_csv(base)
    return rep
