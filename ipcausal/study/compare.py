"""``ipcausal.compare(a, b)``: is the effect of run a different from that of run b, pair by pair? (SPEC §10)

Two scored runs on the same pairs — two models, or one model without and with a mitigation —
give per pair k two effects Δ_k^a and Δ_k^b.  Their difference D_k = Δ_k^a − Δ_k^b is tested
per background pair by paired sign flips: under H0 "the two runs' effects are exchangeable per
pair" each D_k keeps or flips its sign with probability 1/2 (whole clusters with ``cluster``).
That is the two-model form of the within-pair model relabeling of
:func:`ipcausal.stats.models.compare_models`.

How: :func:`differences` builds one derived PairSet, row k holding
``score_i = y_i^a − y_i^b`` and ``score_j = y_j^a − y_j^b`` (so its Δ is D_k, integer scores stay
integer and the exact lattice route applies), and :func:`compare` hands it to the public
:func:`ipcausal.test` with the same options, so every option of ``test`` (correction, clusters,
equivalence margin, Westfall–Young across background pairs) means the same here.  The derived
pairs' model is ``"<a> − <b>"``.  Repeated samples enter through their per-pair mean
(``score_i``/``score_j``).
"""

from __future__ import annotations

import warnings
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from ipcausal.pairs import PairSet
from ipcausal._validate import as_generator, choice
from ipcausal.study.inputs import as_pairset
from ipcausal.study.results import Report
from ipcausal.study.test import test

__all__ = ["compare", "compare_runs", "differences", "MISMATCH", "PairMismatchWarning"]

MISMATCH = ("error", "intersect")


class PairMismatchWarning(UserWarning):
    """``compare(..., on_mismatch="intersect")`` dropped pairs that only one run has."""


def _label(ps: PairSet, given: str | None, default: str) -> str:
    if given is not None:
        return given
    if "model" in ps:
        names = ps["model"].dropna().astype(str).unique()
        if len(names) == 1:
            return str(names[0])
    return default


def _labels(labels: Any, a: PairSet, b: PairSet) -> tuple[str, str]:
    if labels is None:
        la, lb = _label(a, None, "a"), _label(b, None, "b")
        return (la, lb) if la != lb else ("a", "b")
    if isinstance(labels, (str, bytes)) or not hasattr(labels, "__len__") or len(labels) != 2:
        raise TypeError("`labels` must be two names, (name of a, name of b)")
    la, lb = str(labels[0]), str(labels[1])
    if la == lb:
        raise ValueError(f"`labels` must differ, got {labels!r}")
    return la, lb


def _ids(ids: list[str], limit: int = 5) -> str:
    return ", ".join(ids[:limit]) + (f" … ({len(ids)} in all)" if len(ids) > limit else "")


