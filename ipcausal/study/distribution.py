"""``ipcausal.distribution_test(pairs, similarity=...)``: the free-text test of Definition 1.

IP means P(Y | do(b_i)) ≠ P(Y | do(b_j)).  With r ≥ 2 sampled responses per side of each pair
(``ipcausal run --n r`` keeps them in ``samples_i``/``samples_j``) and any similarity kernel
s(·, ·), a pair's statistic is the mean within-side similarity minus the mean cross-side
similarity (an MMD² estimate).  H0 in words: *within each pair the 2r responses are exchangeable
across the two sides* — the background does not change the distribution of the answer.  The unit
of randomisation is the pair's response set: each pair's 2r responses are split into two sides of
r at random, independently over pairs (:func:`ipcausal.stats.mmd_permutation_test`).  No threshold m0.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

from ipcausal._validate import as_generator, choice, open_unit, positive_int
from ipcausal.stats.distribution import mmd_permutation_test, similarity_matrices
from ipcausal.stats.multitest import CORRECTIONS
from ipcausal.stats.null import sample_summary
from ipcausal.study.groups import UNKNOWN_MODEL
from ipcausal.study.results import GroupResult, Report
from ipcausal.study.inputs import as_pairset
from ipcausal.study.test import DEFAULTS, MonteCarloResolutionWarning, Settings, correct

__all__ = ["distribution_test", "SIMILARITY_NAMES"]

SIMILARITY_NAMES = ("embedding", "judge")


def _kernel(similarity: Any, backend: Any) -> tuple[Callable[[Any, Any], float], str]:
    """A pairwise ``(a, b) -> float`` similarity and its description."""
    if callable(similarity) and not isinstance(similarity, str):
        name = getattr(similarity, "name", getattr(similarity, "__name__", "user similarity"))
        if hasattr(similarity, "encode") or type(similarity).__name__ == "EmbeddingSimilarity":
            emb = similarity
            return (lambda a, b: float(emb([a], [b])[0])), f"embedding similarity ({name})"
        return similarity, str(name)
    name = choice(similarity, "similarity", SIMILARITY_NAMES)
    if name == "embedding":
        from ipcausal.scoring import EmbeddingSimilarity

        emb = EmbeddingSimilarity()
        return (lambda a, b: float(emb([a], [b])[0])), f"embedding similarity (1 + cos)/2, {emb.name}"
    if backend is None:
        raise ValueError("`similarity`='judge' needs `backend` (the LLM judge)")
    from ipcausal.scoring import JudgeSimilarity

    judge = JudgeSimilarity(backend)

    def rate(a: Any, b: Any) -> float:
        out = judge.judge(None, a, b)
        if out.value is None:
            raise ValueError(f"the judge gave no rating for a response pair ({out.status})")
        return float(out.value)

    return rate, f"{judge.name}: rating 1-5 -> (r-1)/4"


def _samples(df: Any, side: str) -> list[list[Any]]:
    col = f"samples_{side}"
    out = []
    for pos, v in enumerate(df[col].tolist()):
        if isinstance(v, np.ndarray):
            v = v.tolist()
        if not isinstance(v, (list, tuple)) or any(x is None for x in v):
            raise ValueError(f"`pairs`: `{col}` must hold a list of response texts per pair; row {pos} has {v!r}")
        out.append(list(v))
    return out


def distribution_test(
    pairs: Any,
    *,
    similarity: Any,
    alpha: float = DEFAULTS["alpha"],
    correction: str = DEFAULTS["correction"],
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    backend: Any = None,
) -> Report:
    """Test every background pair for a change in the response *distribution* (Definition 1).

    Parameters
    ----------
    pairs : PairSet, pandas.DataFrame or path
        Answered pairs with ``samples_i``/``samples_j``: the same r ≥ 2 responses per side.
    similarity : callable or {"embedding", "judge"}
        ``(a, b) -> float`` in [0, 1] (symmetric), or a scorer name; each unordered pair of
        responses is scored once.
    alpha, correction
        Level and the correction across a model's background pairs (as :func:`ipcausal.test`).
    n_resamples : int, optional
        Monte Carlo splits L (default 100,000; exact enumeration when small).
    rng : int, numpy.random.Generator or None
    backend : Backend, optional
        The LLM judge for ``similarity="judge"``.

    Returns
    -------
    Report
        ``outcome="distribution"``; per group the statistic (mean within − cross similarity),
        the one-sided p, the adjusted p and the verdict.

    Examples
    --------
    >>> import ipcausal
    >>> rows = [{"pair_id": k, "background_i": "us", "background_j": "uk", "x_i": "q", "x_j": "q",
    ...          "samples_i": ["yes", "yes", "yes"], "samples_j": ["no", "no", "yes"]} for k in range(12)]
    >>> rep = ipcausal.distribution_test(ipcausal.PairSet.from_records(rows),
    ...                                  similarity=lambda a, b: float(a == b), rng=0)
    >>> rep.outcome, rep.ip_detected
    ('distribution', True)
    """
    ps = as_pairset(pairs)
    if len(ps) == 0:
        raise ValueError("`pairs` is empty")
    for col in ("samples_i", "samples_j"):
        if col not in ps:
            raise ValueError(f"`pairs` has no `{col}` column: run the model with r >= 2 samples per prompt "
                             "(`ipcausal run --n 5`)")
    alpha = open_unit(alpha, "alpha")
    correction = choice(correction, "correction", CORRECTIONS)
    n_resamples = DEFAULTS["n_resamples"] if n_resamples is None else positive_int(n_resamples, "n_resamples")
    fn, desc = _kernel(similarity, backend)
    gen = as_generator(rng)
    df = ps.to_frame()
    si, sj = _samples(df, "i"), _samples(df, "j")
    models = (df["model"].fillna(UNKNOWN_MODEL).astype(str).to_numpy(object) if "model" in df
              else np.full(len(df), UNKNOWN_MODEL, dtype=object))
    keys = [(m, tuple(sorted((str(a), str(b))))) for m, a, b in zip(models, df["background_i"], df["background_j"])]
    results = []
    for key in sorted(set(keys)):
        idx = [pos for pos, k in enumerate(keys) if k == key]
        mats = similarity_matrices([si[p] for p in idx], [sj[p] for p in idx], fn)
        res = mmd_permutation_test(mats, n_resamples=n_resamples, rng=gen)
        a, b = key[1]
        stats = np.asarray(res.pair_statistics, dtype=np.float64)
        results.append(GroupResult(
            model=key[0], group=f"{a} vs {b}", background_a=a, background_b=b, outcome="distribution",
            test="distribution", n=int(res.n), statistic=float(res.statistic), effect=float(res.statistic),
            ci_low=float("nan"), ci_high=float("nan"), pvalue=float(res.pvalue), pvalue_adjusted=float(res.pvalue),
            reject=False, detail=res, data=sample_summary(stats, label="per-pair within − cross similarity"),
            null=None, observed=float(res.statistic)))
    st = Settings("distribution", alpha, correction, 0.0, "auto", n_resamples, False, "greater")
    corrected, warn = correct(results, st)
    for w in warn:
        warnings.warn(w, MonteCarloResolutionWarning, stacklevel=2)
    null = results[0].detail.null_hypothesis if results else ""
    return Report(groups=tuple(corrected), outcome="distribution", alpha=alpha, correction=correction,
                  method="permutation of side labels", m0=None, paper_compat=False, null_hypothesis=null,
                  direction=f"effect = mean within-side − cross-side similarity ({desc}); > 0 means the sides differ",
                  warnings=tuple(warn))


distribution_test.__test__ = False  # type: ignore[attr-defined]
