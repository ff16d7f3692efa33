"""Can the model infer the background?  The probe (X → B), beside the study's "does it use it" (B → Y).

:func:`probe` shows the model each distinct prompt of a PairSet (both sides of every pair,
each (text, background) once) and asks which of the backgrounds its writer most likely has:
a multiple choice among the backgrounds, the options' order shuffled per prompt with the
seed, the answer read by :func:`parse_choice` (a letter, "Answer: B", "(B)", or the name of
exactly one option).  Answers that name no option, or several, are counted as unparseable
and left out of the test; requests that fail are counted apart.  The statistics are
:func:`ipcausal.stats.binomial.binomial_test`: the k correct of n answered against chance
1/|B| (one-sided "greater" by default: *can* it infer better than chance?) and the exact
(Clopper–Pearson) interval of its accuracy.

A model shown to infer the background with no IP shown can still be pushed into IP.  A probe
that does not reject is not evidence that the model cannot infer it, and the probe measures
*naming* the background when asked: a model can use a cue it does not name.

Every probe prompt starts with :data:`PROBE_MARKER` and lays the message and the options out
in a fixed format (:func:`probe_prompt`); :func:`read_probe_prompt` reads it back, which is
how the SCM simulator (:class:`ipcausal.testing.SimulatedModel` with ``probe_accuracy=``)
recognises a probe and answers it with a known accuracy.
"""

from __future__ import annotations

import os
import re
import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ipcausal.backends.base import Backend, GenerationConfig, Request, Response, generate_outcomes, messages_of
from ipcausal.pairs import PairSet
from ipcausal._validate import ALTERNATIVES, as_generator, choice, open_unit
from ipcausal.scoring.read import read_choice
from ipcausal.stats.binomial import binomial_test
from ipcausal.stats.results import Result

__all__ = ["probe", "ProbeResult", "probe_prompt", "read_probe_prompt", "parse_choice", "PROBE_MARKER",
           "BACKGROUND_LABELS"]

#: The first line of every probe prompt (the simulator looks for it).
PROBE_MARKER = "[background probe]"
_START, _END = "--- message start ---", "--- message end ---"
_LETTERS = string.ascii_uppercase
_OPTION = re.compile(r"^([A-Z])\. (.+)$", re.M)
#: What an option says beside its background's name, for the built-in cases' backgrounds (a
#: model asked to choose among "sae", "aae" and "esl" is asked about abbreviations, not
#: backgrounds); :func:`probe`'s ``labels`` adds to or replaces these.
BACKGROUND_LABELS: dict[str, str] = {
    "us": "an American English speaker", "uk": "a British English speaker",
    "american": "an American English speaker", "british": "a British English speaker",
    "sae": "a writer of Standard American English", "aae": "a speaker of African American English",
    "esl": "a learner of English as a second language",
    "esl_light": "a learner of English who makes a few errors",
    "esl_heavy": "a learner of English who makes many errors",
    "true_belief": "someone who holds a true belief about the topic",
    "false_belief": "someone who holds a false belief about the topic",
    "young": "a young adult (twenties or thirties)", "old": "an older adult (sixties or seventies)",
}
#: The probe's generation settings unless ``config`` is given: greedy, a short answer.
PROBE_CONFIG = GenerationConfig(max_tokens=16, temperature=0.0, seed=0)


