"""Shared plumbing for the LLM-based generators: asking, cleaning the output, the result record."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from ipcausal.backends.base import Backend, GenerationConfig, Request, messages_of

__all__ = ["GeneratedText", "ask", "clean_output", "check_backend", "check_attempts"]

_PREAMBLE = re.compile(
    r"^\s*(sure|okay|ok|certainly|of course|here(?:'s| is| are)|rewritten(?: text| prompt| question)?|"
    r"rephrased(?: text| prompt| question)?|output|answer|text)\b[^:\n]*:\s*",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class GeneratedText:
    """The record an LLM-based generator returns for one input (successful or not).

    Attributes
    ----------
    text : str or None
        The accepted output, or ``None`` when every attempt failed validation.
    original : str
        The input.
    generator : str
        Which generator made it (e.g. ``"style_transfer:aae"``).
    attempts : int
        How many generations were tried.
    failures : tuple of str
        One reason per rejected attempt (empty when the first attempt passed).
    similarity : float or None
        Embedding cosine similarity of the accepted output to the input (``None`` when
        the embedding model is not installed or nothing was accepted).
    extra : dict
        Generator-specific evidence (markers found, the counterpart text, ...).
    """

    text: str | None
    original: str
    generator: str
    attempts: int
    failures: tuple[str, ...] = ()
    similarity: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        """True when an output passed every check."""
        return self.text is not None

    def to_dict(self) -> dict[str, Any]:
        return {"text": self.text, "original": self.original, "generator": self.generator,
                "attempts": self.attempts, "failures": list(self.failures), "similarity": self.similarity,
                "extra": dict(self.extra)}


def check_backend(backend: object) -> Backend:
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend (attributes `kind`, `model`, "
                        f"method `generate`), got {type(backend).__name__}")
    return backend


def check_attempts(max_attempts: object) -> int:
    if not isinstance(max_attempts, int) or isinstance(max_attempts, bool) or max_attempts < 1:
        raise ValueError(f"`max_attempts` must be a positive integer, got {max_attempts!r}")
    return max_attempts


def ask(backend: Backend, prompt: str, system: str, *, attempt: int, seed: int, max_tokens: int) -> str:
    """One generation: greedy on the first attempt, sampled (temperature 0.8) with a new seed on retries."""
    cfg = GenerationConfig(max_tokens=max_tokens, temperature=0.0 if attempt == 0 else 0.8,
                           seed=int(seed) + attempt, top_p=1.0 if attempt == 0 else 0.95)
    (resp,) = backend.generate([Request(messages_of(prompt, system), cfg)])
    return resp.text


def clean_output(text: str) -> str:
    """Strip a chatty preamble ("Sure! Here is the rewritten text:"), quotes and trailing notes."""
    t = (text or "").strip()
    for _ in range(2):
        t = _PREAMBLE.sub("", t, count=1).strip()
    paras = [p.strip() for p in re.split(r"\n\s*\n", t) if p.strip()]
    if paras:
        t = paras[0]
        if len(paras) > 1 and t.endswith(":"):  # a heading line, take the next paragraph
            t = paras[1]
    t = t.strip().strip('"“”\'`').strip()
    t = re.sub(r"\s*\((?:note|this)[^)]*\)\s*$", "", t, flags=re.IGNORECASE)
    return " ".join(t.split())
