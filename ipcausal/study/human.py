"""Human scores for a judge's check: the package's own seeded draw, the rating sheet, the labels read back.

Prediction-powered inference (:mod:`ipcausal.stats.ppi`) needs human scores on a **uniformly random**
subset of the scored pairs.  :func:`human_sample` draws that subset with a seed (whole clusters when
a ``cluster`` column is given) and :func:`write_human_sheet` writes it for raters
(``ipcausal validate sample PAIRS -n 80 --rng 0 -o sheet.csv``): one row per response, in a seeded
random order, so a rater never sees the two responses of a pair side by side or which background a
row belongs to (each row shows its own prompt, which the rater needs to judge the response).  The
key beside it (``sheet.key.json``, not for raters) records which pair and side each row is, the seed,
the size of the draw and a fingerprint of the pairs it was drawn from.

:func:`read_human` reads the ratings back as :class:`HumanLabels` — from the filled-in sheet (its key
beside it), or from any ``LABELS.csv`` with the columns ``pair_id, human_i, human_j`` (the human
scores of each side; a ``model`` column when the pairs hold several models).  The labels keep their
provenance: whether they are the package's own seeded draw (seed, size, population) or come from
elsewhere, in which case PPI's guarantee rests on an assumption the report states.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ipcausal.pairs import PairSet
from ipcausal._validate import as_generator

__all__ = ["row_keys", "HumanSample", "HumanLabels", "human_sample", "write_human_sheet", "read_human", "as_human",
           "fingerprint", "SHEET_COLUMNS", "LABEL_COLUMNS"]

#: The columns of the rating sheet :func:`write_human_sheet` writes.
SHEET_COLUMNS: tuple[str, ...] = ("item", "prompt", "response", "human", "comment")
#: The columns of a labels file (``model`` besides, when the pairs hold several models).
LABEL_COLUMNS: tuple[str, ...] = ("pair_id", "human_i", "human_j")
_KEY_FORMAT = "ipcausal-human-key"


def row_keys(ps: PairSet) -> list[tuple[str, str]]:
    """(model, pair_id) of every row, as text ("" for no model): how labels name a pair."""
    df = ps.to_frame()
    models = df["model"].astype(str).tolist() if "model" in df.columns else [""] * len(df)
    keys = list(zip(models, df["pair_id"].astype(str).tolist()))
    if len(set(keys)) != len(keys):
        raise ValueError("`pairs`: pair_id repeats within a model; human labels need one row per (model, pair_id)")
    return keys


def fingerprint(pairs: PairSet) -> str:
    """A short hash of the (model, pair_id) rows of ``pairs``: the population a draw was made from.

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records([{"pair_id": 1, "background_i": "a", "background_j": "b",
    ...                                      "x_i": "q", "x_j": "q"}])
    >>> len(fingerprint(ps))
    16
    """
    text = "\n".join(f"{m}\x1f{p}" for m, p in sorted(row_keys(pairs)))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True)
class HumanSample:
    """The package's seeded draw: ``keys`` ((model, pair_id) of the pairs drawn), the integer ``seed``, the
    ``n`` asked for (pairs, or clusters with ``cluster``), the ``population`` size and its ``fingerprint``."""

    keys: tuple[tuple[str, str], ...]
    seed: int
    n: int
    population: int
    fingerprint: str
    cluster: str | None = None


def human_sample(pairs: PairSet, n: int, *, rng: int = 0, cluster: str | None = None) -> HumanSample:
    """A uniformly random, seeded subset of ``n`` pairs (or of ``n`` clusters, all their pairs) for people to rate.

    Parameters
    ----------
    pairs : PairSet
        The scored pairs the test will use (the judge's scores on all of them).
    n : int
        Pairs to draw (clusters with ``cluster``), 2 <= n <= the number there are.
    rng : int
        The seed (an integer, so that the draw can be recorded and repeated).
    cluster : str, optional
        A column naming each pair's cluster: whole clusters are drawn, as the test's unit.

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records({"pair_id": k, "background_i": "a", "background_j": "b",
    ...                                     "x_i": "q", "x_j": "q"} for k in range(10))
    >>> s = human_sample(ps, 3, rng=0)
    >>> len(s.keys), s.seed, s.population, s.keys == human_sample(ps, 3, rng=0).keys
    (3, 0, 10, True)
    """
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    if isinstance(rng, bool) or not isinstance(rng, (int, np.integer)) or rng < 0:
        raise ValueError(f"`rng` must be a non-negative integer (the draw's seed is recorded), got {rng!r}")
    keys = row_keys(pairs)
    if cluster is not None:
        if cluster not in pairs:
            raise ValueError(f"`cluster`: the pairs have no column {cluster!r}")
        ids = pairs.to_frame()[cluster].astype(str).tolist()
        units = sorted(set(ids))
    else:
        ids, units = None, sorted(keys)
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 2 <= n <= len(units):
        what = "clusters" if cluster is not None else "pairs"
        raise ValueError(f"`n` must be an integer from 2 to the {len(units)} {what} there are, got {n!r}")
    gen = as_generator(int(rng))
    chosen = {units[i] for i in gen.choice(len(units), size=int(n), replace=False)}
    drawn = [k for k, c in zip(keys, ids if ids is not None else keys) if c in chosen]
    return HumanSample(tuple(sorted(drawn)), int(rng), int(n), len(keys), fingerprint(pairs), cluster)


def write_human_sheet(pairs: PairSet | str | os.PathLike[str], out: str | os.PathLike[str], *, n: int, rng: int = 0,
                      cluster: str | None = None) -> tuple[Path, Path]:
    """Draw :func:`human_sample` and write its rating sheet (CSV) and key (``SHEET.key.json``).

    The sheet has one row per response of the pairs drawn (:data:`SHEET_COLUMNS`: ``item``,
    ``prompt``, ``response``, an empty ``human`` for the rater's score, ``comment``), in a seeded
    random order.  Give the sheet to the raters and keep the key.

    Examples
    --------
    >>> import csv, tempfile, pathlib, ipcausal
    >>> ps = ipcausal.PairSet.from_records({"pair_id": k, "background_i": "a", "background_j": "b", "x_i": "q",
    ...     "x_j": "q'", "y_i": f"answer {k}", "y_j": f"reply {k}", "score_i": 1, "score_j": 2} for k in range(6))
    >>> sheet, key = write_human_sheet(ps, pathlib.Path(tempfile.mkdtemp()) / "sheet.csv", n=2, rng=0)
    >>> rows = list(csv.DictReader(sheet.open()))
    >>> len(rows), sorted(rows[0])[:2], key.name
    (4, ['comment', 'human'], 'sheet.key.json')
    """
    ps = PairSet.read(pairs) if isinstance(pairs, (str, os.PathLike)) else pairs
    if not isinstance(ps, PairSet):
        raise TypeError(f"`pairs` must be a PairSet or a path, got {type(pairs).__name__}")
    for col in ("y_i", "y_j"):
        if col not in ps:
            raise ValueError(f"`pairs` has no `{col}` column: people rate the responses, so run the model first")
    sheet = Path(out)
    if sheet.suffix.lower() != ".csv":
        raise ValueError(f"`out`: the rating sheet is written as .csv, got {sheet.name!r}")
    sample = human_sample(ps, n, rng=rng, cluster=cluster)
    chosen = set(sample.keys)
    rows = []
    for key, rec in zip(row_keys(ps), ps.records()):
        if key in chosen:
            rows += [(key, side, rec[f"x_{side}"], rec[f"y_{side}"]) for side in ("i", "j")]
    order = np.random.default_rng([sample.seed, 1]).permutation(len(rows))  # the row order: its own stream
    sheet.parent.mkdir(parents=True, exist_ok=True)
    items = []
    with open(sheet, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SHEET_COLUMNS)
        for item, k in enumerate(order, 1):
            (model, pid), side, prompt, response = rows[k]
            w.writerow([item, prompt, "" if response is None else response, "", ""])
            items.append({"item": item, "model": model, "pair_id": pid, "side": side})
    key_path = sheet.with_name(sheet.stem + ".key.json")
    key_path.write_text(json.dumps({
        "format": _KEY_FORMAT, "version": 1, "sheet": sheet.name, "seed": sample.seed, "n": sample.n,
        "cluster": sample.cluster, "population": sample.population, "fingerprint": sample.fingerprint,
        "drawn": [list(k) for k in sample.keys], "items": items}, indent=1) + "\n", encoding="utf-8")
    return sheet, key_path


@dataclass(frozen=True)
class HumanLabels:
    """Human scores per pair and side, with where they came from.

    ``scores`` maps (model, pair_id) — model ``""`` when the pairs name none — to (human_i,
    human_j).  ``source`` names the file.  ``sample`` is the package's draw they belong to (from the
    key :func:`write_human_sheet` wrote), or ``None`` for labels from elsewhere.

    Examples
    --------
    >>> lab = HumanLabels({("", "p1"): (3.0, 4.0)}, source="labels.csv")
    >>> lab.n, lab.own_draw
    (1, False)
    """

    scores: Mapping[tuple[str, str], tuple[float, float]]
    source: str = "given"
    sample: HumanSample | None = None
    unrated: int = field(default=0)

    @property
    def n(self) -> int:
        """Pairs with both human scores."""
        return len(self.scores)

    @property
    def own_draw(self) -> bool:
        """Whether the labels are (a subset of) the package's own seeded draw."""
        return self.sample is not None

    def provenance(self) -> dict[str, Any]:
        """The labels' provenance as plain values (kept in the run record and the Report)."""
        out: dict[str, Any] = {"source": self.source, "pairs labelled": self.n, "own draw": self.own_draw}
        if self.sample is not None:
            out.update({"seed": self.sample.seed, "drawn": self.sample.n, "cluster": self.sample.cluster,
                        "population": self.sample.population, "fingerprint": self.sample.fingerprint,
                        "drawn but not rated": self.unrated})
        return out


def _number(value: Any, where: str) -> float | None:
    text = "" if value is None else str(value).strip()
    if not text:
        return None
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"{where}: a human score must be a number (or empty), got {text!r}") from None
    if not math.isfinite(v):
        raise ValueError(f"{where}: a human score must be finite, got {text!r}")
    return v


