"""Human validation of generated pairs: a blinded rating sheet out, the ratings back in.

A generator can keep the numbers and the question intact and still change the meaning, or
fail to sound like the variety it aims at (rule-based dialect text is an approximation).  The
only real check is people who speak the varieties.  :func:`export_validation` writes a sheet
(CSV, one row per pair) that shows the two texts of each pair in a seeded random order, as
``text_a`` and ``text_b``, and asks two questions:

* ``same_meaning`` — do the two texts mean the same? (``yes`` / ``no``)
* ``sounds_like_target`` — which text sounds like the row's ``target_variety`` (the background
  of ``x_j``)? (``A``, ``B``, ``both`` or ``neither``)

The rater is not told which text is the source and which the rewrite: the second question is
answered blind, and it passes only when the rater picks the text that was written for the
target.  The order is recorded in a key file (JSON, kept by whoever exports; not for raters).
:func:`import_validation` reads one sheet per rater, attaches the ratings to the pairs, flags
(or drops) rejected pairs, and, with two or more raters, reports raw agreement and Cohen's
kappa per question for every two raters.
"""

from __future__ import annotations

import csv
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Any

from ipcausal.interop._common import as_path, pairs_of
from ipcausal.pairs import PairSet
from ipcausal._validate import as_generator
from ipcausal.stats.results import Result

__all__ = ["export_validation", "import_validation", "cohen_kappa", "Agreement", "ValidationResult",
           "VARIETY_NAMES", "SHEET_COLUMNS", "QUESTIONS"]

VARIETY_NAMES: dict[str, str] = {
    "sae": "Standard American English",
    "aae": "African-American English",
    "esl": "English as written by a second-language learner",
    "esl_heavy": "English as written by a beginning second-language learner",
    "us": "American English",
    "uk": "British English",
    "true_belief": "a user who holds the true belief",
    "false_belief": "a user who holds the false belief",
}
"""How the sheet names a background for the raters (other labels are shown as they are)."""

SHEET_COLUMNS: tuple[str, ...] = ("item", "target_variety", "text_a", "text_b", "same_meaning",
                                  "sounds_like_target", "comment")
QUESTIONS: tuple[str, ...] = ("meaning", "variety")
_KEY_FORMAT = "ipcausal-validation-key"
_YES = {"yes", "y", "true", "1", "same"}
_NO = {"no", "n", "false", "0", "different"}
_CHOICES = {"a", "b", "both", "neither"}


@dataclass(frozen=True)
class Agreement(Result):
    """Agreement of two raters on one question, over the pairs both of them rated.

    ``agreement`` is the share of equal answers; ``kappa`` is Cohen's kappa
    (observed agreement corrected for the agreement expected from each rater's own
    answer rates), ``nan`` when it is undefined (both raters gave one same answer throughout).
    """

    question: str
    rater_a: int
    rater_b: int
    n: int
    agreement: float
    kappa: float


@dataclass(frozen=True)
class ValidationResult(Result):
    """The pairs with the ratings attached, the counts by status, and the raters' agreement."""

    pairs: PairSet
    n_ok: int
    n_rejected: int
    n_unrated: int
    n_dropped: int
    agreement: tuple[Agreement, ...]
    sheets: tuple[str, ...]

    def to_dict(self) -> dict[str, Any]:
        return {"n_pairs": len(self.pairs), "n_ok": self.n_ok, "n_rejected": self.n_rejected,
                "n_unrated": self.n_unrated, "n_dropped": self.n_dropped,
                "agreement": [a.to_dict() for a in self.agreement], "sheets": list(self.sheets)}

    def summary(self) -> str:
        """A few lines for people: the counts and, with two or more raters, the agreement."""
        lines = [f"{self.n_ok} ok, {self.n_rejected} rejected, {self.n_unrated} unrated"
                 + (f"; {self.n_dropped} rejected pair(s) dropped" if self.n_dropped else "")]
        for a in self.agreement:
            kappa = "undefined" if a.kappa != a.kappa else f"{a.kappa:.3f}"
            lines.append(f"{a.question}: raters {a.rater_a} and {a.rater_b}, n = {a.n}, "
                         f"agreement {a.agreement:.3f}, Cohen's kappa {kappa}")
        return "\n".join(lines)


