"""The text of one side of a pair under a mitigation (:func:`ipcausal.study.mitigation.apply_mitigation`).

:func:`rewrite_side` picks the transform of :mod:`ipcausal.interventions.neutralize` (or the LLM
rewrite of :mod:`ipcausal.interventions.rewrite`) for a mitigation kind and feeds it what the
pair records: the ``edits_<side>`` of the rule-based generators, the ``prompt_<side>`` part that
carries the cue, the pair's two backgrounds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

__all__ = ["rewrite_side"]


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and math.isnan(v))


def _llm_rewrite(text: str, row: Mapping[str, Any], side: str, rewriter: Any, memo: dict[str, Any]) -> Any:
    """The ``rewrite`` kind: the cue-carrying part (``prompt_<side>`` where it is inside the text) restated."""
    from ipcausal.interventions.neutralize import Neutralized
    from ipcausal.interventions.rewrite import rewrite_default

    part = row.get(f"prompt_{side}")
    part = str(part) if not _missing(part) and str(part).strip() and str(part) in text else text
    if part not in memo:  # a prompt shared by several pairs is rewritten once
        memo[part] = rewrite_default(part, rewriter, rng=0)
    r = memo[part]
    if not r.changed:
        return Neutralized(text, text, undone=r.undone, reason=r.reason)
    return Neutralized(text.replace(part, r.text), text)


def _rewrite(kind: str, text: str, row: Mapping[str, Any], side: str) -> Any:
    from ipcausal.interventions.neutralize import Neutralized, revert_markers, strip_cues, undo_edits

    if kind == "markers":  # the recorded swaps of the British side reverted (or made, on a British source)
        swaps = row.get("edits_j")
        british = ("uk", "british")
        if _missing(swaps) or str(row.get(f"background_{side}", "")).lower() not in british:
            return revert_markers(text)
        if side == "j":
            return revert_markers(text, swaps)
        return revert_markers(text, swaps, apply=str(row.get("background_j", "")).lower() in ("us", "american"))
    if kind == "strip":
        return strip_cues(text, [str(row["background_i"]), str(row["background_j"])])
    edits = row.get(f"edits_{side}")
    if _missing(edits):
        gen = row.get(f"generator_{side}")
        if not _missing(gen) and str(gen) not in ("source", "aae_features", "esl_errors"):
            return Neutralized(text, text, undone=False, reason=f"rewritten by {gen}: no edits recorded to undo")
        return Neutralized(text, text)
    src = row.get(f"prompt_{side}")
    return undo_edits(text, edits, source=None if _missing(src) else str(src))


def rewrite_side(kind: str, text: str, row: Mapping[str, Any], side: str, rewriter: Any = None,
                 memo: dict[str, Any] | None = None) -> Any:
    """The :class:`~ipcausal.interventions.neutralize.Neutralized` text of side ``side`` ("i"/"j") of ``row``.

    ``rewriter`` and ``memo`` (prompt → its rewrite, so a prompt shared by pairs is rewritten
    once) serve the ``"rewrite"`` kind.

    Examples
    --------
    >>> rewrite_side("markers", "What colour is it?", {}, "j").text
    'What color is it?'
    """
    if kind == "rewrite":
        return _llm_rewrite(text, row, side, rewriter, {} if memo is None else memo)
    return _rewrite(kind, text, row, side)
