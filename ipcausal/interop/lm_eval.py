"""lm-evaluation-harness in and out: a PairSet as a local lm-eval task, ``--log_samples`` output back.

:func:`export_lm_eval` writes a task folder (``NAME.jsonl``, one row per side of each pair,
and ``NAME.yaml``, a ``generate_until`` task reading it with ``dataset_path: json``) for
``lm_eval --include_path DIR --tasks NAME``.  :func:`import_lm_eval` reads the
``samples_NAME_*.jsonl`` files that ``lm_eval --log_samples`` writes, pairs the rows by the doc
fields the user names, and takes a metric (``acc``, ``exact_match`` …) as the score and the
responses as text.  :func:`compare_lm_eval` (in :mod:`ipcausal.interop.lm_eval_compare`,
re-exported here) tests two models' samples files against each other, paired by ``doc_id``
(``ipcausal compare lm-eval``).  None of them needs lm-eval installed: they read and write plain files.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ipcausal._jsonl import iter_objects
from ipcausal._jsonio import json_ready
from ipcausal.interop._common import SIDES, ImportResult, SideRecord, as_path, assemble, pairs_of, side_rows
from ipcausal.interop.lm_eval_compare import CompareResult, compare_lm_eval

__all__ = ["export_lm_eval", "import_lm_eval", "compare_lm_eval", "CompareResult", "TEXT_FIELDS"]

TEXT_FIELDS: tuple[str, ...] = ("filtered_resps", "resps")
"""Where a samples row keeps the model's answer: after lm-eval's filters, or as it came."""

_RESERVED = ("pair_id", "side", "background", "input", "target")
_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def export_lm_eval(pairs: Any, out: str | os.PathLike[str], *, task: str = "ipcausal_pairs",
                   target: str | None = None, max_gen_toks: int = 64) -> Path:
    """Write ``pairs`` as a local lm-eval task: ``OUT/TASK.jsonl`` and ``OUT/TASK.yaml``.

    Parameters
    ----------
    pairs : PairSet or path
        The pairs to evaluate.
    out : path
        The task folder (created); pass it to ``lm_eval --include_path``.
    task : str
        The task name (letters, digits and ``_``); ``lm_eval --tasks TASK``.
    target : str, optional
        The column that becomes each row's ``target`` (default: the column ``target`` if
        present).  With a target the YAML scores ``exact_match``; without one it records the
        answers only (metric ``bypass``), to be scored with ``ipcausal score``.
    max_gen_toks : int
        Token limit per answer in the YAML's ``generation_kwargs``.

    Returns
    -------
    pathlib.Path
        The YAML file.  Each JSONL row holds ``pair_id``, ``side`` (``"i"``/``"j"``),
        ``background``, ``input`` and ``target`` plus the pair's other columns, flat, so a
        template may use them; :func:`import_lm_eval`'s defaults read this layout.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> from ipcausal import PairSet
    >>> from ipcausal.interop import export_lm_eval
    >>> ps = PairSet.from_records([{"pair_id": "q1", "background_i": "us", "background_j": "uk",
    ...                             "x_i": "Q: What color is snow?\\nA:", "x_j": "Q: What colour is snow?\\nA:",
    ...                             "target": "white"}])
    >>> yaml = export_lm_eval(ps, pathlib.Path(tmp.name) / "task", task="colours")
    >>> yaml.name, sorted(p.name for p in yaml.parent.iterdir())
    ('colours.yaml', ['colours.jsonl', 'colours.yaml'])
    >>> tmp.cleanup()
    """
    ps = pairs_of(pairs)
    if not isinstance(task, str) or not _NAME.match(task):
        raise ValueError(f"`task` must be a name of letters, digits and '_' (not starting with a digit), got {task!r}")
    if isinstance(max_gen_toks, bool) or not isinstance(max_gen_toks, int) or max_gen_toks < 1:
        raise ValueError(f"`max_gen_toks` must be a positive integer, got {max_gen_toks!r}")
    if target is None and "target" in ps:
        target = "target"
    rows = side_rows(ps, target=target, reserved=_RESERVED)
    folder = as_path(out, "out")
    if folder.exists() and not folder.is_dir():
        raise ValueError(f"`out` must be a folder (the task directory), got the file {folder}")
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / f"{task}.jsonl"
    with open(data, "w", encoding="utf-8") as fh:
        for r in rows:
            flat = {"pair_id": r["pair_id"], "side": r["side"], "background": r["background"], "input": r["input"],
                    "target": r.get("target", ""), **r["pair"]}
            fh.write(json.dumps(flat, ensure_ascii=False) + "\n")
    metric = "exact_match" if target is not None else "bypass"
    yaml = folder / f"{task}.yaml"
    yaml.write_text(
        "# written by ipcausal export lm-eval: one row per side of each pair\n"
        f"task: {task}\n"
        "dataset_path: json\n"
        "dataset_kwargs:\n"
        "  data_files:\n"
        f"    test: {json.dumps(str(data.resolve()))}\n"
        "test_split: test\n"
        "output_type: generate_until\n"
        'doc_to_text: "{{input}}"\n'
        'doc_to_target: "{{target}}"\n'
        "generation_kwargs:\n"
        f"  max_gen_toks: {max_gen_toks}\n"
        '  until: ["\\n\\n"]\n'
        "  do_sample: false\n"
        "metric_list:\n"
        f"  - metric: {metric}\n"
        + ("    aggregation: mean\n    higher_is_better: true\n    ignore_case: true\n    ignore_punctuation: true\n"
           if metric == "exact_match" else "    aggregation: bypass\n    higher_is_better: true\n"),
        encoding="utf-8")
    return yaml


def _field(doc: dict[str, Any], path: str) -> Any:
    """``doc[path]``, where ``a.b`` reads nested objects; ``KeyError`` when absent."""
    if path in doc:
        return doc[path]
    value: Any = doc
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            raise KeyError(path)
        value = value[part]
    return value


def _text(value: Any) -> str | None:
    while isinstance(value, list) and len(value) == 1:
        value = value[0]
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value)


def _model_of(path: Path) -> str | None:
    """The model named by the ``results_*.json`` that lm-eval wrote beside a samples file."""
    stamp = path.stem.rsplit("_", 1)[-1]
    for cand in sorted(path.parent.glob(f"results_{stamp}*.json")):
        try:
            res = json.loads(cand.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            continue
        name = res.get("model_name") or (res.get("config") or {}).get("model")
        if name:
            return str(name)
    return None


def _records(path: Path, *, metric: str | None, text_field: str, pair_field: str, side_field: str,
             background_field: str | None, model: str | None) -> Iterator[SideRecord]:
    skip = {pair_field, side_field, background_field, "input"}
    for lineno, row in iter_objects(path, "one lm-eval sample per line (from --log_samples)"):
        where = f"{path.name}:{lineno}"
        doc = row.get("doc")
        if not isinstance(doc, dict):
            raise ValueError(f"{where}: no `doc` object; is this an lm-eval samples file (--log_samples)?")
        try:
            key, side = str(_field(doc, pair_field)), str(_field(doc, side_field))
        except KeyError as exc:
            raise ValueError(f"{where}: the doc has no field {exc.args[0]!r} (`pair_field`/`side_field`); "
                             f"its fields: {sorted(doc)}") from None
        background = side
        if background_field is not None:
            try:
                background = str(_field(doc, background_field))
            except KeyError:
                pass
        args = row.get("arguments")
        x = doc.get("input")
        if isinstance(args, dict) and args:
            first = next(iter(args.values()))
            if isinstance(first, dict) and isinstance(first.get("arg_0"), str):
                x = first["arg_0"]  # the prompt as lm-eval rendered it
        if not isinstance(x, str):
            x = json.dumps(doc)
        score = None
        if metric is not None:
            if metric not in row:
                names = [k for k in row.get("metrics", []) if isinstance(k, str)]
                raise ValueError(f"`metric`: {where} has no metric {metric!r}; metrics there: {names or 'none'}")
            v = row[metric]
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"`metric`: {metric!r} at {where} is {v!r}, not one number per sample")
            score = float(v)
        if text_field not in row:
            raise ValueError(f"`text_field`: {where} has no {text_field!r}")
        y = _text(row[text_field])
        sid = f"{path.name}#{row.get('doc_id', lineno)}"
        yield SideRecord(sample_id=sid, key=key, side=side, background=background, x=x, y=y, samples=(y,),
                         score=score, model=model,
                         meta={k: json_ready(v) for k, v in doc.items() if k not in skip})


def import_lm_eval(samples: str | os.PathLike[str] | Sequence[str | os.PathLike[str]], *, metric: str | None = None,
                   pair_field: str = "pair_id", side_field: str = "side", background_field: str | None = "background",
                   sides: Sequence[str] | None = SIDES, text_field: str = "filtered_resps", model: str | None = None,
                   allow_missing: bool = False) -> ImportResult:
    """Read lm-eval ``--log_samples`` files and pair their rows into a PairSet.

    Parameters
    ----------
    samples : path or sequence of paths
        ``samples_TASK_*.jsonl`` files written by ``lm_eval --log_samples``.
    metric : str, optional
        The per-sample metric that becomes ``score_i``/``score_j`` (``acc``, ``exact_match`` …).
        Without it only the answers are kept, as ``y_i``/``y_j``.
    pair_field, side_field : str
        Doc fields naming a row's pair and its side (``a.b`` reads a nested field).
    background_field : str or None
        Doc field with the row's background; when absent (or ``None``) the side label is used.
    sides : (str, str) or None
        The side labels of ``x_i`` and ``x_j``; ``None`` pairs every two different sides of a
        pair key (one row per prompt and background, e.g. sides ``sae``, ``aae``, ``esl``).
    text_field : {"filtered_resps", "resps"}
        The answer kept as ``y_*``.
    model : str, optional
        The model's name (column ``model``); by default read from the ``results_*.json`` that
        lm-eval wrote beside each samples file.
    allow_missing : bool
        Rows without a partner side raise ``ValueError`` naming them unless ``True``.

    Returns
    -------
    ImportResult
        ``.pairs`` with ``x_*`` = the prompt lm-eval sent, ``y_*``, ``score_*`` with ``metric``.
    """
    paths = [samples] if isinstance(samples, (str, os.PathLike)) else list(samples) \
        if isinstance(samples, Sequence) else None
    if not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise TypeError("`samples` must be a path or a non-empty sequence of paths to lm-eval samples files")
    if text_field not in TEXT_FIELDS:
        raise ValueError(f"`text_field` must be one of {', '.join(map(repr, TEXT_FIELDS))}; got {text_field!r}")
    if metric is not None and (not isinstance(metric, str) or not metric):
        raise TypeError(f"`metric` must be a metric name or None, got {metric!r}")
    for name, v in (("pair_field", pair_field), ("side_field", side_field)):
        if not isinstance(v, str) or not v:
            raise TypeError(f"`{name}` must be a non-empty doc field name, got {v!r}")
    if background_field is not None and (not isinstance(background_field, str) or not background_field):
        raise TypeError(f"`background_field` must be a doc field name or None, got {background_field!r}")
    if model is not None and (not isinstance(model, str) or not model):
        raise TypeError(f"`model` must be a model name or None, got {model!r}")
    records: list[SideRecord] = []
    for p in map(Path, paths):
        if not p.is_file():
            raise ValueError(f"`samples`: no such file: {p}")
        records.extend(_records(p, metric=metric, text_field=text_field, pair_field=pair_field,
                                side_field=side_field, background_field=background_field,
                                model=model or _model_of(p)))
    return assemble(records, sides=sides, allow_missing=allow_missing, files=paths, what="row")