def differences(a: Any, b: Any, *, labels: Any = None, on_mismatch: str = "error") -> PairSet:
    """The derived PairSet whose Δ per pair is D = Δ^a − Δ^b (the input of :func:`compare`).

    Row k keeps a's pair id, backgrounds, prompts and id columns (``prompt_id``, a cluster
    column …), with ``score_i = score_i^a − score_i^b``, ``score_j = score_j^a − score_j^b`` and
    ``model = "<a> − <b>"``.  Pairs that b stores the other way round (background_i and
    background_j swapped) are turned round first.

    Parameters
    ----------
    a, b : PairSet, pandas.DataFrame or path
        Two scored runs (``score_i``/``score_j``) of the same pairs (``pair_id``).
    labels : (str, str), optional
        Names of the two runs (default: each run's single ``model``, else ``"a"``/``"b"``).
    on_mismatch : {"error", "intersect"}
        What to do when the pair ids differ: raise ``ValueError`` naming some of them, or keep the
        pairs both runs have (with a :class:`PairMismatchWarning`).

    Returns
    -------
    PairSet

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.study.compare import differences
    >>> rec = lambda k, s: {"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": "q",
    ...                     "x_j": "q'", "score_i": 3, "score_j": 3 + s}
    >>> a = ipcausal.PairSet.from_records(rec(k, 1) for k in range(3))
    >>> b = ipcausal.PairSet.from_records(rec(k, 0) for k in range(3))
    >>> d = differences(a, b, labels=("A", "B"))
    >>> d.deltas.tolist(), d["model"].iloc[0]
    ([1.0, 1.0, 1.0], 'A − B')
    """
    a, b = as_pairset(a, name="a"), as_pairset(b, name="b")
    on_mismatch = choice(on_mismatch, "on_mismatch", MISMATCH)
    for name, ps in (("a", a), ("b", b)):
        if "score_i" not in ps:
            raise ValueError(f"`{name}` has no `score_i`/`score_j` columns: compare needs two scored runs with an "
                             "interval outcome (`ipcausal score` adds them)")
    la, lb = _labels(labels, a, b)
    fa, fb = a.to_frame(), b.to_frame()
    ids_a, ids_b = fa["pair_id"].astype(str), fb["pair_id"].astype(str)
    only_a = sorted(set(ids_a) - set(ids_b))
    only_b = sorted(set(ids_b) - set(ids_a))
    if only_a or only_b:
        what = "; ".join(s for s in (f"only in `a`: {_ids(only_a)}" if only_a else "",
                                     f"only in `b`: {_ids(only_b)}" if only_b else "") if s)
        if on_mismatch == "error":
            raise ValueError(f"`a` and `b` must hold the same pair ids ({what}); pass on_mismatch='intersect' to "
                             "compare the pairs both have")
        warnings.warn(f"compare: {len(only_a) + len(only_b)} pairs dropped ({what})", PairMismatchWarning,
                      stacklevel=3)
        fa = fa[ids_a.isin(set(ids_b)).to_numpy()]
        if fa.empty:
            raise ValueError("`a` and `b` share no pair id")
    fb = fb.set_index(fb["pair_id"].astype(str)).loc[fa["pair_id"].astype(str)]
    bi_a, bj_a = fa["background_i"].to_numpy(object), fa["background_j"].to_numpy(object)
    bi_b, bj_b = fb["background_i"].to_numpy(object), fb["background_j"].to_numpy(object)
    same = (bi_a == bi_b) & (bj_a == bj_b)
    swapped = (bi_a == bj_b) & (bj_a == bi_b)
    bad = ~(same | swapped)
    if bad.any():
        ids = fa["pair_id"].astype(str).to_numpy()[bad].tolist()
        raise ValueError(f"`a` and `b` pair different backgrounds under the same pair id: {_ids(ids)}")
    si_b, sj_b = fb["score_i"].to_numpy(np.float64), fb["score_j"].to_numpy(np.float64)
    si_b, sj_b = np.where(swapped, sj_b, si_b), np.where(swapped, si_b, sj_b)
    drop = {"y_i", "y_j", "model", "score_i", "score_j", "scores_i", "scores_j", "similarity"}
    out = fa[[c for c in fa.columns if c not in drop]].copy()  # a's pairs, prompts and id columns
    if "bound" in out.columns:  # |Δ_a − Δ_b| ≤ the two runs' bounds added
        out["bound"] = out["bound"].to_numpy(np.float64) + (fb["bound"].to_numpy(np.float64) if "bound" in fb.columns
                                                            else np.nan)
    out["score_i"] = fa["score_i"].to_numpy(np.float64) - si_b
    out["score_j"] = fa["score_j"].to_numpy(np.float64) - sj_b
    out["model"] = f"{la} − {lb}"
    return PairSet.from_frame(out.reset_index(drop=True))


#: The keywords compare() took before 0.2 (deprecated: ``options``, ``cluster``, ``rng``).
TEST_OPTIONS = ("alpha", "correction", "method", "n_resamples", "rng", "alternative", "cluster", "design", "margin")


