"""The defaults of :func:`ipcausal.test`, defined once: the library and every CLI command read them here.

A module of constants only, so that ``ipcausal --help`` reads them without loading the study.
"""

from __future__ import annotations

from typing import Any

__all__ = ["DEFAULTS", "OUTCOMES", "PAPER_N_RESAMPLES", "CASES", "JOINT_CORRECTIONS", "AUDIT_CORRECTIONS",
           "MITIGATION_KINDS", "AUDIT_BATCH_SIZE"]

#: The three case studies (``ipcausal case``, ``ipcausal demo``, ``ipcausal reproduce``).
CASES: tuple[str, ...] = ("culture", "education", "echo")

OUTCOMES = ("auto", "interval", "similarity")
PAPER_N_RESAMPLES = 1000
DEFAULTS: dict[str, Any] = {
    "outcome": "auto",
    "alpha": 0.05,
    "correction": "bonferroni",
    "m0": 0.8,  # the study's null median of the similarity
    "method": "auto",
    "n_resamples": 100_000,
}

#: The corrections of :func:`ipcausal.test` that test a model's background pairs jointly, by
#: relabelling each prompt's responses (``study/joint.py``), besides ``stats.multitest.CORRECTIONS``.
JOINT_CORRECTIONS: tuple[str, ...] = ("westfall-young", "westfall-young-closed")

#: How an audit combines the e-values of a model's background pairs, and its default batch of pairs.
AUDIT_CORRECTIONS: tuple[str, ...] = ("e-holm", "e-bonferroni", "none")
AUDIT_BATCH_SIZE = 32

#: The kinds of :class:`ipcausal.study.mitigation.Mitigation` (here, so the command line lists them
#: without loading pandas).
MITIGATION_KINDS: tuple[str, ...] = ("markers", "dialect", "strip", "instruct", "rewrite")