def cohen_kappa(a: Sequence[Any], b: Sequence[Any]) -> float:
    """Cohen's kappa of two raters' labels for the same items.

    kappa = (p_o − p_e) / (1 − p_e), with p_o the share of items given the same label and
    p_e = Σ_c p_a(c)·p_b(c) the agreement expected if each rater labelled at their own rates
    independently.  ``nan`` when p_e = 1 (both raters used a single, same label).

    Examples
    --------
    >>> from ipcausal.interop import cohen_kappa
    >>> round(cohen_kappa(["yes", "yes", "no", "no"], ["yes", "no", "no", "no"]), 3)
    0.5
    """
    if isinstance(a, (str, bytes)) or isinstance(b, (str, bytes)):
        raise TypeError("`a` and `b` must be sequences of labels, not strings")
    la, lb = list(a), list(b)
    if len(la) != len(lb):
        raise ValueError(f"`a` and `b` must have the same length, got {len(la)} and {len(lb)}")
    if not la:
        raise ValueError("`a` and `b` need at least one item")
    n = len(la)
    p_o = sum(x == y for x, y in zip(la, lb)) / n
    p_e = sum((la.count(c) / n) * (lb.count(c) / n) for c in set(la) | set(lb))
    if p_e >= 1.0:
        return float("nan")
    return (p_o - p_e) / (1.0 - p_e)


def _key_path(sheet: Path) -> Path:
    return sheet.with_name(sheet.stem + ".key.json")


def export_validation(pairs: PairSet | str | os.PathLike[str], out: str | os.PathLike[str], *,
                      key: str | os.PathLike[str] | None = None, rng: Any = None,
                      varieties: Mapping[str, str] | None = None) -> tuple[Path, Path]:
    """Write a blinded rating sheet (CSV, one row per pair) and its key (JSON).

    Parameters
    ----------
    pairs : PairSet or path
        The pairs to validate.
    out : path
        The sheet (``.csv``) to hand to raters.
    key : path, optional
        Where to write the key (default ``OUT`` with ``.key.json`` for ``.csv``).  It records
        which side each row shows as ``text_a``; keep it away from the raters.
    rng : int, numpy.random.Generator or None
        Draws the side order of each pair (recorded in the key with the seed used).
    varieties : mapping, optional
        Names to show for background labels, on top of :data:`VARIETY_NAMES`.

    Returns
    -------
    (pathlib.Path, pathlib.Path)
        The sheet and the key.

    Examples
    --------
    >>> import csv, tempfile, pathlib
    >>> tmp = tempfile.TemporaryDirectory()
    >>> from ipcausal import PairSet
    >>> from ipcausal.interop import export_validation
    >>> ps = PairSet.from_records([{"pair_id": "e1", "background_i": "sae", "background_j": "aae",
    ...                             "x_i": "She is always working late.", "x_j": "She be working late."}])
    >>> sheet, key = export_validation(ps, pathlib.Path(tmp.name) / "sheet.csv", rng=1)
    >>> row = next(csv.DictReader(sheet.open()))
    >>> row["target_variety"], sorted([row["text_a"], row["text_b"]])[0]
    ('African-American English', 'She be working late.')
    >>> key.name
    'sheet.key.json'
    >>> tmp.cleanup()
    """
    ps = pairs_of(pairs)
    sheet = as_path(out, "out")
    if sheet.suffix.lower() != ".csv":
        raise ValueError(f"`out`: the rating sheet is written as .csv, got {sheet.name!r}")
    names = dict(VARIETY_NAMES)
    if varieties is not None:
        if not isinstance(varieties, Mapping) or not all(isinstance(k, str) and isinstance(v, str)
                                                          for k, v in varieties.items()):
            raise TypeError("`varieties` must map background labels to names (str to str)")
        names.update(varieties)
    if isinstance(rng, bool):
        raise TypeError(f"`rng` must be None, a non-negative int or a numpy.random.Generator, got {rng!r}")
    seed = int(as_generator(rng).integers(0, 2**63 - 1))
    swapped = as_generator(seed).integers(0, 2, size=len(ps)).astype(bool)
    key_path = as_path(key, "key") if key is not None else _key_path(sheet)
    if key_path.resolve() == sheet.resolve():
        raise ValueError("`key` must differ from `out`")
    items = []
    sheet.parent.mkdir(parents=True, exist_ok=True)
    with open(sheet, "w", encoding="utf-8", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(SHEET_COLUMNS)
        for k, (rec, swap) in enumerate(zip(ps.records(), swapped), 1):
            a, b = ("j", "i") if swap else ("i", "j")
            w.writerow([k, names.get(rec["background_j"], rec["background_j"]), rec[f"x_{a}"], rec[f"x_{b}"],
                        "", "", ""])
            items.append({"item": k, "pair_id": rec["pair_id"], "a": a})
    key_path.parent.mkdir(parents=True, exist_ok=True)
    key_path.write_text(json.dumps({"format": _KEY_FORMAT, "version": 1, "sheet": sheet.name, "seed": seed,
                                    "items": items}, indent=1) + "\n", encoding="utf-8")
    return sheet, key_path


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


def _read_key(path: Path) -> dict[int, tuple[str, str]]:
    if not path.is_file():
        raise ValueError(f"`key`: no such file: {path} (export_validation writes SHEET.key.json; pass `key`)")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"`key`: {path} is not JSON ({exc.msg})") from None
    if not isinstance(data, dict) or data.get("format") != _KEY_FORMAT:
        raise ValueError(f"`key`: {path} is not a validation key written by export_validation")
    return {int(it["item"]): (str(it["pair_id"]), str(it["a"])) for it in data["items"]}


