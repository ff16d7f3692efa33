"""Step 3 of :func:`ipcausal.test` with ``correction="westfall-young"`` (or ``"westfall-young-closed"``):
the joint test per model.

With one response per (prompt, background) reused by every group that contains that background
(SAE in SAE–AAE and SAE–ESL), the background pairs' tests are dependent.  Permuting the
background labels of each prompt's k responses (all k! relabelings, independently per prompt)
gives the joint null "no background matters"; the Westfall–Young step-down max-T procedure on
that randomisation controls the family-wise error exactly under this dependence
(:func:`ipcausal.stats.westfall_young`).  The unit of randomisation is the prompt (``prompt_id``).
``"westfall-young-closed"`` runs the closed-testing form instead (each intersection of pairs by
the relabelings of its own backgrounds): it recovers the power the step-down loses when one
background differs much more than the others (the released GPT-4 essays, SAE–ESL: 0.079
step-down, 0.046 Holm, 0.0455 closed).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ipcausal.pairs import PairSet
from ipcausal.stats.joint import westfall_young
from ipcausal.study.defaults import JOINT_CORRECTIONS
from ipcausal.study.groups import UNKNOWN_MODEL
from ipcausal.study.results import GroupResult, OmnibusInfo

__all__ = ["JOINT_CORRECTIONS", "prompt_scores", "correct_joint"]

_PROCEDURE = {"westfall-young": "step-down", "westfall-young-closed": "closed"}


def prompt_scores(sub: Any, backgrounds: list[str], model: str, correction: str = "westfall-young") -> np.ndarray:
    """(n_prompts, k) scores: each prompt's response to each background, from ``sub``'s pairs.

    Raises ``ValueError`` naming the prompts that lack a background (up to five), or that give one
    (prompt, background) two different scores.
    """
    col = {b: i for i, b in enumerate(backgrounds)}
    table: dict[str, list[float]] = {}
    samples = "scores_i" in sub.columns and "scores_j" in sub.columns
    conflict: list[str] = []
    for side in ("i", "j"):
        bg = sub[f"background_{side}"].astype(str).tolist()
        pid = sub["prompt_id"].astype(str).tolist()
        vals = ([float(np.mean(v)) for v in sub[f"scores_{side}"]] if samples
                else sub[f"score_{side}"].astype(float).tolist())
        for p, b, v in zip(pid, bg, vals):
            row = table.setdefault(p, [np.nan] * len(backgrounds))
            old = row[col[b]]
            if not np.isnan(old) and old != v:
                conflict.append(f"{p} ({b})")
            row[col[b]] = v
    if conflict:
        raise ValueError(f"`correction`={correction!r} needs one response per prompt and background, but "
                         f"{model}: prompts {', '.join(conflict[:5])} give one background two different scores")
    y = np.array(list(table.values()), dtype=np.float64)
    missing = [p for p, row in table.items() if np.isnan(row).any()]
    if missing:
        raise ValueError(f"`correction`={correction!r} needs every prompt scored under every background of "
                         f"the model; {model}: {len(missing)} prompts lack one, e.g. {', '.join(missing[:5])}")
    return y


def correct_joint(ps: PairSet, st: Any, results: list[GroupResult], gen: np.random.Generator
                  ) -> tuple[list[GroupResult], dict[str, OmnibusInfo]]:
    """Westfall–Young adjusted p per group and the omnibus p per model."""
    if "prompt_id" not in ps:
        raise ValueError(f"`correction`={st.correction!r} needs a `prompt_id` column linking each prompt's "
                         "responses across the background pairs")
    df = ps.to_frame()
    models = df["model"].fillna(UNKNOWN_MODEL).astype(str) if "model" in df else None
    out: list[GroupResult] = []
    omnibus: dict[str, OmnibusInfo] = {}
    for model in sorted({r.model for r in results}):
        fam = [r for r in results if r.model == model]
        sub = df if models is None else df[(models == model).to_numpy()]
        backgrounds = sorted({b for r in fam for b in (r.background_a, r.background_b)})
        if st.order is not None:
            backgrounds = [b for b in st.order if b in backgrounds]
        y = prompt_scores(sub, backgrounds, model, st.correction)
        idx = {b: i for i, b in enumerate(backgrounds)}
        pairs = [(idx[r.background_a], idx[r.background_b]) for r in fam]
        res = westfall_young(y, pairs=pairs, alternative=st.alternative, n_resamples=st.n_resamples, rng=gen,
                             procedure=_PROCEDURE[st.correction])
        for r, raw, adj in zip(fam, res.raw_pvalues, res.adjusted_pvalues):
            out.append(replace(r, pvalue=float(raw), pvalue_adjusted=float(adj), reject=bool(adj <= st.alpha)))
        omnibus[model] = OmnibusInfo(pvalue=float(res.pvalue), statistic=float(res.statistic), method=res.method,
                                     n_prompts=int(res.n), k=int(res.k), n_resamples=res.n_resamples,
                                     null_hypothesis=res.null_hypothesis, reject=bool(res.pvalue <= st.alpha))
    return out, omnibus
