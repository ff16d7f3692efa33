"""IP-Bench: many models × registered cases in one run (SPEC §10) — the wing's face.

The rest of the package uses the bench through the names below only; the modules behind them:

* :mod:`~ipcausal.study.bench.spec` — the bench file (:func:`read_spec`, :class:`BenchSpec`,
  :class:`ModelSpec`, :class:`CaseSpec`).
* :mod:`~ipcausal.study.bench.cell` — one (model, case) cell (:func:`run_cell`, its mitigation rows).
* :mod:`~ipcausal.study.bench.runner` — :func:`bench`: every cell (threads or Ray), the comparisons.
* :mod:`~ipcausal.study.bench.distributed` — the cells as Ray tasks, one actor serving the caches.
* :mod:`~ipcausal.study.bench.report` — :class:`BenchReport` and its rows (``bench.json``, CSVs).
* :mod:`~ipcausal.study.bench.probe` — the "can it infer the background?" column.
* :mod:`~ipcausal.study.bench.released` and :mod:`~ipcausal.study.bench.leaderboard` — the bench
  of the study's released model outputs.

The names are imported lazily (``import ipcausal.study.bench`` loads no module behind them).

Examples
--------
>>> from ipcausal.study.bench import read_spec
>>> read_spec({"models": [{"name": "sim", "backend": "simulated"}], "cases": [{"name": "echo"}]}).models[0].name
'sim'
"""

from __future__ import annotations

from ipcausal._lazy import lazy_names

_M = "ipcausal.study.bench."
_NAMES: dict[str, str] = {
    **dict.fromkeys(("bench", "estimate_cost", "DEFAULT_JOBS", "comparison_rows", "rank_rows", "scale_groups"),
                    _M + "runner"),
    **dict.fromkeys(("run_cell", "failed_cell", "cell_groups", "bench_mitigation", "scale_of", "unit_of",
                     "cell_examples"), _M + "cell"),
    **dict.fromkeys(("BenchSpec", "ModelSpec", "CaseSpec", "read_spec", "BACKENDS"), _M + "spec"),
    **dict.fromkeys(("BenchReport", "BenchCell", "CellGroup", "CellMitigation", "BenchComparison", "BenchRank",
                     "SCHEMA", "BENCH_COLUMNS", "COMPARISON_COLUMNS", "RANK_COLUMNS"), _M + "report"),
    **dict.fromkeys(("CellProbe", "reading", "probe_cell", "probe_text", "READINGS", "READING_MEANINGS",
                     "PROBE_COLUMNS", "stored_answers"), _M + "probe"),
    **dict.fromkeys(("require_ray", "run_on_ray", "ActorCache"), _M + "distributed"),
    **dict.fromkeys(("released_bench", "RELEASED_BENCH_CASES", "CLUSTERS"), _M + "released"),
    **dict.fromkeys(("MODEL_LABELS", "label_of", "released_runs", "RELEASED_CASES"), _M + "leaderboard"),
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_names(__name__, _NAMES)