def probe_prompt(text: str, options: Sequence[str], labels: dict[str, str] | None = None) -> str:
    """The probe prompt for the message ``text`` with the lettered ``options`` (in this order).

    An option with a label reads ``"<name> (<label>)"``.

    Examples
    --------
    >>> print(probe_prompt("What colour is the sky?", ["british", "american"], {"british": "from the UK"}))
    [background probe]
    Someone wrote the message below to an assistant. Which of these backgrounds does the writer most likely have?
    --- message start ---
    What colour is the sky?
    --- message end ---
    A. british (from the UK)
    B. american
    Reply with the letter of one option and nothing else.
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("`text` must be a non-empty string")
    if len(options) > len(_LETTERS):
        raise ValueError(f"`options`: at most {len(_LETTERS)} options, got {len(options)}")
    lines = [PROBE_MARKER,
             "Someone wrote the message below to an assistant. Which of these backgrounds does the writer most "
             "likely have?", _START, text, _END]
    labels = labels or {}
    lines += [f"{_LETTERS[i]}. {o}" + (f" ({labels[o]})" if labels.get(o) else "") for i, o in enumerate(options)]
    lines.append("Reply with the letter of one option and nothing else.")
    return "\n".join(lines)


def read_probe_prompt(prompt: str) -> tuple[str, tuple[str, ...]] | None:
    """``(message, options)`` of a prompt made by :func:`probe_prompt`, or ``None`` for any other text.

    The options are the background names, without their labels.

    Examples
    --------
    >>> read_probe_prompt(probe_prompt("Hi", ["a", "b"], {"a": "first"}))
    ('Hi', ('a', 'b'))
    >>> read_probe_prompt(probe_prompt("Hi", ["young", "old"], {"young": "a young adult (twenties)"}))
    ('Hi', ('young', 'old'))
    >>> read_probe_prompt("Hi") is None
    True
    """
    if not isinstance(prompt, str) or PROBE_MARKER not in prompt:
        return None
    body = prompt[prompt.index(PROBE_MARKER):]
    start, end = body.find(_START + "\n"), body.rfind("\n" + _END + "\n")
    if start < 0 or end < start:
        return None
    message = body[start + len(_START) + 1:end]
    tail = body[end + len(_END) + 2:]
    found = _OPTION.findall(tail)
    if len(found) < 2 or [a for a, _ in found] != list(_LETTERS[:len(found)]):
        return None
    return message, tuple(_without_label(o) for _, o in found)


def _without_label(option: str) -> str:
    """An option's background name: the text before its final, balanced ``" (label)"`` (labels may nest)."""
    if not option.endswith(")"):
        return option
    depth = 0
    for k in range(len(option) - 1, 0, -1):
        depth += {")": 1, "(": -1}.get(option[k], 0)
        if depth == 0:
            return option[:k - 1] if option[k - 1:k + 1] == " (" else option
    return option


def parse_choice(answer: str, options: Sequence[str], labels: dict[str, str] | None = None) -> int | None:
    """The index of the option ``answer`` chooses, or ``None`` when it names none or several.

    The scorers' reader, :func:`ipcausal.scoring.read.read_choice` (an explicit "answer/option/
    choice/letter X"; one letter in parentheses; an answer that is or starts with one letter, "B",
    "(b)", "B."; else exactly one option named, by its text or its ``labels``); ``None`` for a
    reply that is not text.

    Examples
    --------
    >>> opts = ["american", "british", "learner english"]
    >>> [parse_choice(a, opts) for a in ["B", "Answer: (c)", "A) american", "Probably British.", "A or B?"]]
    [1, 2, 0, 1, None]
    """
    if not isinstance(answer, str):
        return None
    return read_choice(answer, options, labels=labels)


@dataclass(frozen=True)
class ProbeResult(Result):
    """Result of :func:`probe`: can the model name the background a prompt implies?

    ``correct`` of ``n`` answered prompts were right (``accuracy`` = correct / n); ``unparseable``
    answers named no option or several, ``failed`` requests got no response (both left out of
    n).  ``chance`` = 1/|B|; ``pvalue`` the exact binomial test of accuracy = chance against
    ``alternative``; ``ci_low``/``ci_high`` the exact (Clopper–Pearson) interval of the
    accuracy at ``confidence_level``.  ``per_background`` maps each true background to its
    counts: ``n``, ``correct``, ``unparseable``, ``failed``, ``accuracy`` and ``answered``
    (how often each option was chosen: a row of the confusion matrix).
    """

    correct: int
    n: int
    unparseable: int
    failed: int
    accuracy: float
    chance: float
    pvalue: float
    ci_low: float
    ci_high: float
    confidence_level: float
    alternative: str
    method: str
    null_hypothesis: str
    backgrounds: tuple[str, ...]
    per_background: dict[str, dict[str, Any]]
    model: str
    seed: int | None = None

    def to_dict(self) -> dict[str, Any]:
        """The fields as plain, JSON-ready values (an accuracy of no answered prompt is ``None``)."""
        d = super().to_dict()
        if d["n"] == 0:
            d["accuracy"] = None
        return d

    @property
    def can_infer(self) -> bool:
        """Shorthand for ``pvalue <= 0.05`` (use ``pvalue`` for another level)."""
        return self.pvalue <= 0.05


