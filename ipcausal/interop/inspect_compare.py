"""Two models' inspect_ai eval logs compared sample by sample: :func:`compare_logs`.

inspect's scores of two models on one task are means with standard errors, read side by side
as if the samples were independent, although both models answered the same samples.  Here the
samples of the two logs are matched on ``(id, epoch)`` within each task, and for every scorer
the **paired** differences d = score_B − score_A are tested with the exact sign-flip
permutation test (:func:`ipcausal.permutation_test`).  H0 in words: *for each unit, the two
models' scores are exchangeable*, so the sum of the unit's differences is as likely positive as
negative.  The unit of randomisation is the sample id (its epochs flip together: one draw of the
two models' labels per sample), or with ``cluster`` the group of samples sharing that metadata
value (e.g. ``pair_id``: both prompts of an IP pair).  For a 0/1 scorer (``C``/``I``) with one
epoch and no cluster, this is the exact McNemar test: p is the two-sided binomial test of the
samples only B got right among the discordant ones.  The interval for mean(d) inverts the test.
The p-values are adjusted over every (task, scorer) row (Holm by default).

Samples in one log only, samples whose input or target differ between the logs (the same id,
another sample), samples that errored and scores that are missing or not a number are named;
they raise unless ``allow_missing=True``, and then they are left out *and listed*.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ipcausal.interop._paired import CompareResult, adjust_rows, check_options, input_files, paired_row, shown

__all__ = ["compare_logs", "compare_inspect", "read_logs"]

_NULL = ("H0: for each sample (its epochs together; with `cluster`, each group of samples), the scores of the "
         "two models are exchangeable: the sum of its differences score(B) − score(A) is as likely positive as "
         "negative (paired sign-flip; for a 0/1 scorer with one epoch the exact McNemar test)")
_INSTALL = "reading inspect eval logs needs inspect-ai: pip install 'ipcausal[interop]'"


def _log_files(value: Any, name: str) -> list[Path]:
    return input_files(value, name, what="an inspect eval log",
                       find=lambda p: (q for q in p.rglob("*") if q.suffix in (".eval", ".json") and q.is_file()),
                       none_found="inspect eval log (.eval or .json)")


def _model_label(log: Any) -> str:
    args = getattr(log.eval, "model_args", None) or {}
    model = str(getattr(log.eval, "model", "") or "?")
    return model + (" (" + ", ".join(f"{k}={v}" for k, v in sorted(args.items())) + ")" if args else "")


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(getattr(m, "text", m)) for m in value)
    return "" if value is None else str(value)


def read_logs(logs: Any, name: str = "logs") -> dict[str, dict[str, Any]]:
    """``{task: {"model": label, "files": [...], "samples": {(id, epoch): sample}}}`` from inspect logs.

    A task in two logs of one side is pooled when their (id, epoch) do not overlap (epochs run
    apart), and raises when they do.
    """
    try:
        from inspect_ai.log import read_eval_log
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL) from exc
    out: dict[str, dict[str, Any]] = {}
    for p in _log_files(logs, name):
        try:
            log = read_eval_log(str(p))
        except Exception as exc:  # inspect raises its own types for unreadable logs
            raise ValueError(f"`{name}`: {p} is not an inspect eval log ({type(exc).__name__}: {exc})") from None
        task = str(log.eval.task)
        entry = out.setdefault(task, {"model": _model_label(log), "files": [], "samples": {}})
        if entry["model"] != _model_label(log):
            raise ValueError(f"`{name}`: task {task!r} was run by two models in {[*entry['files'], str(p)]} "
                             f"({entry['model']} and {_model_label(log)}); give one model's logs per side")
        entry["files"].append(str(p))
        for s in log.samples or []:
            key = (str(s.id), int(s.epoch))
            if key in entry["samples"]:
                raise ValueError(f"`{name}`: sample {key[0]!r} epoch {key[1]} of task {task!r} appears twice "
                                 f"({entry['files']}); give each sample's epoch once")
            entry["samples"][key] = s
    return out


def _value(sample: Any, scorer: str, to_float: Any) -> float | None:
    score = (sample.scores or {}).get(scorer)
    if score is None or isinstance(score.value, (dict, list)):
        return None
    try:
        v = float(to_float(score.value))
    except (TypeError, ValueError):
        return None
    return v if math.isfinite(v) else None


def _same(sa: Any, sb: Any) -> bool:
    return _text(sa.input) == _text(sb.input) and _text(sa.target) == _text(sb.target)


def _units(keys: list[tuple[str, int]], samples: dict[tuple[str, int], Any], cluster: str | None,
           label: str) -> tuple[np.ndarray, str]:
    if cluster is None:
        ids = [k[0] for k in keys]
        epochs = len({k[1] for k in keys})
        what = "sample" if epochs == 1 else f"sample id ({epochs} epochs)"
    else:
        ids = []
        for k in keys:
            meta = samples[k].metadata or {}
            if cluster not in meta:
                raise ValueError(f"`cluster`: sample {k[0]!r} of task {label!r} has no metadata {cluster!r} "
                                 f"(its metadata: {sorted(meta) or 'none'})")
            ids.append(json.dumps(meta[cluster], sort_keys=True, default=str))
        what = f"cluster ({cluster})"
    _, codes = np.unique(np.asarray(ids, dtype=object), return_inverse=True)
    return codes.astype(np.int64), what


def compare_logs(a: Any, b: Any, *, correction: str = "holm", alpha: float = 0.05, confidence_level: float = 0.95,
                 scorers: Sequence[str] | None = None, cluster: str | None = None, allow_missing: bool = False,
                 method: str = "auto", n_resamples: int = 100_000,
                 rng: int | np.random.Generator | None = 0) -> CompareResult:
    """Compare model B with model A on the same inspect_ai tasks, paired by sample and epoch.

    Parameters
    ----------
    a, b : path or sequence of paths
        Model A's and model B's eval logs (``.eval`` or ``.json``), or folders holding them.
        Tasks are matched by name (``log.eval.task``); every task must be in both.
    correction : str
        Adjustment of the p-values over every (task, scorer) row
        (:data:`ipcausal.stats.multitest.CORRECTIONS`; ``"holm"`` by default).
    alpha : float
        Level of ``reject`` (on the adjusted p).
    confidence_level : float
        Level of the interval for mean(B − A).
    scorers : sequence of str, optional
        Only these scorers (default: every scorer with one number per sample, converted with
        inspect's ``value_to_float``: ``C`` → 1, ``I`` → 0, ``P`` → 0.5).
    cluster : str, optional
        A sample metadata key: samples sharing its value form one unit whose differences flip
        together (default: the sample id, so a sample's epochs flip together).
    allow_missing : bool
        Samples in one log only, with another input or target, errored, or without a numeric
        score raise ``ValueError`` naming them; with ``True`` they are left out and listed in
        ``missing``.
    method, n_resamples, rng
        The sign-flip test's route (:func:`ipcausal.permutation_test`): exact for 0/1 and
        graded scores whenever feasible, Monte Carlo (seeded by ``rng``) otherwise.

    Returns
    -------
    CompareResult
        ``rows`` per (task, scorer) with ``model_a``, ``model_b``, ``unit`` and the fields of
        :class:`~ipcausal.interop.lm_eval.CompareResult`; ``missing`` per task:
        ``only_a``, ``only_b``, ``mismatched``, ``errored_a``, ``errored_b``, ``unscored``
        (lists of ``[id, epoch]``, per scorer for ``unscored``).
    """
    try:
        from inspect_ai.scorer import value_to_float
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL) from exc
    correction, alpha, level = check_options(correction, alpha, confidence_level, allow_missing, scorers, "scorers",
                                             "scorer")
    if cluster is not None and (not isinstance(cluster, str) or not cluster):
        raise TypeError(f"`cluster` must be a metadata key or None, got {cluster!r}")
    la, lb = read_logs(a, "a"), read_logs(b, "b")
    only = sorted(set(la) ^ set(lb))
    if only:
        raise ValueError("tasks must be the same in both: " + "; ".join(f"{t} only in {'A' if t in la else 'B'}"
                                                                     for t in only))
    to_float = value_to_float()
    rows: list[dict[str, Any]] = []
    missing: dict[str, dict[str, Any]] = {}
    skipped: list[str] = []
    problems: list[str] = []
    for task in sorted(la):
        sa, sb = la[task]["samples"], lb[task]["samples"]
        both = sorted(set(sa) & set(sb))
        lost = {"only_a": sorted(set(sa) - set(sb)), "only_b": sorted(set(sb) - set(sa)),
                "mismatched": [k for k in both if not _same(sa[k], sb[k])],
                "errored_a": [k for k in both if sa[k].error is not None],
                "errored_b": [k for k in both if sb[k].error is not None]}
        out = {x for v in lost.values() for x in v}
        keep = [k for k in both if k not in out]
        names = list(dict.fromkeys(n for k in keep for s in (sa[k], sb[k]) for n in (s.scores or {})))
        if scorers is not None:
            names = [n for n in scorers if n in names]
        unscored: dict[str, list[tuple[str, int]]] = {}
        for sc in names:
            pairs = [(k, _value(sa[k], sc, to_float), _value(sb[k], sc, to_float)) for k in keep]
            bad = [k for k, x, y in pairs if x is None or y is None]
            good = [(k, x, y) for k, x, y in pairs if x is not None and y is not None]
            if bad:
                unscored[sc] = bad
            if len(good) < 2:
                skipped.append(f"{task}/{sc}: fewer than 2 samples with a number from both models")
                continue
            xa = np.array([x for _, x, _ in good])
            xb = np.array([y for _, _, y in good])
            codes, unit = _units([k for k, _, _ in good], sa, cluster, task)
            if codes.max() < 1:
                skipped.append(f"{task}/{sc}: every sample is in one unit ({unit})")
                continue
            rows.append({"task": task, "scorer": sc, "model_a": la[task]["model"], "model_b": lb[task]["model"],
                         "unit": unit, **paired_row(xa, xb, units=codes, method=method, n_resamples=n_resamples,
                                                    rng=rng, level=level),
                         "n_missing": len(out) + len(bad), "n_mismatched": len(lost["mismatched"])})
        entry = {k: [list(x) for x in v] for k, v in lost.items() if v}
        if unscored:
            entry["unscored"] = {sc: [list(x) for x in v] for sc, v in unscored.items()}
        if entry:
            missing[task] = entry
            why = {"only_a": "only in A", "only_b": "only in B", "mismatched": "differ (input or target)",
                   "errored_a": "errored in A", "errored_b": "errored in B"}
            parts = [f"sample {shown([f'{i}@{e}' for i, e in v])} {why[k]}" for k, v in lost.items() if v]
            parts += [f"{sc}: sample {shown([f'{i}@{e}' for i, e in v])} without a numeric score"
                      for sc, v in unscored.items()]
            problems.append(f"{task}: " + "; ".join(parts))
    if scorers is not None:
        found = {r["scorer"] for r in rows} | {s.split(": ")[0].rsplit("/", 1)[-1] for s in skipped}
        absent = [m for m in scorers if m not in found]
        if absent:
            raise ValueError(f"`scorers`: {absent} not found in the logs")
    if problems and not allow_missing:
        raise ValueError("samples do not match (id@epoch): " + " | ".join(problems) + "; pass `allow_missing` "
                         "(--allow-missing) to leave them out (they are then listed)")
    if not rows:
        raise ValueError("no scorer could be compared: " + ("; ".join(skipped) or "no samples in common"))
    adjust_rows(rows, correction, alpha)
    files = (tuple(f for t in sorted(la) for f in la[t]["files"]), tuple(f for t in sorted(lb) for f in lb[t]["files"]))
    return CompareResult(tuple(rows), missing, tuple(skipped), alpha, correction, level, _NULL, *files)


compare_inspect = compare_logs
"""The name :mod:`ipcausal.interop` gives :func:`compare_logs` (beside ``compare_lm_eval``)."""