def compare(a: Any, b: Any, *, labels: Any = None, on_mismatch: str = "error", options: Any = None,
            cluster: str | None = None, rng: int | np.random.Generator | None = None, **test_options: Any) -> Report:
    """Compare two scored runs on the same pairs: per background pair, test D = Δ^a − Δ^b.

    H0 per background pair: the two runs' effects are exchangeable per pair (each D_k keeps or
    flips its sign with probability 1/2); the unit of randomisation is the pair, or the cluster
    with ``cluster``.  Two models, or one model without and with a mitigation: "the mitigation
    removed IP" is a question for ``ipcausal.test`` of the mitigated run with a ``margin``;
    "the mitigation changed the effect" is this test.

    Parameters
    ----------
    a, b : PairSet, pandas.DataFrame or path
        Two scored runs (``score_i``/``score_j``) holding the same ``pair_id`` values.
    labels : (str, str), optional
        Names of the runs (default: each run's single ``model``, else ``"a"``/``"b"``).
    on_mismatch : {"error", "intersect"}
        Pair ids in one run only: an error naming some of them, or compare the common pairs.
    options : TestOptions, optional
        The options of :func:`ipcausal.test` applied to D (:class:`~ipcausal.study.options.TestOptions`:
        ``alpha``, ``correction``, ``method``, ``n_resamples``, ``alternative``, ``margin``, ``design``),
        with ``ipcausal.test``'s defaults: the correction runs over the background pairs, ``margin``
        asks whether |mean D| < ε is shown (the runs are equivalent).
    cluster : str, optional
        A column of ``a`` naming each pair's cluster (whole clusters are flipped).
    rng : int, numpy.random.Generator or None
        Randomness of the test.
    **test_options
        Deprecated (until 0.3): the options as keywords (:data:`TEST_OPTIONS`); pass ``options``.

    Returns
    -------
    Report
        One group per background pair; its ``effect`` is mean D with its interval, its model is
        ``"<a> − <b>"``.

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.study.compare import compare
    >>> rec = lambda k, s, m: {"pair_id": k, "background_i": "SAE", "background_j": "AAE", "x_i": "q",
    ...                        "x_j": "q'", "score_i": 4, "score_j": 4 - s * (k % 3 == 0), "model": m}
    >>> a = ipcausal.PairSet.from_records(rec(k, 2, "big") for k in range(30))
    >>> b = ipcausal.PairSet.from_records(rec(k, 0, "small") for k in range(30))
    >>> r = compare(a, b, options=ipcausal.TestOptions(method="exact"))
    >>> g = r.groups[0]
    >>> g.model, round(g.effect, 4), g.reject
    ('big − small', -0.6667, True)
    """
    from ipcausal.study.options import Design, TestOptions, given

    if test_options:  # the keywords of 0.1, read until 0.3
        unknown = sorted(set(test_options) - set(TEST_OPTIONS))
        if unknown:
            raise TypeError(f"compare() got unexpected option(s) {', '.join(map(repr, unknown))}; the test options "
                            f"are {', '.join(TEST_OPTIONS)}")
        if options is not None:
            raise TypeError("compare(): give the test options as `options` (a TestOptions) only")
        warnings.warn(f"compare(a, b, {', '.join(f'{k}=' for k in test_options)}) is deprecated and goes in 0.3; "
                      "pass options=TestOptions(...) (and cluster=, rng=)", DeprecationWarning, stacklevel=2)
        kw = dict(test_options)
        cluster, rng = kw.pop("cluster", cluster), kw.pop("rng", rng)
        options = TestOptions(**kw)
    options = given(options, TestOptions, "options")
    a, b = as_pairset(a, name="a"), as_pairset(b, name="b")
    la, lb = _labels(labels, a, b)
    d = differences(a, b, labels=(la, lb), on_mismatch=on_mismatch)
    opts = options.kwargs()
    opts["design"] = replace(given(opts.get("design"), Design, "design"), outcome="interval")
    report = test(d, rng=rng, cluster=cluster, **opts)
    direction = (f"D = Δ({la}) − Δ({lb}) per pair, each Δ = score(background_b) − score(background_a); "
                 "effect = mean(D)")
    return replace(report, direction=direction)


def _oriented_deltas(ps: PairSet, name: str, cluster: str | None) -> pd.DataFrame:
    if "score_i" not in ps:
        raise ValueError(f"`runs`: run {name!r} has no `score_i`/`score_j` columns (an interval outcome is needed)")
    if cluster is not None and cluster not in ps:
        raise ValueError(f"`cluster`: run {name!r} has no column {cluster!r}")
    f = ps.to_frame()
    bi, bj = f["background_i"].astype(str).to_numpy(object), f["background_j"].astype(str).to_numpy(object)
    forward = bi < bj
    lo, hi = np.where(forward, bi, bj), np.where(forward, bj, bi)
    return pd.DataFrame({"pair_id": f["pair_id"].astype(str).to_numpy(), "lo": lo, "hi": hi, "forward": forward,
                         "delta": np.where(forward, 1.0, -1.0) * ps.deltas,
                         "cluster": f[cluster].astype(str).to_numpy() if cluster is not None else None})


