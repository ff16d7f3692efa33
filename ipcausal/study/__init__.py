"""The study level: from scored pairs to a :class:`~ipcausal.study.results.Report`.

* :mod:`~ipcausal.study.test` — :func:`ipcausal.test`: group and orient the pairs, test each
  background pair, correct each model's family, summarise (PB), assemble the Report.
* :mod:`~ipcausal.study.results` — :class:`GroupResult` and :class:`Report` (``write``/``read``).
* :mod:`~ipcausal.study.run` — :func:`ipcausal.run`: send pairs to a backend (cached, resumable).
* :mod:`~ipcausal.study.cases` — the three case studies end to end.
* :mod:`~ipcausal.study.power`, :mod:`~ipcausal.study.placebo`, :mod:`~ipcausal.study.reproduce`.
* :mod:`~ipcausal.study.bench` — IP-Bench, a package with a face: many models × cases (its spec, one
  cell, the BenchReport, Ray, the released leaderboard).
* :mod:`~ipcausal.study.mitigation` — mitigations, a package with a face: the transforms, their
  evaluation, a case run with a mitigation, its results.

This package imports :mod:`ipcausal.stats` and the data layers above it (PairSet, backends,
scorers); it never imports :mod:`ipcausal.report` (rendering sits below it).  The functions are
reached through the top-level lazy names (``ipcausal.test``, ``ipcausal.run`` …); this package
exports nothing itself, so that a submodule and a function never share a name here (only the old
names of the modules that moved into the wings, :data:`MOVED_MODULES`, until 0.3).
"""

from ipcausal._lazy import alias_modules

#: The modules that moved into the wings in 0.2, by their old names: ``import ipcausal.study.benchreport``
#: still works until 0.3 (the module of the new place, and a ``DeprecationWarning`` naming it).
MOVED_MODULES: dict[str, tuple[str, str]] = {
    "benchspec": ("ipcausal.study.bench.spec", "0.2"),
    "benchreport": ("ipcausal.study.bench.report", "0.2"),
    "benchprobe": ("ipcausal.study.bench.probe", "0.2"),
    "benchray": ("ipcausal.study.bench.distributed", "0.2"),
    "benchreleased": ("ipcausal.study.bench.released", "0.2"),
    "leaderboard": ("ipcausal.study.bench.leaderboard", "0.2"),
    "mitigationresult": ("ipcausal.study.mitigation.results", "0.2"),
    "casemitigation": ("ipcausal.study.mitigation.case", "0.2"),
}
__getattr__ = alias_modules(__name__, MOVED_MODULES)
