"""Mitigations: does a countermeasure remove implicit personalization? (SPEC §10) — the wing's face.

A :class:`Mitigation` is a transform applied to both prompts of every pair before they are sent
(the kinds and what each does: :mod:`~ipcausal.study.mitigation.transforms`).  The modules:

* :mod:`~ipcausal.study.mitigation.transforms` — :class:`Mitigation`, :func:`apply_mitigation`
  (each side rewritten by :mod:`~ipcausal.study.mitigation.texts`, every rewrite checked).
* :mod:`~ipcausal.study.mitigation.evaluate` — :func:`evaluate_mitigation`: the pairs run without
  and with it, and per background pair what it changed.
* :mod:`~ipcausal.study.mitigation.case` — :func:`run_case_mitigation`: a registered case run
  without and with a mitigation (``ipcausal case NAME --mitigation M``).
* :mod:`~ipcausal.study.mitigation.results` — :class:`MitigationResult`, :class:`MitigationGroup`.

The rest of the package uses the names below only; they are imported lazily.

Examples
--------
>>> from ipcausal.study.mitigation import Mitigation
>>> Mitigation("strip").name
'strip'
"""

from __future__ import annotations

from ipcausal._lazy import lazy_names

_M = "ipcausal.study.mitigation."
_NAMES: dict[str, str] = {
    **dict.fromkeys(("KINDS", "DEFAULT_INSTRUCTION", "Mitigation", "apply_mitigation", "as_mitigation"),
                    _M + "transforms"),
    **dict.fromkeys(("evaluate_mitigation", "evaluate_runs", "RUN_KEYS", "TEST_KEYS"), _M + "evaluate"),
    **dict.fromkeys(("CaseMitigation", "run_case_mitigation", "tag_backgrounds", "mitigation_table"), _M + "case"),
    **dict.fromkeys(("MitigationGroup", "MitigationResult"), _M + "results"),
}
__all__ = sorted(_NAMES)
__getattr__, __dir__ = lazy_names(__name__, _NAMES)