def compare_runs(
    runs: Any,
    *,
    cluster: str | None = None,
    order: Any = None,
    alternative: str = "two-sided",
    method: str = "auto",
    n_resamples: int | None = None,
    rng: int | np.random.Generator | None = None,
    procedure: str = "step-down",
    confidence_level: float = 0.95,
    ranks: bool = False,
) -> dict[str, Any]:
    """Compare m ≥ 2 scored runs of one case per background pair, on the pairs every run answered.

    For each unordered background pair (a, b), oriented as :func:`ipcausal.test` orients it (by
    ``order``, else the direction most pairs are stored in, ties alphabetical), the Δ of every
    run on the pair ids that all runs hold form an (n × m) table, tested by
    :func:`ipcausal.stats.models.compare_models`: the models' labels permuted within each pair
    (whole clusters with ``cluster``), Westfall–Young over the model pairs, each difference with
    its paired sign-flip test and interval.

    Parameters
    ----------
    runs : mapping of str to PairSet (or DataFrame, or path)
        The runs by name (the models), each scored with ``score_i``/``score_j``; the same case's
        pairs under the same ``pair_id`` values.
    cluster : str, optional
        A column (of every run) naming each pair's cluster; a cluster is relabelled whole.
    order : list of str, optional
        The backgrounds in order: each group is oriented earlier → later.
    alternative, method, n_resamples, rng, procedure, confidence_level
        As in :func:`ipcausal.stats.models.compare_models`.
    ranks : bool
        Also each result's ``ranks``: the simultaneous rank sets of the runs by |mean Δ| and their
        tie groups (:func:`ipcausal.stats.ranks.rank_sets` at ``confidence_level``, on the same
        pairs and clusters, its sign vectors seeded by :data:`~ipcausal.stats.ranks.RANK_SEED`, so the
        comparisons' own draws are unchanged).

    Returns
    -------
    dict
        ``"<a> vs <b>"`` → :class:`~ipcausal.stats.models.ModelComparisonResult`, in group order.

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.study.compare import compare_runs
    >>> rec = lambda k, s: {"pair_id": k, "background_i": "US", "background_j": "UK", "x_i": "q",
    ...                     "x_j": "q'", "score_i": 3, "score_j": 3 + s * (k % 2)}
    >>> runs = {m: ipcausal.PairSet.from_records(rec(k, s) for k in range(40)) for m, s in
    ...         [("A", 0), ("B", 0), ("C", 1)]}
    >>> res = compare_runs(runs, rng=0, n_resamples=9_999)["US vs UK"]
    >>> res.pairs, [round(d, 2) for d in res.differences]
    ((('A', 'B'), ('A', 'C'), ('B', 'C')), [0.0, -0.5, -0.5])
    >>> [p <= 0.05 for p in res.adjusted_pvalues]
    [False, True, True]
    """
    from ipcausal.stats.models import compare_models
    from ipcausal.study.groups import validate_order

    if not isinstance(ranks, bool):
        raise TypeError(f"`ranks` must be True or False, got {ranks!r}")
    if not hasattr(runs, "items") or isinstance(runs, (str, bytes)):
        raise TypeError("`runs` must be a mapping of run name to scored PairSet")
    items = [(str(k), as_pairset(v, name=f"runs[{k!r}]")) for k, v in runs.items()]
    if len(items) < 2:
        raise ValueError(f"`runs` needs at least 2 runs to compare, got {len(items)}")
    names = [k for k, _ in items]
    tables = [_oriented_deltas(ps, name, cluster) for name, ps in items]
    backgrounds = set().union(*(set(t["lo"]) | set(t["hi"]) for t in tables))
    rank = None if order is None else {b: i for i, b in enumerate(validate_order(order, backgrounds))}
    keys = sorted(set().union(*(set(zip(t["lo"], t["hi"])) for t in tables)))
    gen = as_generator(rng)
    out: dict[str, Any] = {}
    for lo, hi in keys:
        subs = [t[(t["lo"] == lo).to_numpy() & (t["hi"] == hi).to_numpy()].set_index("pair_id") for t in tables]
        common = sorted(set.intersection(*(set(s.index) for s in subs)))
        if len(common) < 2:
            continue  # fewer than 2 pairs answered by every run: nothing to test
        if rank is not None:
            a, b = sorted((lo, hi), key=lambda x: rank[x])
        else:
            fwd = sum(int(s["forward"].sum()) for s in subs)
            total = sum(len(s) for s in subs)
            a, b = (lo, hi) if fwd >= total - fwd else (hi, lo)
        sign = 1.0 if a == lo else -1.0
        delta = np.column_stack([sign * s.loc[common, "delta"].to_numpy(np.float64) for s in subs])
        clusters = subs[0].loc[common, "cluster"].tolist() if cluster is not None else None
        res = compare_models(delta, models=names, clusters=clusters, alternative=alternative, method=method,
                             n_resamples=n_resamples, rng=gen, procedure=procedure, confidence_level=confidence_level)
        if ranks:
            from dataclasses import replace

            from ipcausal.stats.ranks import RANK_SEED, rank_sets

            res = replace(res, ranks=rank_sets(delta, models=names, clusters=clusters,
                                               confidence_level=confidence_level, rng=RANK_SEED))
        out[f"{a} vs {b}"] = res
    if not out:
        raise ValueError("`runs` share fewer than 2 pair ids in every background pair: nothing to compare")
    return dict(sorted(out.items()))
