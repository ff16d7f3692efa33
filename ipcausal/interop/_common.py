"""What the inspect_ai and lm-eval importers share: one record per answered side, paired back.

A harness answers each side of a pair as its own sample.  The importers turn every sample into
a :class:`SideRecord` (its pair key, its side label, its background, prompt, response and score)
and :func:`assemble` joins the two sides of every pair into a PairSet row, naming the samples
that have no partner.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from pathlib import Path
from typing import Any

from ipcausal._jsonio import json_ready
from ipcausal.pairs import REQUIRED_COLUMNS, PairSet
from ipcausal.stats.results import Result

__all__ = ["SideRecord", "ImportResult", "assemble", "side_rows", "pairs_of", "as_path", "SIDES"]

SIDES: tuple[str, str] = ("i", "j")
"""The side labels that the exporters write (``x_i`` is side ``"i"``, ``x_j`` side ``"j"``)."""

# columns that describe one run's answers: never exported as pair metadata
_ANSWER_COLUMNS = ("y_i", "y_j", "score_i", "score_j", "similarity", "samples_i", "samples_j")


@dataclass(frozen=True)
class SideRecord:
    """One answered side of a pair, as read from a harness's output."""

    sample_id: str
    key: str
    side: str
    background: str
    x: str
    y: str | None = None
    samples: tuple[str | None, ...] = ()
    score: float | None = None
    model: str | None = None
    meta: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ImportResult(Result):
    """What an importer returns: the PairSet and an account of what was read.

    Attributes
    ----------
    pairs : PairSet
        One row per pair whose two sides were found.
    n_samples : int
        Samples read from the files (each side of a pair is one sample; epochs count once).
    unpaired : tuple of str
        Sample ids whose partner side was missing (dropped when ``allow_missing=True``).
    files : tuple of str
        The files read, in order.
    """

    pairs: PairSet
    n_samples: int
    unpaired: tuple[str, ...]
    files: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"n_pairs": len(self.pairs), "n_samples": self.n_samples, "unpaired": list(self.unpaired),
                "files": list(self.files)}


def as_path(value: Any, name: str) -> Path:
    """``value`` as a Path; ``TypeError`` naming the parameter when it is not a path."""
    if not isinstance(value, (str, os.PathLike)) or (isinstance(value, str) and not value):
        raise TypeError(f"`{name}` must be a path, got {value!r}")
    return Path(value)


def pairs_of(pairs: Any) -> PairSet:
    """``pairs`` itself, or the PairSet read from the path it is (:func:`ipcausal.study.inputs.as_pairset`)."""
    from ipcausal.study.inputs import as_pairset

    return as_pairset(pairs, frames=False)


def side_rows(pairs: PairSet, *, target: str | None, reserved: Sequence[str] = ()) -> list[dict[str, Any]]:
    """Two rows per pair (side ``"i"`` then ``"j"``): id, input, background, target, the pair's columns.

    ``target`` names the column whose value becomes each side's target (``None``: no target).
    The pair's other columns (answers excluded) come back under ``"pair"``; a column whose
    name is in ``reserved`` raises, since it would be overwritten by a flat export.
    """
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet (or a path to one), got {type(pairs).__name__}")
    if target is not None:
        if not isinstance(target, str):
            raise TypeError(f"`target` must be a column name or None, got {type(target).__name__}")
        if target not in pairs:
            raise ValueError(f"`target`: the pairs have no column {target!r}; columns: {pairs.columns}")
    skip = set(REQUIRED_COLUMNS) | set(_ANSWER_COLUMNS) | ({target} if target else set())
    extra = [c for c in pairs.columns if c not in skip]
    clash = [c for c in extra if c in reserved]
    if clash:
        raise ValueError(f"`pairs`: column(s) {clash} would clash with the exported fields {list(reserved)}; "
                         "rename them first")
    rows: list[dict[str, Any]] = []
    for rec in pairs.records():
        meta = {c: json_ready(rec.get(c)) for c in extra}
        for side in SIDES:
            row: dict[str, Any] = {"id": f"{rec['pair_id']}:{side}", "input": rec[f"x_{side}"],
                                   "pair_id": rec["pair_id"], "side": side, "background": rec[f"background_{side}"],
                                   "pair": meta}
            if target is not None:
                value = json_ready(rec.get(target))
                if isinstance(value, float) and value.is_integer():
                    value = int(value)  # an option number read back as 2.0 is the target "2"
                row["target"] = "" if value is None else str(value)
            rows.append(row)
    return rows


def _check_sides(sides: Any) -> tuple[str, str] | None:
    if sides is None:
        return None
    if isinstance(sides, str) or not isinstance(sides, Sequence) or len(sides) != 2 \
            or not all(isinstance(s, str) and s for s in sides) or sides[0] == sides[1]:
        raise ValueError(f"`sides` must be two different labels (side i, side j) or None, got {sides!r}")
    return (sides[0], sides[1])