def _yes_no(value: str, where: str) -> bool | None:
    v = value.strip().lower()
    if not v:
        return None
    if v in _YES:
        return True
    if v in _NO:
        return False
    raise ValueError(f"{where}: `same_meaning` must be yes or no (or empty), got {value!r}")


def _choice(value: str, where: str) -> str | None:
    v = value.strip().lower()
    if not v:
        return None
    if v not in _CHOICES:
        raise ValueError(f"{where}: `sounds_like_target` must be A, B, both or neither (or empty), got {value!r}")
    return v


def _read_sheet(path: Path, key: dict[int, tuple[str, str]], texts: dict[str, tuple[str, str]]
                ) -> dict[str, tuple[bool | None, str | None, str]]:
    """pair_id -> (same meaning?, chosen side "i"/"j"/"both"/"neither", comment)."""
    if not path.is_file():
        raise ValueError(f"`sheets`: no such file: {path}")
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        missing = [c for c in SHEET_COLUMNS if c != "comment" and c not in (reader.fieldnames or [])]
        if missing:
            raise ValueError(f"`sheets`: {path.name} lacks column(s) {missing}; is it a sheet from export_validation?")
        out: dict[str, tuple[bool | None, str | None, str]] = {}
        for lineno, row in enumerate(reader, 2):
            where = f"{path.name}:{lineno}"
            try:
                item = int(str(row["item"]).strip())
            except ValueError:
                raise ValueError(f"{where}: `item` must be the row's number, got {row['item']!r}") from None
            if item not in key:
                raise ValueError(f"{where}: item {item} is not in the key (a sheet from another export?)")
            pid, a = key[item]
            if pid in out:
                raise ValueError(f"{where}: item {item} appears twice")
            if pid in texts:
                xi, xj = texts[pid]
                want = (xi, xj) if a == "i" else (xj, xi)
                if (_norm(row["text_a"] or ""), _norm(row["text_b"] or "")) != (_norm(want[0]), _norm(want[1])):
                    raise ValueError(f"{where}: the texts of item {item} differ from pair {pid!r} "
                                     "(edited, or a sheet or key from another export?)")
            choice = _choice(row["sounds_like_target"] or "", where)
            if choice in ("a", "b"):
                choice = a if choice == "a" else ("j" if a == "i" else "i")
            out[pid] = (_yes_no(row["same_meaning"] or "", where), choice, (row.get("comment") or "").strip())
    return out


