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
exports nothing itself, so that a submodule and a function never share a name here.
"""
