"""inspect_ai in and out: a PairSet as an inspect dataset, inspect eval logs back as a PairSet.

:func:`export_inspect` writes one inspect sample per side of each pair (JSON Lines with
``id``, ``input``, ``metadata`` and, when asked, ``target``), readable by
``inspect_ai.dataset.json_dataset``.  :func:`import_inspect` reads eval logs with inspect's own
``read_eval_log``, pairs the samples back by their metadata, and takes the model output as
``y_i``/``y_j`` and, optionally, one scorer's value as ``score_i``/``score_j`` (so that the
pairs can go straight to :func:`ipcausal.test`, or to ``ipcausal score`` for the texts).

Inside inspect (these need ``inspect-ai``; imported from here on first use):

* :class:`IPEarlyStopping` (:mod:`ipcausal.interop.inspect_stop`) — inspect's ``EarlyStopping``
  protocol running the audit's anytime-valid e-processes, stopping once every background pair
  is decided;
* :func:`ip_task`, :func:`ip_test` (:mod:`ipcausal.interop.inspect_task`) — a PairSet as an
  inspect Task, and the paired test as an inspect metric;
* the model ``ipcausal/simulated`` (:mod:`ipcausal.interop.inspect_model`, registered through
  inspect's ``inspect_ai`` entry point);
* :func:`compare_logs` (:mod:`ipcausal.interop.inspect_compare`) — two models' logs of the same
  tasks compared sample by sample (``ipcausal compare inspect``).

Writing a dataset needs nothing; reading logs needs ``inspect-ai`` (``pip install 'ipcausal[interop]'``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ipcausal._jsonio import json_ready
from ipcausal.interop._common import SIDES, ImportResult, SideRecord, as_path, assemble, pairs_of, side_rows
from ipcausal.pairs import PairSet

__all__ = ["export_inspect", "import_inspect", "IPEarlyStopping", "ip_task", "ip_test", "mcq_choice", "answer_number",
           "pairs_from_scores", "compare_logs"]

_INSIDE = {"IPEarlyStopping": "ipcausal.interop.inspect_stop", "ip_task": "ipcausal.interop.inspect_task",
           "ip_test": "ipcausal.interop.inspect_task", "mcq_choice": "ipcausal.interop.inspect_task",
           "answer_number": "ipcausal.interop.inspect_task", "pairs_from_scores": "ipcausal.interop.inspect_task",
           "compare_logs": "ipcausal.interop.inspect_compare"}


def __getattr__(name: str) -> Any:
    """The names that need inspect_ai, imported on first use (``export_inspect`` needs nothing)."""
    if name in _INSIDE:
        import importlib

        return getattr(importlib.import_module(_INSIDE[name]), name)
    raise AttributeError(f"module 'ipcausal.interop.inspect' has no attribute {name!r}")

_INSTALL = "reading inspect eval logs needs inspect-ai: pip install 'ipcausal[interop]'"


def export_inspect(pairs: PairSet | str | os.PathLike[str], out: str | os.PathLike[str], *,
                   target: str | None = None) -> Path:
    """Write ``pairs`` as an inspect_ai dataset: one JSON line (sample) per side of each pair.

    Parameters
    ----------
    pairs : PairSet or path
        The pairs to evaluate.
    out : path
        The dataset file to write (``.jsonl``), read in inspect by ``json_dataset(out)``.
    target : str, optional
        A column whose value (as text) becomes each sample's ``target`` (e.g. the correct
        option); by default the column ``target`` when the pairs have one, else no target.

    Returns
    -------
    pathlib.Path
        ``out``.  Each sample has ``id`` = ``"PAIR_ID:i"`` or ``"PAIR_ID:j"``, ``input`` =
        ``x_i`` or ``x_j``, and ``metadata`` with ``pair_id``, ``side`` (``"i"``/``"j"``),
        ``background`` and ``pair`` (the pair's other columns), which
        :func:`import_inspect` uses to rebuild the pairs.

    Examples
    --------
    >>> import json, tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> from ipcausal import PairSet
    >>> from ipcausal.interop import export_inspect
    >>> ps = PairSet.from_records([{"pair_id": "q1", "background_i": "us", "background_j": "uk",
    ...                             "x_i": "What color is a pillar box?", "x_j": "What colour is a pillar box?",
    ...                             "target": "red"}])
    >>> path = export_inspect(ps, pathlib.Path(tmp.name) / "dataset.jsonl")
    >>> [json.loads(line)["id"] for line in path.read_text().splitlines()]
    ['q1:i', 'q1:j']
    >>> json.loads(path.read_text().splitlines()[1])["metadata"]["background"]
    'uk'
    >>> tmp.cleanup()
    """
    ps = pairs_of(pairs)
    if target is None and "target" in ps:
        target = "target"
    p = as_path(out, "out")
    if p.suffix.lower() not in (".jsonl", ".ndjson"):
        raise ValueError(f"`out`: an inspect dataset is written as JSON Lines (.jsonl), got {p.name!r}")
    rows = side_rows(ps, target=target)
    p.parent.mkdir(parents=True, exist_ok=True)
    with open(p, "w", encoding="utf-8") as fh:
        for r in rows:
            sample: dict[str, Any] = {"id": r["id"], "input": r["input"]}
            if "target" in r:
                sample["target"] = r["target"]
            sample["metadata"] = {"pair_id": r["pair_id"], "side": r["side"], "background": r["background"],
                                  "pair": r["pair"]}
            fh.write(json.dumps(sample, ensure_ascii=False) + "\n")
    return p


def _input_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    texts = [getattr(m, "text", "") for m in value if getattr(m, "role", None) == "user"]
    return "\n\n".join(t for t in texts if t)


def _score(sample: Any, scorer: str, to_float: Any, where: str) -> float:
    scores = sample.scores or {}
    if scorer not in scores:
        raise ValueError(f"`scorer`: {where} has no score {scorer!r}; scores there: {sorted(scores) or 'none'}")
    value = scores[scorer].value
    if isinstance(value, (dict, list)):
        raise ValueError(f"`scorer`: {scorer!r} in {where} gives a {type(value).__name__} ({value!r}), not one value")
    return float(to_float(value))


def _records(path: Path, log: Any, *, scorer: str | None, to_float: Any, pair_field: str, side_field: str,
             background_field: str, errored: list[str], model: str | None = None) -> Iterator[SideRecord]:
    model = getattr(log.eval, "model", None) if model is None else model
    per_side: dict[tuple[str, str], list[Any]] = {}
    for s in log.samples or []:
        meta = s.metadata or {}
        where = f"{path.name}: sample {s.id!r}"
        missing = [f for f in (pair_field, side_field) if f not in meta]
        if missing:
            raise ValueError(f"{where}: metadata lacks {missing} (was the dataset written by export_inspect?)")
        if s.error is not None:
            errored.append(str(s.id))  # no answer: its partner shows up as unpaired
            continue
        per_side.setdefault((str(meta[pair_field]), str(meta[side_field])), []).append(s)
    for (key, side), samples in per_side.items():
        samples.sort(key=lambda s: s.epoch)
        epochs = [s.epoch for s in samples]
        if len(set(epochs)) != len(epochs):
            raise ValueError(f"{path.name}: side {side!r} of pair {key!r} appears twice in epoch(s) "
                             f"{sorted({e for e in epochs if epochs.count(e) > 1})}")
        first = samples[0]
        meta = first.metadata or {}
        texts = tuple(s.output.completion if s.output is not None else None for s in samples)
        score = None
        if scorer is not None:
            vals = [_score(s, scorer, to_float, f"{path.name}: sample {s.id!r} (epoch {s.epoch})") for s in samples]
            score = sum(vals) / len(vals)
        extra = meta.get("pair") if isinstance(meta.get("pair"), dict) else {}
        yield SideRecord(sample_id=str(first.id), key=key, side=side,
                         background=str(meta.get(background_field, side)), x=_input_text(first.input), y=texts[0],
                         samples=texts, score=score, model=model, meta={k: json_ready(v) for k, v in extra.items()})


def _model_names(model: Any, n: int) -> list[str | None]:
    if model is None:
        return [None] * n
    names = [model] * n if isinstance(model, str) else list(model) if isinstance(model, Sequence) else None
    if names is None or not all(isinstance(m, str) and m for m in names):
        raise TypeError(f"`model` must be a model name, a sequence of names (one per log) or None, got {model!r}")
    if len(names) != n:
        raise ValueError(f"`model` names {len(names)} model(s) for {n} log(s); give one name, or one per log")
    return names


def import_inspect(logs: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, scorer: str | None = None,
                   allow_missing: bool = False, sides: Sequence[str] | None = SIDES, pair_field: str = "pair_id",
                   side_field: str = "side", background_field: str = "background",
                   model: str | Sequence[str] | None = None) -> ImportResult:
    """Read inspect_ai eval logs and pair their samples back into a PairSet.

    Parameters
    ----------
    logs : path or sequence of paths
        Eval log files (``.eval`` or ``.json``), read with ``inspect_ai.log.read_eval_log``.
        Samples of one model are pooled across logs; several models give one test family each
        (column ``model``, pair ids prefixed by the model).
    scorer : str, optional
        The scorer whose value becomes ``score_i``/``score_j``, converted with inspect's own
        ``value_to_float`` (``"C"`` → 1, ``"I"`` → 0, ``"P"`` → 0.5, numbers as they are) and
        averaged over epochs.  Without it only the texts ``y_i``/``y_j`` are kept (score them
        with ``ipcausal score``).
    allow_missing : bool
        A pair with one side missing (or errored) raises ``ValueError`` naming the sample ids
        without a partner; with ``True`` those samples are dropped and listed in ``unpaired``.
    sides, pair_field, side_field, background_field
        How a sample's metadata names its pair, its side and its background; the defaults
        match :func:`export_inspect`.  ``sides=None`` pairs every two sides of a group.
    model : str or sequence of str, optional
        The ``model`` column: one name for every log, or one per log (in the order of
        ``logs``).  By default each log's own model (``log.eval.model``), so two logs of one
        model run with different model arguments (``-M effect=…``) need names of their own.

    Returns
    -------
    ImportResult
        ``.pairs`` (``y_*`` = the first epoch's completion; ``samples_*`` all epochs when
        there are several; ``score_*`` with ``scorer``; ``model`` = the log's model),
        ``.n_samples``, ``.unpaired`` and ``.files``.
    """
    try:
        from inspect_ai.log import read_eval_log
        from inspect_ai.scorer import value_to_float
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise ImportError(_INSTALL) from exc
    paths = [logs] if isinstance(logs, (str, os.PathLike)) else list(logs) if isinstance(logs, Sequence) else None
    if not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise TypeError("`logs` must be a path or a non-empty sequence of paths to inspect eval logs")
    if scorer is not None and (not isinstance(scorer, str) or not scorer):
        raise TypeError(f"`scorer` must be a scorer name or None, got {scorer!r}")
    for name, v in (("pair_field", pair_field), ("side_field", side_field), ("background_field", background_field)):
        if not isinstance(v, str) or not v:
            raise TypeError(f"`{name}` must be a non-empty metadata key, got {v!r}")
    names = _model_names(model, len(paths))
    to_float = value_to_float()
    records: list[SideRecord] = []
    errored: list[str] = []
    seen: dict[str, tuple[str, Path]] = {}  # model name -> (its model arguments, the first log)
    for p, name in zip(map(Path, paths), names):
        if not p.is_file():
            raise ValueError(f"`logs`: no such file: {p}")
        try:
            log = read_eval_log(str(p))
        except Exception as exc:  # inspect raises its own types for unreadable logs
            raise ValueError(f"`logs`: {p} is not an inspect eval log ({type(exc).__name__}: {exc})") from None
        label = str(getattr(log.eval, "model", None)) if name is None else name
        args = json.dumps(getattr(log.eval, "model_args", None) or {}, sort_keys=True, default=str)
        first = seen.setdefault(label, (args, p))
        if first[0] != args:
            raise ValueError(f"`model`: {first[1].name} and {p.name} are both {label!r} but with different model "
                             f"arguments ({first[0]} and {args}); name each run: model=[...] (one per log), on the "
                             "command line --model NAME once per LOG")
        records.extend(_records(p, log, scorer=scorer, to_float=to_float, pair_field=pair_field,
                                side_field=side_field, background_field=background_field, errored=errored,
                                model=name))
    return assemble(records, sides=sides, allow_missing=allow_missing, files=paths, what="sample", errored=errored)
