"""Scorers: turn the responses of a PairSet into an outcome the tests can use.

Similarity outcomes (``similarity`` ∈ [0, 1], tested with the sign test):
``"choice"``, ``"scale"``, ``"embedding"``, ``"judge"``.  Interval outcomes (``score_i``,
``score_j``, tested with the permutation test): ``"essay"``, ``"mcq"``.

:func:`score_pairs` scores every pair and returns a :class:`ScoreResult`: the scored pairs
(ready for :func:`ipcausal.test`), the pairs it could not score (with the reason), and the
counts that go into the report.

Unparseable responses (the answer names no option, a judge gives no rating after its
retries) are never silently scored.  ``unparseable="exclude"`` (default) drops the pair
and counts it; ``unparseable="zero"`` scores that response 0 (correctness 0, rating 0,
similarity 0) and counts it too — the study's convention for wrong-format answers, which
biases effects toward whichever background produces more malformed answers.  Missing
responses (the run failed) and judge backend failures are always dropped and counted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from ipcausal.pairs import PairSet
from ipcausal.scoring._common import FAILED, MISSING, OK, UNPARSEABLE, check_policy, is_missing
from ipcausal.scoring.ratings import (
    ESSAY_RUBRIC,
    EssayJudge,
    OfflineEssayRater,
    essay_features,
    mcq_correct,
    offline_essay_score,
    parse_choice,
)
from ipcausal.scoring.similarity import (
    EmbeddingSimilarity,
    JudgeSimilarity,
    choice_similarity,
    cosine_to_similarity,
    embedding_model_path,
    parse_rating,
    scale_similarity,
)

__all__ = [
    "SCORERS",
    "ScoreResult",
    "score_pairs",
    "choice_similarity",
    "scale_similarity",
    "cosine_to_similarity",
    "EmbeddingSimilarity",
    "JudgeSimilarity",
    "EssayJudge",
    "ESSAY_RUBRIC",
    "OfflineEssayRater",
    "offline_essay_score",
    "essay_features",
    "parse_choice",
    "parse_rating",
    "mcq_correct",
    "embedding_model_path",
]

SCORERS: tuple[str, ...] = ("choice", "scale", "embedding", "judge", "essay", "mcq")
SIMILARITY_SCORERS = ("choice", "scale", "embedding", "judge")


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


def _options(value: Any) -> list[str] | None:
    if is_missing(value):
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            return None
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if isinstance(value, (list, tuple)) and value and all(isinstance(v, str) for v in value):
        return list(value)
    return None


_NUM = re.compile(r"-?\d+(?:\.\d+)?")


def _first_number(text: str) -> float | None:
    m = _NUM.search(text)
    return None if m is None else float(m.group(0))


def _status_of(statuses: list[str]) -> str:
    for s in (MISSING, FAILED, UNPARSEABLE):
        if s in statuses:
            return s
    return OK


def score_pairs(
    pairs: PairSet,
    scorer: str,
    *,
    unparseable: str = "exclude",
    backend: Any = None,
    rater: Callable[[str], float | None] | None = None,
    embedder: EmbeddingSimilarity | None = None,
    k: int | None = None,
    retries: int = 2,
) -> ScoreResult:
    """Score the responses ``y_i``, ``y_j`` of every pair.

    Parameters
    ----------
    pairs : PairSet
        Pairs with responses (``ipcausal.run`` fills them).
    scorer : {"choice", "scale", "embedding", "judge", "essay", "mcq"}
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
    retries : int
        Judge retries for replies without a rating.

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
    if scorer not in SCORERS:
        raise ValueError(f"`scorer` must be one of {', '.join(repr(s) for s in SCORERS)}, got {scorer!r}")
    policy = check_policy(unparseable)
    if len(pairs) == 0:
        raise ValueError("`pairs` is empty")
    for col in ("y_i", "y_j"):
        if col not in pairs:
            raise ValueError(f"`pairs` has no `{col}` column: run the model first (`ipcausal run`)")
    df = pairs.to_frame()
    df = df.drop(columns=[c for c in ("score_i", "score_j", "similarity") if c in df.columns])
    yi, yj = df["y_i"].tolist(), df["y_j"].tolist()
    n = len(df)
    similarity = scorer in SIMILARITY_SCORERS

    if scorer in ("judge",) and backend is None:
        raise ValueError("`backend` is required for scorer 'judge' (the LLM judge)")
    if scorer == "mcq":
        for col in ("options", "correct_option"):
            if col not in df.columns:
                raise ValueError(f"scorer 'mcq' needs the column `{col}` in `pairs`")

    values_i: list[float | None] = [None] * n
    values_j: list[float | None] = [None] * n
    st_i: list[str] = [OK] * n
    st_j: list[str] = [OK] * n
    sims: list[float | None] = [None] * n
    sim_st: list[str] = [OK] * n
    extra: dict[str, list[Any]] = {}

    if scorer == "embedding":
        emb = embedder or EmbeddingSimilarity()
        desc = f"embedding similarity (1 + cos)/2, {emb.name}"
        ok_rows = [r for r in range(n) if not is_missing(yi[r]) and not is_missing(yj[r])]
        got = emb([yi[r] for r in ok_rows], [yj[r] for r in ok_rows])
        for r in range(n):
            sim_st[r] = MISSING
        for r, s in zip(ok_rows, got):
            sims[r], sim_st[r] = float(s), OK
    elif scorer == "judge":
        judge = JudgeSimilarity(backend, retries=retries)
        desc = f"{judge.name}: rating 1-5 -> (r-1)/4"
        outs = judge(df["x_i"].tolist(), yi, yj)
        extra["judge_rating"] = [o.rating for o in outs]
        extra["judge_reply"] = [o.replies[-1] if o.replies else None for o in outs]
        for r, o in enumerate(outs):
            sims[r], sim_st[r] = o.value, o.status
    elif scorer in ("choice", "scale"):
        if scorer == "scale" and k is None and "scale_k" not in df.columns:
            raise ValueError("scorer 'scale' needs `k` (points on the scale) or a `scale_k` column")
        desc = "choice match (same option = 1)" if scorer == "choice" else "scale similarity 1 - |a-b|/(k-1)"
        for r in range(n):
            a, b = yi[r], yj[r]
            if is_missing(a) or is_missing(b):
                sim_st[r] = MISSING
                continue
            if scorer == "choice":
                opts = _options(df["options"].iat[r]) if "options" in df.columns else None
                if opts is not None:
                    ca, cb = parse_choice(a, opts), parse_choice(b, opts)
                    if ca is None or cb is None:
                        sim_st[r] = UNPARSEABLE
                        continue
                    sims[r] = 1.0 if ca == cb else 0.0
                else:
                    sims[r] = choice_similarity(a, b)
            else:
                kk = int(k if k is not None else df["scale_k"].iat[r])
                va, vb = _first_number(a), _first_number(b)
                if va is None or vb is None or not (1 <= va <= kk and 1 <= vb <= kk):
                    sim_st[r] = UNPARSEABLE
                    continue
                sims[r] = scale_similarity(va, vb, kk)
    elif scorer == "essay":
        if rater is not None:
            if not callable(rater):
                raise TypeError("`rater` must be a callable str -> float")
            fn, desc = rater, getattr(rater, "name", getattr(rater, "__name__", "user rater"))
        elif backend is not None:
            fn = EssayJudge(backend, retries=retries)
            desc = fn.name
        else:
            fn = OfflineEssayRater()
            desc = fn.name
        cache: dict[str, float | None] = {}
        for vals, sts, ys in ((values_i, st_i, yi), (values_j, st_j, yj)):
            for r, y in enumerate(ys):
                if is_missing(y):
                    sts[r] = MISSING
                    continue
                if y not in cache:
                    v = fn(y)
                    if v is not None and (isinstance(v, bool) or not np.isfinite(float(v))):
                        raise ValueError(f"`rater` returned {v!r}; it must return a finite number or None")
                    cache[y] = None if v is None else float(v)
                vals[r] = cache[y]
                if vals[r] is None:
                    sts[r] = UNPARSEABLE
    else:  # mcq
        desc = "multiple-choice correctness (1 = correct option)"
        for r in range(n):
            opts = _options(df["options"].iat[r])
            if opts is None:
                raise ValueError(f"column `options` must hold a list of option texts; bad at row {r}")
            corr = df["correct_option"].iat[r]
            if is_missing(corr):
                raise ValueError(f"column `correct_option` is missing at row {r}")
            corr = int(corr) if isinstance(corr, np.integer) else float(corr) if isinstance(corr, np.floating) else corr
            values_i[r], st_i[r] = mcq_correct(yi[r], opts, corr)
            values_j[r], st_j[r] = mcq_correct(yj[r], opts, corr)

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
    df["scorer"] = desc
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
        raise ValueError(f"no pair could be scored ({counts}); check the responses and the scorer")
    return ScoreResult(
        pairs=PairSet.from_frame(kept),
        dropped=dropped.reset_index(drop=True),
        counts=counts,
        scorer=desc,
        outcome="similarity" if similarity else "interval",
    )