def assemble(records: Iterable[SideRecord], *, sides: Sequence[str] | None = SIDES, allow_missing: bool = False,
             files: Sequence[str | Path] = (), what: str = "sample", errored: Sequence[str] = ()) -> ImportResult:
    """Join answered sides into pairs.

    Records are grouped by ``(model, key)``.  With ``sides=(a, b)`` a group holds side ``a``
    (becomes ``x_i``) and side ``b`` (``x_j``), and its key is the pair id.  With ``sides=None``
    every two different side labels of a group make a pair (labels in sorted order, pair id
    ``"KEY:A-B"``): the layout of one row per (prompt, background).  When several models are
    present, pair ids are prefixed by the model (``"MODEL/ID"``) so that they stay unique.
    A group with one side only raises ``ValueError`` naming its sample ids, unless
    ``allow_missing`` (then they are dropped and listed in :attr:`ImportResult.unpaired`).
    ``errored`` names samples left out before pairing (they failed in the harness); the
    message mentions them, since their partners are the ones without a partner.
    """
    pair_sides = _check_sides(sides)
    if not isinstance(allow_missing, bool):
        raise TypeError(f"`allow_missing` must be True or False, got {allow_missing!r}")
    groups: dict[tuple[str | None, str], dict[str, SideRecord]] = {}
    n = 0
    for r in records:
        n += 1
        if pair_sides is not None and r.side not in pair_sides:
            raise ValueError(f"{what} {r.sample_id!r}: side {r.side!r} is not one of {list(pair_sides)} "
                             "(choose the side labels with `sides`)")
        g = groups.setdefault((r.model, r.key), {})
        if r.side in g:
            raise ValueError(f"{what}s {g[r.side].sample_id!r} and {r.sample_id!r} are both side {r.side!r} of pair "
                             f"{r.key!r}" + (f" (model {r.model})" if r.model else ""))
        g[r.side] = r
    if n == 0:
        raise ValueError(f"no {what}s found in {[str(f) for f in files] or 'the input'}")
    models = {m for m, _ in groups}
    rows: list[dict[str, Any]] = []
    unpaired: list[str] = []
    for (model, key), g in groups.items():
        if pair_sides is not None:
            combos = [pair_sides] if all(s in g for s in pair_sides) else []
        else:
            combos = list(combinations(sorted(g), 2))
        if not combos:
            unpaired.extend(r.sample_id for r in g.values())
            continue
        for a, b in combos:
            ri, rj = g[a], g[b]
            pid = key if pair_sides is not None else f"{key}:{a}-{b}"
            if len(models) > 1:
                pid = f"{model}/{pid}"
            row: dict[str, Any] = {"pair_id": pid, "background_i": ri.background, "background_j": rj.background,
                                   "x_i": ri.x, "x_j": rj.x}
            for k, v in {**ri.meta, **rj.meta}.items():
                if k not in REQUIRED_COLUMNS:
                    row.setdefault(k, v)
            if pair_sides is None or len(models) > 1:
                row["source_id"] = key
            row["y_i"], row["y_j"] = ri.y, rj.y
            if len(ri.samples) > 1 or len(rj.samples) > 1:
                row["samples_i"], row["samples_j"] = list(ri.samples), list(rj.samples)
            if ri.score is not None or rj.score is not None:
                row["score_i"], row["score_j"] = ri.score, rj.score
            if model is not None:
                row["model"] = model
            rows.append(row)
    if unpaired and not allow_missing:
        shown = ", ".join(repr(s) for s in unpaired[:10]) + (f" and {len(unpaired) - 10} more" if len(unpaired) > 10
                                                              else "")
        errored = list(dict.fromkeys(errored))
        why = (f" ({len(errored)} {what}(s) failed in the harness and were left out: "
               + ", ".join(repr(e) for e in list(errored)[:10]) + ")") if errored else ""
        raise ValueError(f"{len(unpaired)} {what}(s) have no partner side: {shown}{why}; pass `allow_missing` "
                         "(--allow-missing) to drop them")
    if not rows:
        raise ValueError(f"no complete pair among the {n} {what}s read")
    scored = [r for r in rows if "score_i" in r]
    if scored and len(scored) != len(rows):
        raise ValueError(f"{len(rows) - len(scored)} pair(s) have no score while others do")
    bad = [r["pair_id"] for r in scored if r["score_i"] is None or r["score_j"] is None]
    if bad:
        raise ValueError(f"pair(s) {bad[:5]} lack a score on one side")
    return ImportResult(PairSet.from_records(rows), n, tuple(unpaired), tuple(str(f) for f in files))