def import_validation(sheets: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
                      pairs: PairSet | str | os.PathLike[str], *, key: str | os.PathLike[str] | None = None,
                      drop: bool = False) -> ValidationResult:
    """Attach the ratings of one sheet per rater to the pairs; flag or drop rejected pairs.

    Parameters
    ----------
    sheets : path or sequence of paths
        Filled-in copies of the sheet from :func:`export_validation`, one per rater (rater 1,
        2, … in this order).  Rows may be re-ordered or deleted; texts must stay as exported.
    pairs : PairSet or path
        The pairs that were exported (later columns such as answers may have been added).
    key : path, optional
        The key written with the sheet (default: ``SHEET.key.json`` beside the first sheet).
    drop : bool
        Drop rejected pairs (default: keep them, flagged in ``validation``).

    Returns
    -------
    ValidationResult
        ``.pairs`` gains, per rater r, ``rating_meaning_r`` (True/False/None),
        ``rating_variety_r`` (True when the rater picked the text written for the target
        variety), ``rating_choice_r`` (the side picked: ``"i"``, ``"j"``, ``"both"``,
        ``"neither"``) and ``rating_comment_r``; and ``validation`` — ``"rejected"`` when any
        rater said the meaning changed or did not pick the target text, ``"ok"`` when both
        questions were answered and nobody rejected, else ``"unrated"`` — with the reasons in
        ``validation_problems``.  ``.agreement`` holds raw agreement and Cohen's kappa per
        question for every two raters (over the pairs both rated).
    """
    paths = [sheets] if isinstance(sheets, (str, os.PathLike)) else list(sheets) \
        if isinstance(sheets, Sequence) else None
    if not paths or not all(isinstance(p, (str, os.PathLike)) for p in paths):
        raise TypeError("`sheets` must be a path or a non-empty sequence of paths to rating sheets")
    if not isinstance(drop, bool):
        raise TypeError(f"`drop` must be True or False, got {drop!r}")
    ps = pairs_of(pairs)
    sheet_paths = [Path(p) for p in paths]
    key_map = _read_key(as_path(key, "key") if key is not None else _key_path(sheet_paths[0]))
    texts = {r["pair_id"]: (r["x_i"], r["x_j"]) for r in ps.records()}
    unknown = sorted({pid for pid, _ in key_map.values()} - set(texts))
    if unknown:
        raise ValueError(f"`pairs`: the key names pair(s) {unknown[:5]} that the pairs do not have")
    ratings = [_read_sheet(p, key_map, texts) for p in sheet_paths]
    ids = list(texts)
    cols: dict[str, list[Any]] = {}
    for r, rated in enumerate(ratings, 1):
        got = [rated.get(pid, (None, None, "")) for pid in ids]
        cols[f"rating_meaning_{r}"] = [g[0] for g in got]
        cols[f"rating_variety_{r}"] = [None if g[1] is None else g[1] == "j" for g in got]
        cols[f"rating_choice_{r}"] = [g[1] for g in got]
        cols[f"rating_comment_{r}"] = [g[2] or None for g in got]
    status, problems = [], []
    for k in range(len(ids)):
        why = []
        for r in range(1, len(ratings) + 1):
            if cols[f"rating_meaning_{r}"][k] is False:
                why.append(f"meaning changed (rater {r})")
            if cols[f"rating_variety_{r}"][k] is False:
                why.append(f"target variety not recognised (rater {r}: {cols[f'rating_choice_{r}'][k]})")
        rated_m = any(cols[f"rating_meaning_{r}"][k] is not None for r in range(1, len(ratings) + 1))
        rated_v = any(cols[f"rating_variety_{r}"][k] is not None for r in range(1, len(ratings) + 1))
        status.append("rejected" if why else "ok" if rated_m and rated_v else "unrated")
        problems.append("; ".join(why) or None)
    out = ps.with_columns(**cols, validation=status, validation_problems=problems)
    agreement = []
    for a, b in combinations(range(1, len(ratings) + 1), 2):
        for q in QUESTIONS:
            col_a, col_b = cols[f"rating_{q}_{a}"], cols[f"rating_{q}_{b}"]
            both = [(x, y) for x, y in zip(col_a, col_b) if x is not None and y is not None]
            if both:
                xs, ys = [x for x, _ in both], [y for _, y in both]
                agreement.append(Agreement(q, a, b, len(both), sum(x == y for x, y in both) / len(both),
                                           cohen_kappa(xs, ys)))
    n_rej = status.count("rejected")
    if drop:
        out = out.filter([s != "rejected" for s in status])
    return ValidationResult(out, status.count("ok"), n_rej, status.count("unrated"), n_rej if drop else 0,
                            tuple(agreement), tuple(str(p) for p in sheet_paths))