def _items(pairs: PairSet, backgrounds: Any) -> tuple[list[tuple[str, str]], tuple[str, ...]]:
    """The distinct (text, true background) of both sides, and the backgrounds to offer."""
    df = pairs.to_frame()
    items = list(dict.fromkeys((str(x), str(b)) for s in ("i", "j")
                               for x, b in zip(df[f"x_{s}"], df[f"background_{s}"])))
    present = tuple(dict.fromkeys(b for _, b in items))
    if backgrounds is None:
        bgs = present
    else:
        if isinstance(backgrounds, str) or not isinstance(backgrounds, Sequence):
            raise TypeError("`backgrounds` must be a sequence of background names or None")
        bgs = tuple(str(b) for b in backgrounds)
        if len(set(bgs)) != len(bgs):
            raise ValueError(f"`backgrounds` must be distinct, got {list(bgs)}")
        missing = [b for b in present if b not in bgs]
        if missing:
            raise ValueError(f"`backgrounds` lacks {missing}, which the pairs use; give every background "
                             f"of the pairs ({list(present)}) or None")
    if len(bgs) > len(_LETTERS):
        raise ValueError(f"`backgrounds`: at most {len(_LETTERS)} options, got {len(bgs)}")
    return items, bgs


def _send(backend: Backend, reqs: list[Request], concurrency: int | None, cache: Any) -> list[Any]:
    if cache is None:
        return generate_outcomes(backend, reqs, concurrency=concurrency)
    from ipcausal.backends.cache import CachedBackend, ResponseCache

    if not isinstance(cache, (str, os.PathLike, ResponseCache)):
        raise TypeError(f"`cache` must be a path, a ResponseCache or None, got {type(cache).__name__}")
    store = cache if isinstance(cache, ResponseCache) else ResponseCache(cache)
    try:  # the wrapper is not closed: that would close the caller's backend
        return generate_outcomes(CachedBackend(backend, store), reqs, concurrency=concurrency)
    finally:
        if store is not cache:
            store.close()


