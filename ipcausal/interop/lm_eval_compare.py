"""Two models' lm-eval ``--log_samples`` compared document by document: :func:`compare_lm_eval`.

lm-eval's own comparison treats the two models' scores as independent samples, although both
answered the same documents.  Here the documents are matched on ``doc_id`` within each task
(and filter), and for every per-document metric the **paired** differences
d_k = metric_B(doc k) − metric_A(doc k) are tested with the exact sign-flip permutation test
(:func:`ipcausal.permutation_test`; H0: each d_k is as likely positive as negative, the unit of
randomisation is the document).  For a 0/1 metric (``acc``, ``exact_match`` …) this **is** the
exact McNemar test: the documents where both models agree have d = 0 and drop out, and under
H0 each discordant document favours B with probability 1/2, so p is the two-sided binomial
test of b (documents only B got right) among b + c discordant ones.  The interval for
mean(d) — the difference in accuracy — is the inversion of that test.  The p-values are then
adjusted over every (task, filter, metric) tested (Holm by default), so "B is better on task
T" is a family-wise statement.

Documents present in one file only, or whose ``doc_hash`` differs between the two files (the
same id, another document), are named; they raise unless ``allow_missing=True``, and then they
are left out *and listed* in the result and in every row's ``n_missing``/``n_mismatched``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ipcausal._jsonl import iter_objects
from ipcausal.interop._paired import (CompareResult, adjust_rows, check_options, input_files, paired_row, shown,
                                     write_table)

__all__ = ["compare_lm_eval", "CompareResult", "read_samples", "task_of", "write_table"]

_NULL = ("H0: for each document, the difference metric(B) − metric(A) is as likely positive as negative "
         "(paired sign-flip; for 0/1 metrics the exact McNemar test on the discordant documents)")
_SKIP_KEYS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics", "doc_hash",
              "prompt_hash", "target_hash"}


def task_of(path: Path) -> str:
    """The task name in ``samples_TASK_DATE.jsonl`` (lm-eval's name for a samples file)."""
    stem = path.stem
    if stem.startswith("samples_") and stem.count("_") >= 2:
        return stem[len("samples_"):].rsplit("_", 1)[0]
    return stem


def _files(value: Any, name: str) -> list[Path]:
    return input_files(value, name, what="a samples file", find=lambda p: p.rglob("samples_*.jsonl"),
                       none_found="samples_*.jsonl")


def read_samples(paths: Any, name: str = "samples") -> dict[tuple[str, str], dict[Any, dict[str, Any]]]:
    """``{(task, filter): {doc_id: row}}`` from lm-eval samples files; a doc id twice raises."""
    out: dict[tuple[str, str], dict[Any, dict[str, Any]]] = {}
    for p in _files(paths, name):
        task = task_of(p)
        for lineno, row in iter_objects(p, "one lm-eval sample per line (from --log_samples)"):
            if "doc_id" not in row:
                raise ValueError(f"`{name}`: {p.name}:{lineno} has no `doc_id`; is it an lm-eval samples file?")
            key = (task, str(row.get("filter", "none")))
            docs = out.setdefault(key, {})
            if row["doc_id"] in docs:
                raise ValueError(f"`{name}`: doc_id {row['doc_id']!r} of task {task!r} (filter {key[1]!r}) appears "
                                 f"twice ({p.name}:{lineno}); give each task's samples once")
            docs[row["doc_id"]] = row
    return out


def _metric_names(rows: list[dict[str, Any]]) -> list[str]:
    names: list[str] = []
    for r in rows:
        listed = r.get("metrics")
        cand = listed if isinstance(listed, list) else [k for k in r if k not in _SKIP_KEYS]
        for m in cand:
            if isinstance(m, str) and m not in names:
                names.append(m)
    return names


def _number(v: Any) -> float | None:
    if isinstance(v, bool):
        return float(v)
    if isinstance(v, (int, float)) and math.isfinite(float(v)):
        return float(v)
    return None


def compare_lm_eval(a: Any, b: Any, *, correction: str = "holm", alpha: float = 0.05,
                    confidence_level: float = 0.95, metrics: Sequence[str] | None = None,
                    allow_missing: bool = False, method: str = "auto", n_resamples: int = 100_000,
                    rng: int | np.random.Generator | None = 0) -> CompareResult:
    """Compare model B with model A on the same lm-eval tasks, paired by document.

    Parameters
    ----------
    a, b : path or sequence of paths
        Model A's and model B's ``samples_TASK_*.jsonl`` (from ``lm_eval --log_samples``), or
        the ``--output_path`` folders holding them.  Tasks are read from the file names.
    correction : str
        Adjustment of the p-values over every (task, filter, metric) compared
        (:data:`ipcausal.stats.multitest.CORRECTIONS`; ``"holm"`` by default).
    alpha : float
        Level of ``reject`` (on the adjusted p).
    confidence_level : float
        Level of the interval for mean(B − A).
    metrics : sequence of str, optional
        Only these metrics (default: every per-document metric the rows list).
    allow_missing : bool
        Documents in one file only, or with different ``doc_hash``, raise ``ValueError`` naming
        them; with ``True`` they are left out and listed in ``missing``.
    method, n_resamples, rng
        The sign-flip test's route (:func:`ipcausal.permutation_test`); exact for 0/1 metrics
        and whenever feasible, Monte Carlo (seeded by ``rng``) otherwise.

    Returns
    -------
    CompareResult

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> tmp = pathlib.Path(tempfile.mkdtemp())
    >>> def write(name, acc):
    ...     with open(tmp / name, "w") as fh:
    ...         for k, v in enumerate(acc):
    ...             fh.write(json.dumps({"doc_id": k, "doc": {"q": k}, "metrics": ["acc"], "acc": v}) + "\\n")
    ...     return tmp / name
    >>> a = write("samples_quiz_2026-01-01T00-00-00.jsonl", [0] * 12 + [1] * 8)
    >>> b = write("samples_quiz_2026-01-02T00-00-00.jsonl", [1] * 11 + [0] * 1 + [1] * 8)
    >>> row = compare_lm_eval(a, b).rows[0]
    >>> row["task"], row["b_better"], row["a_better"], row["method"], round(row["pvalue"], 5)
    ('quiz', 11, 0, 'exact-mcnemar', 0.00098)
    """
    correction, alpha, level = check_options(correction, alpha, confidence_level, allow_missing, metrics, "metrics",
                                             "metric")
    sa, sb = read_samples(a, "a"), read_samples(b, "b")
    only = sorted(set(sa) ^ set(sb))
    if only:
        where = ["A" if k in sa else "B" for k in only]
        raise ValueError("tasks must be the same in both: " + "; ".join(f"{t} (filter {f}) only in {w}"
                                                                     for (t, f), w in zip(only, where)))
    rows: list[dict[str, Any]] = []
    missing: dict[str, dict[str, list[Any]]] = {}
    skipped: list[str] = []
    problems: list[str] = []
    for key in sorted(sa):
        task, filt = key
        da, db = sa[key], sb[key]
        only_a = sorted(set(da) - set(db), key=str)
        only_b = sorted(set(db) - set(da), key=str)
        both = sorted(set(da) & set(db), key=str)
        mism = [d for d in both if da[d].get("doc_hash") and db[d].get("doc_hash")
                and da[d]["doc_hash"] != db[d]["doc_hash"]]
        label = task if filt == "none" else f"{task}/{filt}"
        if only_a or only_b or mism:
            missing[label] = {"only_a": only_a, "only_b": only_b, "mismatched": mism}
            parts = [f"doc_id {shown(ids)} {what}" for ids, what in
                     ((only_a, "only in A"), (only_b, "only in B"), (mism, "differ (doc_hash)")) if ids]
            problems.append(f"{label}: " + "; ".join(parts))
        docs = [d for d in both if d not in set(mism)]
        names = _metric_names([da[d] for d in docs] + [db[d] for d in docs])
        if metrics is not None:
            names = [m for m in metrics if m in names]
        for m in names:
            va = [_number(da[d].get(m)) for d in docs]
            vb = [_number(db[d].get(m)) for d in docs]
            if any(v is None for v in va + vb):
                skipped.append(f"{label}/{m}: not one finite number per document")
                continue
            xa, xb = np.asarray(va), np.asarray(vb)
            if xa.size < 2:
                skipped.append(f"{label}/{m}: fewer than 2 documents in both")
                continue
            rows.append({"task": task, "filter": filt, "metric": m,
                         **paired_row(xa, xb, method=method, n_resamples=n_resamples, rng=rng, level=level),
                         "n_missing": len(only_a) + len(only_b), "n_mismatched": len(mism)})
    if problems and not allow_missing:
        raise ValueError("documents do not match: " + " | ".join(problems) + "; pass `allow_missing` "
                         "(--allow-missing) to leave them out (they are then listed)")
    if metrics is not None:
        found = {r["metric"] for r in rows} | {s.split(": ")[0].rsplit("/", 1)[-1] for s in skipped}
        absent = [m for m in metrics if m not in found]
        if absent:
            raise ValueError(f"`metrics`: {absent} not found in the samples")
    if not rows:
        raise ValueError("no metric could be compared: " + ("; ".join(skipped) or "no documents in common"))
    adjust_rows(rows, correction, alpha)
    return CompareResult(tuple(rows), missing, tuple(skipped), alpha, correction, level, _NULL,
                         tuple(str(p) for p in _files(a, "a")), tuple(str(p) for p in _files(b, "b")))

