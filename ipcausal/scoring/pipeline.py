"""score_pairs: score every pair with a registered scorer (see :mod:`ipcausal.scoring`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ipcausal.outcomes import directed
from ipcausal.pairs import PairSet
from ipcausal.scoring._common import FAILED, MISSING, OK, UNPARSEABLE, check_policy
from ipcausal.scoring.registry import SCORERS, SIMILARITY_SCORERS, Scorer, _bound, check_scorer, get_scorer  # noqa: F401
from ipcausal.scoring.similarity import EmbeddingSimilarity

__all__ = ["SCORERS", "SIMILARITY_SCORERS", "NoScorablePairs", "ScoreResult", "score_pairs"]


class NoScorablePairs(ValueError):
    """:func:`score_pairs` could score no pair (every response missing, failed or unparseable).

    A ``ValueError``; ``counts`` holds the counts by status, so a caller (the audit, which goes on
    with its next batch) decides on the type, never on the message; ``dropped`` the pairs with
    their responses and the status of each (as :attr:`ScoreResult.dropped`), so a caller can
    write them where a person reads why (``ipcausal case`` writes them to ``dropped.jsonl``).

    Examples
    --------
    >>> err = NoScorablePairs({"requested": 2, "scored": 0, "unparseable": 2})
    >>> isinstance(err, ValueError), err.counts["unparseable"], len(err.dropped)
    (True, 2, 0)
    """

    def __init__(self, counts: dict[str, int], dropped: pd.DataFrame | None = None, scorer: str | None = None) -> None:
        self.counts = dict(counts)
        self.dropped = dropped if dropped is not None else pd.DataFrame()
        self.scorer = scorer
        super().__init__(f"no pair could be scored ({self.counts}); check the responses and the scorer")


@dataclass(frozen=True)
class ScoreResult:
    """What :func:`score_pairs` returns.

    Attributes
    ----------
    pairs : PairSet
        The scored pairs, with the outcome columns and status columns
        (``similarity_status`` or ``status_i``/``status_j``); ready for :func:`ipcausal.test`.
    dropped : pandas.DataFrame
        Pairs left out, with their status columns saying why (``missing``, ``unparseable``, ``failed``).
    counts : dict
        ``requested``, ``scored``, ``missing``, ``unparseable``, ``failed``, ``zeroed`` (pairs).
    scorer : str
        The scorer's description (name and settings), for reports.
    """

    pairs: PairSet
    dropped: pd.DataFrame
    counts: dict[str, int]
    scorer: str
    outcome: str = field(default="similarity")


def _status_of(statuses: list[str]) -> str:
    for s in (MISSING, FAILED, UNPARSEABLE):
        if s in statuses:
            return s
    return OK


def _sample_lists(df: pd.DataFrame, side: str) -> list[list[Any]]:
    out = []
    for v in df[f"samples_{side}"].tolist():
        if isinstance(v, np.ndarray):
            v = v.tolist()
        out.append(list(v) if isinstance(v, (list, tuple)) else [])
    return out


def _score_samples(df: pd.DataFrame, entry: Scorer, policy: str, opts: dict[str, Any]) -> None:
    """Score every sample: ``scores_i``/``scores_j`` (interval) or the r × r mean ``similarity``.

    Unparseable samples are left out (``exclude``) or scored 0 (``zero``); missing ones are left out.
    For similarity outcomes ``similarity`` becomes the mean over all scored sample pairs (the
    first sample's value stays in ``similarity_first``) and ``similarities`` keeps them all.
    """
    si, sj = _sample_lists(df, "i"), _sample_lists(df, "j")
    n = len(df)
    if directed(entry.outcome):
        for side, lists in (("i", si), ("j", sj)):
            rows = [r for r in range(n) for _ in lists[r]]
            texts = [t for r in range(n) for t in lists[r]]
            got = entry.fn(df.iloc[rows].reset_index(drop=True), texts, texts, opts) if texts else None
            per: list[list[float]] = [[] for _ in range(n)]
            for pos, r in enumerate(rows):
                v, st = got.values_i[pos], got.status_i[pos]
                if v is not None and st == OK:
                    per[r].append(float(v))
                elif st == UNPARSEABLE and policy == "zero":
                    per[r].append(0.0)
            df[f"scores_{side}"] = pd.Series(per, index=df.index, dtype=object)
        return
    rows, ta, tb = [], [], []
    for r in range(n):
        for a in si[r]:
            for b in sj[r]:
                rows.append(r)
                ta.append(a)
                tb.append(b)
    got = entry.fn(df.iloc[rows].reset_index(drop=True), ta, tb, opts) if rows else None
    per_s: list[list[float]] = [[] for _ in range(n)]
    for pos, r in enumerate(rows):
        v, st = got.sims[pos], got.sim_status[pos]
        if v is not None and st == OK:
            per_s[r].append(float(v))
        elif st == UNPARSEABLE and policy == "zero":
            per_s[r].append(0.0)
    df["similarity_first"] = df["similarity"]
    df["similarities"] = pd.Series(per_s, index=df.index, dtype=object)
    df["similarity"] = [float(np.mean(x)) if x else f for x, f in zip(per_s, df["similarity_first"])]


def score_pairs(
    pairs: PairSet,
    scorer: str | Scorer,
    *,
    unparseable: str = "exclude",
    backend: Any = None,
    rater: Callable[[str], float | None] | None = None,
    embedder: EmbeddingSimilarity | None = None,
    k: int | None = None,
    retries: int | None = None,
) -> ScoreResult:
    """Score the responses ``y_i``, ``y_j`` of every pair.

    Parameters
    ----------
    pairs : PairSet
        Pairs with responses (``ipcausal.run`` fills them).
    scorer : Scorer or {"choice", "scale", "embedding", "judge", "essay", "mcq"}
        A scorer made with its options (:func:`~ipcausal.scoring.get_scorer`), or a name.
        ``"choice"``: same option → 1 else 0 (options parsed from the ``options`` column when
        present, else the answers are compared as labels); ``"scale"``: 1 − |a − b|/(k − 1)
        for the first number in each answer; ``"embedding"``: (1 + cos)/2 of sentence
        embeddings; ``"judge"``: an LLM judge's 1–5 rating → (r − 1)/4 (needs ``backend``);
        ``"essay"``: a rating per response by ``rater`` (any ``str -> float``), else by
        :class:`EssayJudge` on ``backend``, else by :func:`offline_essay_score`; ``"mcq"``:
        correctness 1/0 from the ``options`` and ``correct_option`` columns
        (``correct_option``: the right option's number counted from 1, or its text).
    unparseable : {"exclude", "zero"}
        What to do with an answer that cannot be scored (see the module docs).
    backend : Backend, optional
        The judge for ``"judge"`` and (without ``rater``) ``"essay"``.
    rater : callable, optional
        Essay rater ``str -> float`` (``None`` return = unparseable).
    embedder : EmbeddingSimilarity, optional
        Reuse a loaded embedding model.
    k : int, optional
        Points on the scale (``"scale"``); else the ``scale_k`` column.
    retries : int, optional
        Judge retries for replies without a rating (default 2).
    The options given here are added to (and override) those ``scorer`` was made with.

    With repeated samples (``samples_i``/``samples_j`` from ``ipcausal run --n K``) every sample is
    scored: interval scorers add ``scores_i``/``scores_j`` (one score per sample; ``ipcausal.test``
    then tests the per-pair means), similarity scorers set ``similarity`` to the mean over the
    r × r sample pairs (the first samples' value stays in ``similarity_first``).

    Interval scorers also write ``bound``: the scorer's known bound on |score_j − score_i| (1 for
    ``mcq``, 5 for the 1..6 essay rubric, the ``bound`` option; NaN when unknown, e.g. a custom
    rater).  :func:`ipcausal.test` reads it to choose the interval for the mean Δ.

    Returns
    -------
    ScoreResult

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.scoring import score_pairs
    >>> ps = ipcausal.PairSet.from_records([
    ...     {"pair_id": i, "background_i": "US", "background_j": "UK", "x_i": "q", "x_j": "q",
    ...      "options": ["Agree", "Disagree"], "y_i": "Agree", "y_j": a}
    ...     for i, a in enumerate(["Agree", "Option 2", "no idea"])])
    >>> res = score_pairs(ps, "choice")
    >>> res.pairs["similarity"].tolist(), res.counts["unparseable"]
    ([1.0, 0.0], 1)
    """
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    policy = check_policy(unparseable)
    if len(pairs) == 0:
        raise ValueError("`pairs` is empty")
    made = get_scorer(scorer, backend=backend, rater=rater, embedder=embedder, k=k, retries=retries) \
        if isinstance(scorer, Scorer) else scorer
    entry = check_scorer(made, pairs.columns, backend=backend, k=k, rater=rater)
    opts = {"backend": None, "rater": None, "embedder": None, "k": None, "retries": 2,
            **(made.options if isinstance(made, Scorer) else {})}
    for key, value in (("backend", backend), ("rater", rater), ("embedder", embedder), ("k", k),
                       ("retries", retries)):
        if value is not None:
            opts[key] = value
    for col in ("y_i", "y_j"):
        if col not in pairs:
            raise ValueError(f"`pairs` has no `{col}` column: run the model first (`ipcausal run`)")
    df = pairs.to_frame()
    df = df.drop(columns=[c for c in ("score_i", "score_j", "similarity") if c in df.columns])
    yi, yj = df["y_i"].tolist(), df["y_j"].tolist()
    n = len(df)
    similarity = not directed(entry.outcome)
    got = entry.fn(df, yi, yj, opts)
    desc = got.desc
    extra = got.extra or {}
    if similarity:
        sims, sim_st = list(got.sims), list(got.sim_status)
    else:
        values_i, values_j = list(got.values_i), list(got.values_j)
        st_i, st_j = list(got.status_i), list(got.status_j)

    zeroed = 0
    if similarity:
        status = sim_st
        if policy == "zero":
            for r in range(n):
                if sim_st[r] == UNPARSEABLE:
                    sims[r], zeroed = 0.0, zeroed + 1
        keep = np.array([s is not None and sim_st[r] in (OK, UNPARSEABLE) for r, s in enumerate(sims)])
        df["similarity"] = [np.nan if s is None else s for s in sims]
        df["similarity_status"] = sim_st
    else:
        status = [_status_of([a, b]) for a, b in zip(st_i, st_j)]
        if policy == "zero":
            for r in range(n):
                if UNPARSEABLE in (st_i[r], st_j[r]) and MISSING not in (st_i[r], st_j[r]):
                    zeroed += 1
                    values_i[r] = 0.0 if st_i[r] == UNPARSEABLE else values_i[r]
                    values_j[r] = 0.0 if st_j[r] == UNPARSEABLE else values_j[r]
        keep = np.array([values_i[r] is not None and values_j[r] is not None for r in range(n)])
        df["score_i"] = [np.nan if v is None else v for v in values_i]
        df["score_j"] = [np.nan if v is None else v for v in values_j]
        df["status_i"], df["status_j"] = st_i, st_j
    for name, vals in extra.items():
        df[name] = vals
    if "samples_i" in df.columns and "samples_j" in df.columns:
        _score_samples(df, entry, policy, opts)
    df["scorer"] = desc
    if not similarity:  # the scorer's known bound on |Δ| travels with the pairs (None: unknown)
        known = _bound(entry, {k: v for k, v in opts.items() if v is not None})
        df["bound"] = np.nan if known is None else float(known)
    counts = {
        "requested": n,
        "scored": int(keep.sum()),
        "missing": sum(1 for s in status if s == MISSING),
        "unparseable": sum(1 for s in status if s == UNPARSEABLE),
        "failed": sum(1 for s in status if s == FAILED),
        "zeroed": zeroed,
    }
    dropped = df.loc[~keep].drop(columns=[c for c in ("similarity", "score_i", "score_j") if c in df.columns])
    kept = df.loc[keep]
    if kept.empty:
        raise NoScorablePairs(counts, dropped.reset_index(drop=True), desc)
    return ScoreResult(
        pairs=PairSet.from_frame(kept),
        dropped=dropped.reset_index(drop=True),
        counts=counts,
        scorer=desc,
        outcome="similarity" if similarity else "interval",
    )