def _read_key(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"`key`: cannot read {path} ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != _KEY_FORMAT:
        raise ValueError(f"`key`: {path} is not a key written by `ipcausal validate sample`")
    return data


def _sample_of(key: Mapping[str, Any]) -> HumanSample:
    return HumanSample(tuple(tuple(k) for k in key["drawn"]), int(key["seed"]), int(key["n"]),
                       int(key["population"]), str(key["fingerprint"]), key.get("cluster"))


def read_human(path: str | os.PathLike[str], *, key: str | os.PathLike[str] | None = None) -> HumanLabels:
    """Human scores from a filled-in rating sheet (its key beside it) or a ``LABELS.csv``.

    A file with the columns ``item`` and ``human`` is a sheet of :func:`write_human_sheet`: its key
    (default ``SHEET.key.json``) maps each row to its pair and side.  A file with ``pair_id,
    human_i, human_j`` (and ``model`` when the pairs name several) is read as it is; with ``key``
    (or a ``LABELS.key.json`` beside it) its pairs are checked against that draw.  Pairs with a
    side left empty are not labelled (counted in ``unrated``).
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"`human`: no such file: {p}")
    with open(p, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        columns = set(reader.fieldnames or [])
        rows = list(reader)
    key_path = Path(key) if key is not None else p.with_name(p.stem + ".key.json")
    if {"item", "human"} <= columns:
        if not key_path.is_file():
            raise ValueError(f"`human`: {p.name} is a rating sheet; its key {key_path.name} is needed beside it")
        data = _read_key(key_path)
        where = {int(it["item"]): (str(it["model"]), str(it["pair_id"]), it["side"]) for it in data["items"]}
        got: dict[tuple[str, str], dict[str, float]] = {}
        for line, row in enumerate(rows, 2):
            try:
                item = int(str(row["item"]).strip())
            except ValueError:
                raise ValueError(f"{p.name}:{line}: `item` must be the row's number, got {row['item']!r}") from None
            if item not in where:
                raise ValueError(f"{p.name}:{line}: item {item} is not in the key (a sheet from another draw?)")
            model, pid, side = where[item]
            v = _number(row.get("human"), f"{p.name}:{line}")
            if v is not None:
                got.setdefault((model, pid), {})[side] = v
        sample = _sample_of(data)
    elif set(LABEL_COLUMNS) <= columns:
        got = {}
        for line, row in enumerate(rows, 2):
            k = (str(row.get("model") or ""), str(row["pair_id"]).strip())
            if k in got:
                raise ValueError(f"{p.name}:{line}: pair {k[1]!r} appears twice")
            got[k] = {s: v for s in ("i", "j") if (v := _number(row[f"human_{s}"], f"{p.name}:{line}")) is not None}
        sample = _sample_of(_read_key(key_path)) if key_path.is_file() else None
    else:
        raise ValueError(f"`human`: {p.name} has neither the columns {', '.join(LABEL_COLUMNS)} nor a rating "
                         f"sheet's item and human")
    scores = {k: (v["i"], v["j"]) for k, v in got.items() if "i" in v and "j" in v}
    if sample is not None:
        outside = sorted(set(scores) - set(sample.keys))
        if outside:
            raise ValueError(f"`human`: {len(outside)} labelled pair(s) are not in the draw of {key_path.name}, "
                             f"e.g. {outside[0][1]!r}")
    unrated = len(sample.keys) - len(scores) if sample is not None else len(got) - len(scores)
    return HumanLabels(scores, source=str(p), sample=sample, unrated=int(unrated))


def as_human(human: Any) -> HumanLabels | None:
    """``human`` of :func:`ipcausal.test` as :class:`HumanLabels`: labels, a path, or a table with
    :data:`LABEL_COLUMNS` (a pandas DataFrame or a mapping of columns; labels from elsewhere)."""
    if human is None or isinstance(human, HumanLabels):
        return human
    if isinstance(human, (str, os.PathLike)):
        return read_human(human)
    cols = human if isinstance(human, Mapping) else None
    if cols is None and hasattr(human, "columns") and hasattr(human, "to_dict"):
        cols = human.to_dict(orient="list")
    if cols is None or not set(LABEL_COLUMNS) <= set(cols):
        raise TypeError("`human` must be HumanLabels, a path to LABELS.csv or a rating sheet, or a table with the "
                        f"columns {', '.join(LABEL_COLUMNS)}")
    models = cols.get("model") or [""] * len(cols["pair_id"])
    scores: dict[tuple[str, str], tuple[float, float]] = {}
    for m, pid, hi, hj in zip(models, cols["pair_id"], cols["human_i"], cols["human_j"]):
        a, b = _number(hi, "`human`"), _number(hj, "`human`")
        if a is not None and b is not None:
            scores[(str(m or ""), str(pid))] = (a, b)
    return HumanLabels(scores, source="given table")
