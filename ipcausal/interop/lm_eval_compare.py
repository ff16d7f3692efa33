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

import json
import math
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from ipcausal._jsonl import iter_objects
from ipcausal._validate import choice, open_unit
from ipcausal.stats.multitest import CORRECTIONS, adjust_pvalues
from ipcausal.stats.permutation import permutation_test
from ipcausal.stats.results import Result

__all__ = ["compare_lm_eval", "CompareResult", "read_samples", "task_of"]

_NULL = ("H0: for each document, the difference metric(B) − metric(A) is as likely positive as negative "
         "(paired sign-flip; for 0/1 metrics the exact McNemar test on the discordant documents)")
_SKIP_KEYS = {"doc_id", "doc", "target", "arguments", "resps", "filtered_resps", "filter", "metrics", "doc_hash",
              "prompt_hash", "target_hash"}


@dataclass(frozen=True)
class CompareResult(Result):
    """What :func:`compare_lm_eval` returns.

    Attributes
    ----------
    rows : tuple of dict
        One per (task, filter, metric): ``task``, ``filter``, ``metric``, ``n`` (documents
        compared), ``mean_a``, ``mean_b``, ``statistic`` (mean of B − A), ``ci_low``,
        ``ci_high``, ``confidence_level``, ``pvalue``, ``pvalue_adjusted``, ``reject``,
        ``method`` (``"exact-mcnemar"`` for 0/1 metrics, else the sign-flip route),
        ``b_better``/``a_better`` (documents where B, resp. A, scored higher),
        ``n_missing``/``n_mismatched`` (documents left out, named in ``missing``).
    missing : dict
        Per task (and filter): ``only_a``, ``only_b`` (doc ids in one file only) and
        ``mismatched`` (same doc id, different ``doc_hash``).
    skipped : tuple of str
        ``"task/filter/metric: why"`` for metrics that are not one number per document
        (corpus-level metrics such as ``bleu`` keep tuples there).
    alpha, correction, confidence_level, null_hypothesis, files_a, files_b
    """

    rows: tuple[dict[str, Any], ...]
    missing: dict[str, dict[str, list[Any]]]
    skipped: tuple[str, ...]
    alpha: float
    correction: str
    confidence_level: float
    null_hypothesis: str
    files_a: tuple[str, ...]
    files_b: tuple[str, ...]

    def to_frame(self) -> Any:
        """The rows as a pandas DataFrame (the table ``ipcausal compare lm-eval -o`` writes)."""
        import pandas as pd

        return pd.DataFrame(list(self.rows))


def task_of(path: Path) -> str:
    """The task name in ``samples_TASK_DATE.jsonl`` (lm-eval's name for a samples file)."""
    stem = path.stem
    if stem.startswith("samples_") and stem.count("_") >= 2:
        return stem[len("samples_"):].rsplit("_", 1)[0]
    return stem


def _files(value: Any, name: str) -> list[Path]:
    items = [value] if isinstance(value, (str, os.PathLike)) else list(value) if isinstance(value, Sequence) else None
    if not items or not all(isinstance(p, (str, os.PathLike)) for p in items):
        raise TypeError(f"`{name}` must be a samples file, a folder of them, or a non-empty sequence of those")
    out: list[Path] = []
    for p in map(Path, items):
        if p.is_dir():
            found = sorted(p.rglob("samples_*.jsonl"))
            if not found:
                raise ValueError(f"`{name}`: no samples_*.jsonl under {p}")
            out.extend(found)
        elif p.is_file():
            out.append(p)
        else:
            raise ValueError(f"`{name}`: no such file or folder: {p}")
    return out


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


def _shown(ids: list[Any]) -> str:
    return ", ".join(repr(i) for i in ids[:10]) + (f" and {len(ids) - 10} more" if len(ids) > 10 else "")


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
    correction = choice(correction, "correction", CORRECTIONS)
    alpha = open_unit(alpha, "alpha")
    level = open_unit(confidence_level, "confidence_level")
    if not isinstance(allow_missing, bool):
        raise TypeError(f"`allow_missing` must be True or False, got {allow_missing!r}")
    if metrics is not None and (isinstance(metrics, str) or not all(isinstance(m, str) and m for m in metrics)):
        raise TypeError("`metrics` must be a sequence of metric names or None")
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
            parts = [f"doc_id {_shown(ids)} {what}" for ids, what in
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
            d = xb - xa
            if d.size < 2:
                skipped.append(f"{label}/{m}: fewer than 2 documents in both")
                continue
            binary = bool(np.isin(np.concatenate([xa, xb]), (0.0, 1.0)).all())
            res = permutation_test(d, method=method, n_resamples=n_resamples, rng=rng, confidence_level=level)
            rows.append({"task": task, "filter": filt, "metric": m, "n": int(d.size), "mean_a": float(xa.mean()),
                         "mean_b": float(xb.mean()), "statistic": float(d.mean()), "ci_low": float(res.ci_low),
                         "ci_high": float(res.ci_high), "confidence_level": level, "pvalue": float(res.pvalue),
                         "method": "exact-mcnemar" if binary and res.method.startswith("exact") else res.method,
                         "b_better": int((d > 0).sum()), "a_better": int((d < 0).sum()),
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
    adj = adjust_pvalues([r["pvalue"] for r in rows], correction, axis=None)
    for r, p in zip(rows, adj):
        r["pvalue_adjusted"] = float(p)
        r["reject"] = bool(p <= alpha)
    return CompareResult(tuple(rows), missing, tuple(skipped), alpha, correction, level, _NULL,
                         tuple(str(p) for p in _files(a, "a")), tuple(str(p) for p in _files(b, "b")))


def write_table(result: CompareResult, out: str | os.PathLike[str]) -> Path:
    """The rows as CSV (``.csv``) or JSON Lines (``.jsonl``)."""
    p = Path(out)
    if p.suffix.lower() == ".csv":
        result.to_frame().to_csv(p, index=False)
    elif p.suffix.lower() in (".jsonl", ".ndjson"):
        p.write_text("".join(json.dumps(r) + "\n" for r in result.rows), encoding="utf-8")
    else:
        raise ValueError(f"`out` must end in .csv or .jsonl, got {p.name!r}")
    return p
