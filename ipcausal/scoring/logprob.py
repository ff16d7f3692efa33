"""The ``logprob`` scorer: the probability the model gives to each answer option (matched-guise outcome).

Instead of parsing one sampled answer, ask the backend for the log-probability of every
option's continuation given the prompt, normalise over the options (a softmax of the summed
token log-probabilities), and score each prompt by the probability of the **correct** option:
a continuous outcome in [0, 1] whose paired Δ is a difference of probabilities, so every test
of :func:`ipcausal.test` applies.  It reads the **prompts** ``x_i``/``x_j`` (and ``options``,
``correct_option``), never the responses: the score is a model call, not a function of a text.

The continuations are the option numbers ``"1"``, ``"2"``, … by default (the prompts of
:func:`~ipcausal.interventions.belief_prompt` ask for "the number of your choice only"), or the
option texts with ``continuation="text"``.  The backend must offer ``option_logprobs`` (see
:class:`~ipcausal.backends.Backend`): ``local`` (llama.cpp in process), ``vllm`` (in process, through
``SamplingParams(prompt_logprobs=0)``), ``openai`` against a server
that honours legacy completions with ``echo`` and ``logprobs``, and the SCM simulator.  Any
other backend is refused with a message naming it before any request is sent.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import numpy as np

from ipcausal.backends.base import Request, messages_of, supports_option_logprobs
from ipcausal.pairs import PairSet
from ipcausal.scoring._common import OK, is_missing

__all__ = ["CONTINUATIONS", "require_option_logprobs", "option_continuations", "option_distribution",
           "correct_index", "describe", "logprob_scores", "score_logprob"]

CONTINUATIONS: tuple[str, ...] = ("number", "text")
_CAN = "local (llama.cpp), vllm, openai (a server honouring completions echo+logprobs) or simulated"


def require_option_logprobs(backend: Any, scorer: str = "logprob") -> None:
    """Raise ``ValueError`` naming ``backend`` and ``scorer`` unless the backend offers ``option_logprobs``.

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> require_option_logprobs(SimulatedModel())
    >>> require_option_logprobs(object())
    Traceback (most recent call last):
    ...
    ValueError: scorer 'logprob' needs option log-probabilities, which backend 'object' (model '?') cannot give; use a local (llama.cpp), vllm, openai (a server honouring completions echo+logprobs) or simulated backend
    """
    if supports_option_logprobs(backend):
        return
    kind = str(getattr(backend, "kind", type(backend).__name__))
    model = str(getattr(backend, "model", "?"))
    why = ""
    if kind == "cached" or type(backend).__name__ == "CachedBackend":
        why = " (a cached backend does not pass it on: give the uncached backend)"
    raise ValueError(f"scorer {scorer!r} needs option log-probabilities, which backend {kind!r} (model {model!r}) "
                     f"cannot give{why}; use a {_CAN} backend")


def _option_list(value: Any, row: int) -> list[str]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except json.JSONDecodeError:
            value = None
    if isinstance(value, np.ndarray):
        value = value.tolist()
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) and v for v in value):
        raise ValueError(f"column `options` must hold a non-empty list of option texts; bad at row {row}")
    return list(value)


def option_continuations(options: Sequence[str], continuation: str = "number") -> list[str]:
    """The continuation scored for each option: its number from 1 (``"number"``) or its text (``"text"``).

    Examples
    --------
    >>> option_continuations(["Sydney", "Canberra"]), option_continuations(["Sydney", "Canberra"], "text")
    (['1', '2'], ['Sydney', 'Canberra'])
    """
    if continuation not in CONTINUATIONS:
        raise ValueError(f"`continuation` must be one of {CONTINUATIONS}, got {continuation!r}")
    if isinstance(options, str) or not isinstance(options, Sequence) or not options:
        raise ValueError("`options` must be a non-empty sequence of option texts")
    return [str(k) for k in range(1, len(options) + 1)] if continuation == "number" else list(options)


def option_distribution(backend: Any, prompt: str, options: Sequence[str], *, continuation: str = "number",
                        system: str | None = None) -> np.ndarray:
    """The model's probability of each option given ``prompt``, normalised over the options.

    ``softmax(option_logprobs(prompt, continuations))``: the log-probabilities of the option
    continuations (summed over their tokens) renormalised so that the options' probabilities sum to 1.

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> p = option_distribution(SimulatedModel(), "Pick one.", ["red", "blue", "green"])
    >>> p.shape, round(float(p.sum()), 12)
    ((3,), 1.0)
    """
    require_option_logprobs(backend)
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("`prompt` must be a non-empty text")
    conts = option_continuations(options, continuation)
    lp = np.asarray(backend.option_logprobs(Request(messages_of(prompt, system)), conts), dtype=np.float64)
    if lp.shape != (len(conts),) or not np.all(np.isfinite(lp) | (lp == -np.inf)) or np.all(lp == -np.inf):
        raise ValueError(f"backend {getattr(backend, 'kind', '?')!r} returned bad option log-probabilities {lp!r}")
    lp = lp - lp.max()
    e = np.exp(lp)
    return e / e.sum()


def correct_index(correct: Any, options: Sequence[str]) -> int:
    """0-based index of the correct option: ``correct`` is its number from 1 or its text.

    Examples
    --------
    >>> correct_index(2, ["Sydney", "Canberra"]), correct_index("canberra", ["Sydney", "Canberra"])
    (1, 1)
    """
    if isinstance(correct, np.generic):
        correct = correct.item()
    if isinstance(correct, str):
        hits = [k for k, o in enumerate(options) if o.strip().lower() == correct.strip().lower()]
        if len(hits) != 1:
            raise ValueError(f"`correct_option` {correct!r} is not exactly one of the options {list(options)}")
        return hits[0]
    if isinstance(correct, (int, float)) and not isinstance(correct, bool) and float(correct).is_integer():
        k = int(correct) - 1
        if not 0 <= k < len(options):
            raise ValueError(f"`correct_option` number {k + 1} is outside 1..{len(options)}")
        return k
    raise TypeError(f"`correct_option` must be an option number (from 1) or text, got {correct!r}")


def logprob_scores(frame: Any, backend: Any, *, continuation: str = "number",
                   system: str | None = None) -> tuple[list[float], list[float]]:
    """P(correct option | x_i) and P(correct option | x_j) for every row of ``frame``.

    ``frame``: a DataFrame with ``x_i``, ``x_j``, ``options`` and ``correct_option``.  The backend's
    capability and every row are checked before the first request; a prompt met twice is asked once.
    """
    require_option_logprobs(backend)
    if continuation not in CONTINUATIONS:
        raise ValueError(f"`continuation` must be one of {CONTINUATIONS}, got {continuation!r}")
    for col in ("x_i", "x_j", "options", "correct_option"):
        if col not in frame.columns:
            raise ValueError(f"scorer 'logprob' needs the column `{col}` in `pairs`")
    rows = []
    for r in range(len(frame)):
        opts = _option_list(frame["options"].iat[r], r)
        corr = frame["correct_option"].iat[r]
        if is_missing(corr):
            raise ValueError(f"column `correct_option` is missing at row {r}")
        rows.append((opts, correct_index(corr, opts)))
    memo: dict[tuple[str, tuple[str, ...]], np.ndarray] = {}

    def prob(prompt: str, opts: list[str], k: int) -> float:
        key = (prompt, tuple(opts))
        if key not in memo:
            memo[key] = option_distribution(backend, prompt, opts, continuation=continuation, system=system)
        return float(memo[key][k])

    si = [prob(frame["x_i"].iat[r], o, k) for r, (o, k) in enumerate(rows)]
    sj = [prob(frame["x_j"].iat[r], o, k) for r, (o, k) in enumerate(rows)]
    return si, sj


def score_logprob(pairs: PairSet, backend: Any, *, continuation: str = "number",
                  system: str | None = None) -> PairSet:
    """Score every pair by the probability the model gives to the correct option (``score_i``, ``score_j``).

    Reads the prompts ``x_i``/``x_j``, ``options`` and ``correct_option`` (its number from 1 or its
    text); responses are not needed and not read.  Fails before any request when ``backend`` cannot
    give option log-probabilities.

    Parameters
    ----------
    pairs : PairSet
    backend : Backend
        One that offers ``option_logprobs`` (``local``, ``vllm``, ``openai`` with echo+logprobs, simulated).
    continuation : {"number", "text"}
        Score the option numbers ``"1"``, ``"2"``, … (what the echo prompts ask for) or the option texts.
    system : str, optional
        The system message the prompts were run with.

    Returns
    -------
    PairSet
        The pairs with ``score_i``, ``score_j`` in [0, 1], ``status_i``/``status_j`` (``"ok"``) and
        ``scorer``; ready for :func:`ipcausal.test`.

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.testing import SimulatedModel
    >>> ps = ipcausal.PairSet.from_records([
    ...     {"pair_id": i, "background_i": "american", "background_j": "british",
    ...      "x_i": f"Question {i}? [american]", "x_j": f"Question {i}? [british]",
    ...      "options": ["yes", "no"], "correct_option": 1} for i in range(3)])
    >>> out = score_logprob(ps, SimulatedModel(effect=1.0))
    >>> bool(((out["score_i"] >= 0) & (out["score_j"] <= 1)).all())
    True
    """
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    if len(pairs) == 0:
        raise ValueError("`pairs` is empty")
    df = pairs.to_frame()
    si, sj = logprob_scores(df, backend, continuation=continuation, system=system)
    df["score_i"], df["score_j"] = si, sj
    df["status_i"] = df["status_j"] = OK
    df["scorer"] = describe(continuation)
    return PairSet.from_frame(df)


def describe(continuation: str = "number") -> str:
    """The scorer's description for reports."""
    return f"logprob: P(correct option) normalised over the options ({continuation} continuations)"