def probe(
    pairs: PairSet | str | os.PathLike[str],
    backend: Backend,
    *,
    backgrounds: Sequence[str] | None = None,
    rng: int | Any | None = None,
    config: GenerationConfig | None = None,
    system: str | None = None,
    alternative: str = "greater",
    confidence_level: float = 0.95,
    concurrency: int | None = None,
    cache: str | os.PathLike[str] | Any | None = None,
    labels: Mapping[str, str] | None = None,
) -> ProbeResult:
    """Ask the model which background each prompt implies; test its accuracy against chance.

    Parameters
    ----------
    pairs : PairSet or path
        Pairs with ``x_i``/``x_j`` and ``background_i``/``background_j``; every distinct
        (prompt, background) of both sides is probed once.
    backend : Backend
        Any backend (the probe is one more batch of chat requests).
    backgrounds : sequence of str, optional
        The options offered (default: the backgrounds the pairs use, in order of appearance);
        must include every background of the pairs.  Chance is 1 / len(backgrounds).
    rng : int, numpy.random.Generator or None
        Shuffles the options' order per prompt (an int makes the prompts reproducible).
    config : GenerationConfig, optional
        Generation settings (default :data:`PROBE_CONFIG`: greedy, 16 tokens).
    system : str, optional
        A system message put before each probe prompt.
    alternative : {"greater", "two-sided", "less"}
        H1 of the binomial test (default "greater": better than chance).
    confidence_level : float
        Of the Clopper–Pearson interval of the accuracy.
    concurrency : int, optional
        Requests in flight (backends that run one by one ignore it).
    cache : path, ResponseCache or None
        Keep the answers in this response cache (the one :func:`ipcausal.run` uses): probing
        again with the same seed and settings asks the model nothing new.
    labels : mapping of str to str, optional
        What each option says beside its background's name, over :data:`BACKGROUND_LABELS`
        (the built-in cases' backgrounds); an empty string shows the bare name.

    Returns
    -------
    ProbeResult

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> from ipcausal.study.probe import probe
    >>> sim = SimulatedModel(probe_accuracy=0.9, seed=1)
    >>> res = probe(sim.study(n=30, rng=0), sim, rng=0)
    >>> res.n, res.chance, res.pvalue < 1e-6, res.ci_low > 0.5
    (60, 0.5, True, True)
    """
    if isinstance(pairs, (str, os.PathLike)):
        pairs = PairSet.read(pairs)
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet or a path to one, got {type(pairs).__name__}")
    if len(pairs) == 0:
        raise ValueError("`pairs` is empty: there is nothing to probe")
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend (kind, model, generate)")
    config = PROBE_CONFIG if config is None else config
    if not isinstance(config, GenerationConfig):
        raise TypeError(f"`config` must be a GenerationConfig, got {type(config).__name__}")
    if system is not None and (not isinstance(system, str) or not system.strip()):
        raise ValueError("`system` must be a non-empty string or None")
    alternative = choice(alternative, "alternative", ALTERNATIVES)
    open_unit(confidence_level, "confidence_level")
    gen = as_generator(rng)
    seed = int(rng) if isinstance(rng, int) and not isinstance(rng, bool) else None
    if labels is not None and (not isinstance(labels, Mapping)
                               or not all(isinstance(k, str) and isinstance(v, str) for k, v in labels.items())):
        raise TypeError("`labels` must be a mapping of background name to label text, or None")
    names = {**BACKGROUND_LABELS, **dict(labels or {})}
    items, bgs = _items(pairs, backgrounds)
    names = {b: names[b] for b in bgs if names.get(b)}
    shown = [tuple(bgs[i] for i in gen.permutation(len(bgs))) for _ in items]
    reqs = [Request(messages_of(probe_prompt(text, opts, names), system), config)
            for (text, _), opts in zip(items, shown)]
    outcomes = _send(backend, reqs, concurrency, cache)

    per = {b: {"n": 0, "correct": 0, "unparseable": 0, "failed": 0, "answered": dict.fromkeys(bgs, 0)} for b in bgs}
    for (_, truth), opts, out in zip(items, shown, outcomes):
        row = per[truth]
        if not isinstance(out, Response) or not out.choices:
            row["failed"] += 1
            continue
        idx = parse_choice(out.choices[0].text, opts, names)
        if idx is None:
            row["unparseable"] += 1
            continue
        row["n"] += 1
        row["answered"][opts[idx]] += 1
        row["correct"] += opts[idx] == truth
    for row in per.values():
        row["accuracy"] = row["correct"] / row["n"] if row["n"] else None
    correct = sum(r["correct"] for r in per.values())
    n = sum(r["n"] for r in per.values())
    unparseable = sum(r["unparseable"] for r in per.values())
    failed = sum(r["failed"] for r in per.values())
    chance = 1.0 / len(bgs)
    model = str(getattr(backend, "model", "?"))
    text = (f"H0: the model names the background of a prompt no better than chance (each answered prompt "
            f"right with probability 1/{len(bgs)}, independently); unit: the prompt")
    if n == 0:
        return ProbeResult(correct=0, n=0, unparseable=unparseable, failed=failed, accuracy=float("nan"),
                           chance=chance, pvalue=1.0, ci_low=0.0, ci_high=1.0,
                           confidence_level=float(confidence_level), alternative=alternative,
                           method="exact-binomial", null_hypothesis=text, backgrounds=bgs, per_background=per,
                           model=model, seed=seed)
    res = binomial_test(correct, n, chance, alternative=alternative, confidence_level=confidence_level)
    return ProbeResult(correct=correct, n=n, unparseable=unparseable, failed=failed, accuracy=correct / n,
                       chance=chance, pvalue=res.pvalue, ci_low=res.ci_low, ci_high=res.ci_high,
                       confidence_level=res.confidence_level, alternative=alternative, method=res.method,
                       null_hypothesis=text, backgrounds=bgs, per_background=per, model=model, seed=seed)
