"""The one backend protocol: a batch of chat requests in, one response record per request out.

Every model backend (``local`` llama.cpp, ``openai`` and any OpenAI-compatible server,
``vllm``, the SCM simulator in :mod:`ipcausal.testing`) implements :class:`Backend`.
Generators, judges and the run stage only ever call :meth:`Backend.generate` (or the
:func:`chat` convenience wrapper).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable

__all__ = ["GenerationConfig", "Request", "Choice", "Response", "Backend", "BackendError", "chat", "messages_of"]

_ROLES = ("system", "user", "assistant")


class BackendError(RuntimeError):
    """A backend could not produce a response (after its retries)."""


@dataclass(frozen=True)
class GenerationConfig:
    """Generation settings sent with every request (all of them enter the cache key).

    Parameters
    ----------
    max_tokens : int
        Largest number of generated tokens.
    temperature, top_p : float
        Sampling settings; ``temperature=0`` is greedy decoding.
    seed : int or None
        Per-request sampling seed (servers that honour it are reproducible).
    stop : tuple of str
        Stop sequences.
    n : int
        Number of samples per request (the backend loops when a server ignores ``n``).
    logprobs : bool
        Ask for token log-probabilities.
    repeat_penalty : float
        Sent explicitly, because llama.cpp's server and in-process defaults differ.
    """

    max_tokens: int = 256
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int | None = 0
    stop: tuple[str, ...] = ()
    n: int = 1
    logprobs: bool = False
    repeat_penalty: float = 1.0

    def __post_init__(self) -> None:
        if not isinstance(self.max_tokens, int) or isinstance(self.max_tokens, bool) or self.max_tokens < 1:
            raise ValueError(f"`max_tokens` must be a positive integer, got {self.max_tokens!r}")
        if not isinstance(self.temperature, (int, float)) or not 0.0 <= float(self.temperature) <= 5.0:
            raise ValueError(f"`temperature` must be a number in [0, 5], got {self.temperature!r}")
        if not isinstance(self.top_p, (int, float)) or not 0.0 < float(self.top_p) <= 1.0:
            raise ValueError(f"`top_p` must be in (0, 1], got {self.top_p!r}")
        if self.seed is not None and (not isinstance(self.seed, int) or isinstance(self.seed, bool)):
            raise ValueError(f"`seed` must be an integer or None, got {self.seed!r}")
        if isinstance(self.stop, str) or not all(isinstance(s, str) for s in self.stop):
            raise ValueError("`stop` must be a tuple of strings")
        object.__setattr__(self, "stop", tuple(self.stop))
        if not isinstance(self.n, int) or isinstance(self.n, bool) or self.n < 1:
            raise ValueError(f"`n` must be a positive integer, got {self.n!r}")
        if not isinstance(self.repeat_penalty, (int, float)) or float(self.repeat_penalty) <= 0:
            raise ValueError(f"`repeat_penalty` must be positive, got {self.repeat_penalty!r}")

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["stop"] = list(self.stop)
        return d


def messages_of(prompt: str | Sequence[Mapping[str, str]], system: str | None = None) -> tuple[dict[str, str], ...]:
    """Normalise a prompt (plain text or chat messages) to a tuple of ``{"role", "content"}`` dicts."""
    if isinstance(prompt, str):
        msgs: list[dict[str, str]] = [{"role": "user", "content": prompt}]
    elif isinstance(prompt, Sequence):
        msgs = []
        for m in prompt:
            if not isinstance(m, Mapping) or set(m) - {"role", "content"} or "role" not in m or "content" not in m:
                raise ValueError("`messages` must be dicts with exactly the keys 'role' and 'content'")
            if m["role"] not in _ROLES or not isinstance(m["content"], str):
                raise ValueError(f"`messages`: role must be one of {_ROLES} and content text, got {dict(m)!r}")
            msgs.append({"role": m["role"], "content": m["content"]})
    else:
        raise TypeError(f"`prompt` must be text or a sequence of chat messages, got {type(prompt).__name__}")
    if not msgs:
        raise ValueError("`messages` must not be empty")
    if system is not None:
        msgs.insert(0, {"role": "system", "content": system})
    return tuple(msgs)


@dataclass(frozen=True)
class Request:
    """One chat request: messages plus generation settings."""

    messages: tuple[dict[str, str], ...]
    config: GenerationConfig = field(default_factory=GenerationConfig)

    def __post_init__(self) -> None:
        object.__setattr__(self, "messages", messages_of(list(self.messages)))
        if not isinstance(self.config, GenerationConfig):
            raise TypeError("`config` must be a GenerationConfig")


@dataclass(frozen=True)
class Choice:
    """One generated sample."""

    text: str
    finish_reason: str | None = None
    logprobs: tuple[float, ...] | None = None
    tokens: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Response:
    """What a backend returns for one :class:`Request` (``len(choices) == request.config.n``)."""

    choices: tuple[Choice, ...]
    model: str
    fingerprint: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False

    @property
    def text(self) -> str:
        """The first sample's text."""
        return self.choices[0].text


@runtime_checkable
class Backend(Protocol):
    """A model backend: one required batch method.

    ``generate`` returns one :class:`Response` per request, in order.  A request that
    fails after the backend's own retries raises :class:`BackendError` (batch-level
    callers such as :func:`ipcausal.run` isolate failures per request).
    """

    kind: str
    model: str

    def generate(self, requests: Sequence[Request]) -> list[Response]: ...


def chat(
    backend: Backend,
    prompt: str | Sequence[Mapping[str, str]],
    *,
    system: str | None = None,
    config: GenerationConfig | None = None,
) -> str:
    """Send one prompt to ``backend`` and return the first sample's text.

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel  # doctest: +SKIP
    >>> chat(SimulatedModel(), "Hello")              # doctest: +SKIP
    """
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend (a `generate` method)")
    req = Request(messages_of(prompt, system), config or GenerationConfig())
    (resp,) = backend.generate([req])
    return resp.text
