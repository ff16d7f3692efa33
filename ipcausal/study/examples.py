"""Example pairs a report shows: the two prompts, the two responses and their scores, chosen by a stated rule.

The first thing a reader of a report wants to see is what the model was asked and what it
answered.  :func:`example_pairs` picks, per group (model × background pair), the pairs the
:class:`~ipcausal.study.results.Report` carries for that, by :data:`EXAMPLE_RULE`: the
``largest`` pairs with the largest |Δ| (similarity outcomes: the lowest similarity, the two
answers that differ most), ties broken by the stored order, then ``random`` more drawn with a
fixed seed from the rest, so that a reader also sees typical pairs and not only extremes.  Every
pair is oriented as its group is (side a, then side b: Δ = score(b) − score(a)), and long texts
are cut at :data:`MAX_CHARS` characters (the cut is marked with "…").  The Report carries them,
so a renderer shows them without reading the pairs again.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ipcausal.outcomes import directed
from ipcausal.study.parts import ExamplePair

__all__ = ["ExamplePair", "example_pairs", "arm_examples", "EXAMPLE_RULE", "MAX_CHARS"]

#: How many pairs of each group are shown: the largest few, then a seeded random few of the rest.
EXAMPLE_RULE = {"largest": 2, "random": 2, "seed": 0}
#: Texts are cut to this many characters in the Report (the pairs file keeps them whole).
MAX_CHARS = 600


def _cut(v: Any) -> str | None:
    if v is None or (isinstance(v, float) and math.isnan(v)):
        return None
    s = str(v)
    return s if len(s) <= MAX_CHARS else s[: MAX_CHARS - 1].rstrip() + "…"


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def _side_scores(ps: Any, side: str) -> np.ndarray | None:
    if f"score_{side}" in ps:
        return np.asarray(ps[f"score_{side}"], dtype=np.float64)
    if f"scores_{side}" in ps:
        return np.array([np.mean(v) if hasattr(v, "__len__") and len(v) else np.nan for v in ps[f"scores_{side}"]])
    return None


def _oriented_rows(ps: Any, groups: Any, outcome: str, any_model: bool = False) -> Any:
    """Per group of ``ps`` that ``groups`` name: (model, a, b, name, rows, flip, measure) with measure = Δ
    oriented a → b (directed outcomes) or the similarity; ``None`` when the pairs are not scored."""
    from ipcausal.study.results import UNKNOWN_MODEL

    is_directed = directed(outcome)
    si, sj = _side_scores(ps, "i"), _side_scores(ps, "j")
    sim = np.asarray(ps["similarity"], dtype=np.float64) if "similarity" in ps else None
    if (is_directed and (si is None or sj is None)) or (not is_directed and sim is None):
        return None
    oriented = {(None if any_model else g.model, frozenset((g.background_a, g.background_b))):
                (g.background_a, g.background_b, g.group) for g in groups}
    bi = np.asarray(ps["background_i"], dtype=object)
    out = []
    for model, low, high, idx, _ in ps.pair_groups():
        label = UNKNOWN_MODEL if model is None else model
        key = (None if any_model else label, frozenset((low, high)))
        if key not in oriented:
            continue
        a, b, name = oriented[key]
        flip = bi[idx] != a  # stored b → a: swap the sides
        d = np.where(flip, si[idx] - sj[idx], sj[idx] - si[idx]) if is_directed else sim[idx]
        out.append((label, a, b, name, idx, flip, d))
    return out, si, sj


def _example(ps: Any, cols: dict[str, Any], scores: tuple[Any, Any], directed_: bool, label: str, a: str, b: str,
             name: str, row: int, flip: bool, value: float, reason: str) -> ExamplePair:
    si, sj = scores
    sa, sb = ("j", "i") if flip else ("i", "j")

    def col(c: str, side: str) -> Any:
        values = cols[f"{c}_{side}"]
        return None if values is None else values[row]

    side_score = {"i": si, "j": sj}
    return ExamplePair(
        model=label, group=name, pair_id=str(cols["pair_id"][row]), rule=reason, background_a=a, background_b=b,
        prompt_a=_cut(col("x", sa)) or "", prompt_b=_cut(col("x", sb)) or "", response_a=_cut(col("y", sa)),
        response_b=_cut(col("y", sb)), score_a=_num(side_score[sa][row]) if directed_ else None,
        score_b=_num(side_score[sb][row]) if directed_ else None, delta=_num(value) if directed_ else None,
        similarity=None if directed_ else _num(value))


def _columns(ps: Any) -> dict[str, Any]:
    return {c: list(ps[c]) if c in ps else None for c in ("pair_id", "x_i", "x_j", "y_i", "y_j")}


def _choose(size: np.ndarray, rule: dict[str, int]) -> list[tuple[int, bool]]:
    """(position, chosen for being largest) by the rule: the largest ``size`` first, then a seeded random few."""
    ranked = np.argsort(-size, kind="stable")
    top = [int(r) for r in ranked[: rule["largest"]] if np.isfinite(size[r])]
    rest = np.array([r for r in range(size.size) if r not in set(top) and np.isfinite(size[r])], dtype=np.int64)
    gen = np.random.default_rng(rule["seed"])
    extra = sorted(gen.choice(rest, size=min(rule["random"], rest.size), replace=False).tolist()) if rest.size else []
    return [(t, True) for t in top] + [(int(e), False) for e in extra]


def example_pairs(ps: Any, groups: Any, outcome: str, *, rule: dict[str, int] | None = None) -> tuple[ExamplePair, ...]:
    """The example pairs of every group of a Report (module docstring: the rule).

    Parameters
    ----------
    ps : PairSet
        The pairs the Report was computed from.
    groups : sequence of GroupResult
        The Report's groups (their model, backgrounds and orientation).
    outcome : str
        The Report's outcome (directed: Δ; similarity: the similarity column).
    rule : dict, optional
        ``{"largest": k, "random": r, "seed": s}`` (default :data:`EXAMPLE_RULE`).

    Returns
    -------
    tuple of ExamplePair

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records(
    ...     {"pair_id": f"p{k}", "background_i": "US", "background_j": "UK", "x_i": f"color {k}?",
    ...      "x_j": f"colour {k}?", "y_i": "red", "y_j": "blue" if k == 3 else "red",
    ...      "score_i": 1, "score_j": 1 + (k == 3) * 2} for k in range(8))
    >>> ex = ipcausal.test(ps).examples
    >>> [(e.pair_id, e.rule, e.delta) for e in ex][:2]
    [('p3', 'largest |Δ|', 2.0), ('p0', 'largest |Δ|', 0.0)]
    >>> len(ex), ex[0].prompt_b, ex[0].response_b
    (4, 'colour 3?', 'blue')
    """
    rule = dict(EXAMPLE_RULE if rule is None else rule)
    found = _oriented_rows(ps, groups, outcome)
    if found is None:
        return ()
    per, si, sj = found
    is_directed = directed(outcome)
    why = "largest |Δ|" if is_directed else "lowest similarity"
    cols = _columns(ps)
    out: list[ExamplePair] = []
    for label, a, b, name, idx, flip, d in per:
        size = np.where(np.isfinite(d), np.abs(d) if is_directed else -d, -np.inf)
        for r, largest in _choose(size, rule):
            out.append(_example(ps, cols, (si, sj), is_directed, label, a, b, name, int(idx[r]), bool(flip[r]),
                                float(d[r]), why if largest else f"random (seed {rule['seed']})"))
    return tuple(out)


def arm_examples(without: Any, with_: Any, groups: Any, outcome: str, *,
                 rule: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """Example pairs of a mitigation comparison: per background pair the pairs whose effect the mitigation
    changed most (largest |Δ_with − Δ_without|; similarity: |s_with − s_without|), then a seeded random
    few, each shown twice — ``label`` ``"without"`` and ``"with"`` the mitigation (the rewritten prompts).

    ``without``/``with_`` are the two scored arms on the same pair ids; ``groups`` carry each
    background pair's orientation (``background_a``, ``background_b``, ``group``: the
    comparison's MitigationGroups), matched whatever the model column says.
    Returns plain dicts (the fields of :class:`ExamplePair` and ``label``), for ``mitigation.json``.
    """
    rule = dict(EXAMPLE_RULE if rule is None else rule)
    is_directed = directed(outcome)
    found_a = _oriented_rows(without, groups, outcome, any_model=True)
    found_b = _oriented_rows(with_, groups, outcome, any_model=True)
    if found_a is None or found_b is None:
        return []
    (per_a, ai, aj), (per_b, bi, bj) = found_a, found_b
    cols_a, cols_b = _columns(without), _columns(with_)
    ids_b = {str(p): k for k, p in enumerate(cols_b["pair_id"])}
    out: list[dict[str, Any]] = []
    for label, a, b, name, idx, flip, d in per_a:
        other = {n: (ix, fl, dd) for _, _, _, n, ix, fl, dd in per_b}.get(name)
        if other is None:
            continue
        pos_b = {int(r): k for k, r in enumerate(other[0])}
        rows_b = [ids_b.get(str(cols_a["pair_id"][int(r)])) for r in idx]
        change = np.array([other[2][pos_b[rb]] - d[k] if rb is not None and rb in pos_b else np.nan
                           for k, rb in enumerate(rows_b)])
        size = np.where(np.isfinite(change), np.abs(change), -np.inf)
        why = "largest change |Δ_with − Δ_without|" if is_directed else "largest change |s_with − s_without|"
        for r, largest in _choose(size, rule):
            reason = why if largest else f"random (seed {rule['seed']})"
            rb = rows_b[r]
            for arm, ps, cols, sc, row, fl, value in (
                    ("without", without, cols_a, (ai, aj), int(idx[r]), bool(flip[r]), float(d[r])),
                    ("with", with_, cols_b, (bi, bj), rb, bool(other[1][pos_b[rb]]), float(other[2][pos_b[rb]]))):
                e = _example(ps, cols, sc, is_directed, label, a, b, name, row, fl, value, reason)
                out.append({"label": arm, **e.to_dict()})
    return out

