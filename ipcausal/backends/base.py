"""The one backend protocol: a batch of chat requests in, one response record per request out.

Every model backend (``local`` llama.cpp, ``openai`` and any OpenAI-compatible server,
``vllm``, the SCM simulator in :mod:`ipcausal.testing`) implements :class:`Backend`.
Generators, judges and the run stage only ever call :meth:`Backend.generate` (or the
:func:`chat` convenience wrapper).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, Union, runtime_checkable

from ipcausal.backends.breaker import Breaker

__all__ = [
    "GenerationConfig",
    "Request",
    "Choice",
    "Response",
    "Backend",
    "BackendBase",
    "BackendError",
    "Breaker",
    "Outcome",
    "Usage",
    "chat",
    "generate_outcomes",
    "messages_of",
    "supports_option_logprobs",
    "check_option_texts",
]

_ROLES = ("system", "user", "assistant")


class BackendError(RuntimeError):
    """A backend could not produce a response (after its retries).

    Parameters
    ----------
    message : str
        One line saying what went wrong (never contains an API key).
    retryable : bool
        Whether trying again later could succeed (rate limits, server errors, timeouts).
    """

    def __init__(self, message: str, *, retryable: bool = False) -> None:
        super().__init__(message)
        self.retryable = bool(retryable)


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
        if (
            not isinstance(self.temperature, (int, float))
            or isinstance(self.temperature, bool)
            or not 0.0 <= float(self.temperature) <= 5.0
        ):
            raise ValueError(f"`temperature` must be a number in [0, 5], got {self.temperature!r}")
        if not isinstance(self.top_p, (int, float)) or isinstance(self.top_p, bool) or not 0.0 < float(self.top_p) <= 1.0:
            raise ValueError(f"`top_p` must be in (0, 1], got {self.top_p!r}")
        if self.seed is not None and (
            not isinstance(self.seed, int) or isinstance(self.seed, bool) or not 0 <= self.seed < 2**31
        ):
            raise ValueError(f"`seed` must be an integer in [0, 2**31) or None, got {self.seed!r}")
        if (
            self.stop is None
            or isinstance(self.stop, (str, bytes))
            or not isinstance(self.stop, (tuple, list))
            or not all(isinstance(s, str) and s for s in self.stop)
        ):
            raise ValueError("`stop` must be a tuple of non-empty strings")
        object.__setattr__(self, "stop", tuple(self.stop))
        if not isinstance(self.n, int) or isinstance(self.n, bool) or self.n < 1:
            raise ValueError(f"`n` must be a positive integer, got {self.n!r}")
        if (
            not isinstance(self.repeat_penalty, (int, float))
            or isinstance(self.repeat_penalty, bool)
            or not float(self.repeat_penalty) > 0
        ):
            raise ValueError(f"`repeat_penalty` must be positive, got {self.repeat_penalty!r}")
        if not isinstance(self.logprobs, bool):
            raise ValueError(f"`logprobs` must be True or False, got {self.logprobs!r}")

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (``stop`` as a list)."""
        d = asdict(self)
        d["stop"] = list(self.stop)
        return d

    def sample_seed(self, index: int) -> int | None:
        """The seed used for sample ``index`` when samples are drawn one call at a time.

        Sample ``k`` of a request uses ``seed + k`` (``None`` stays ``None``), so looping over
        ``n`` single-sample calls gives ``n`` different, reproducible draws.

        Examples
        --------
        >>> GenerationConfig(seed=7).sample_seed(2)
        9
        """
        if not isinstance(index, int) or isinstance(index, bool) or index < 0:
            raise ValueError(f"`index` must be a non-negative integer, got {index!r}")
        return None if self.seed is None else (self.seed + index) % 2**31


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
    completion_tokens: int | None = None


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

    The built-in backends derive from :class:`BackendBase` and also offer
    ``generate_outcomes`` (failures returned per request, a callback as each request
    finishes), ``usage``, ``close()`` and the context-manager protocol; the module-level
    :func:`generate_outcomes` gives the per-request behaviour for any backend.

    Optional capability, **option log-probabilities** (used by the ``logprob`` scorer,
    :mod:`ipcausal.scoring.logprob`): a backend that can score given continuations defines
    ``option_logprobs(request, options) -> tuple[float, ...]``, the natural-log probability the
    model gives to each option text as the start of its reply to ``request`` (the sum of the
    option's token log-probabilities, conditioned on the prompt as the model sees it).  No
    text is generated.  A backend without the method (or with ``option_logprobs = None``)
    cannot; callers check that with :func:`supports_option_logprobs` before any request.
    Implemented by ``local`` (llama.cpp in process), ``vllm`` (in process, prompt log-probabilities),
    ``openai`` (servers that honour legacy completions with ``echo`` and ``logprobs``) and the SCM
    simulator.
    """

    kind: str
    model: str

    def generate(self, requests: Sequence[Request]) -> list[Response]: ...


def supports_option_logprobs(backend: Any) -> bool:
    """Whether ``backend`` offers ``option_logprobs`` (the optional capability of :class:`Backend`).

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> supports_option_logprobs(SimulatedModel()), supports_option_logprobs(object())
    (True, False)
    """
    return callable(getattr(backend, "option_logprobs", None))


def check_option_texts(options: Any) -> tuple[str, ...]:
    """Validate the ``options`` of ``option_logprobs``: a sequence of at least one non-empty text.

    Examples
    --------
    >>> check_option_texts(["1", "2"])
    ('1', '2')
    >>> check_option_texts("12")
    Traceback (most recent call last):
    ...
    TypeError: `options` must be a sequence of option texts, got str
    """
    if isinstance(options, (str, bytes)) or not isinstance(options, Sequence):
        raise TypeError(f"`options` must be a sequence of option texts, got {type(options).__name__}")
    opts = tuple(options)
    if not opts or not all(isinstance(o, str) and o for o in opts):
        raise ValueError(f"`options` must hold at least one non-empty text, got {opts!r}")
    return opts


Outcome = Union[Response, BackendError]
"""What one request ends as: a :class:`Response` or the :class:`BackendError` that stopped it."""

OnResult = Callable[[int, Outcome], None]


@dataclass(frozen=True)
class Usage:
    """Running totals of what a backend has done since it was created.

    Attributes
    ----------
    requests : int
        Requests answered (each with all its samples).
    failures : int
        Requests that ended in a :class:`BackendError`.
    prompt_tokens, completion_tokens : int
        Tokens reported by the model for the answered requests.
    """

    requests: int = 0
    failures: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        """``prompt_tokens + completion_tokens``."""
        return self.prompt_tokens + self.completion_tokens


class BackendBase:
    """Shared machinery for the built-in backends (subclass it; implement :meth:`_outcomes`).

    Subclasses implement ``_outcomes(requests, on_result, concurrency)``, which must call
    ``on_result(index, outcome)`` once per request as soon as that request is done (so that
    callers such as the cache can commit each response as it arrives) and return the
    outcomes in request order.  This class derives the protocol's :meth:`generate`, keeps a
    :class:`Usage` tally, and makes every backend a context manager that :meth:`close` s.
    """

    kind: str = "base"
    model: str = ""

    def __init__(self) -> None:
        self._usage_lock = threading.Lock()
        self._usage = Usage()
        self._closed = False

    # -- to implement ----------------------------------------------------------------
    def _outcomes(self, requests: Sequence[Request], on_result: OnResult, concurrency: int | None) -> list[Outcome]:
        raise NotImplementedError

    # -- protocol ----------------------------------------------------------------------
    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer every request, in order; raise :class:`BackendError` if any of them failed."""
        outcomes = self.generate_outcomes(requests)
        for out in outcomes:
            if isinstance(out, BackendError):
                raise out
        return outcomes  # type: ignore[return-value]

    def generate_outcomes(
        self,
        requests: Sequence[Request],
        *,
        on_result: OnResult | None = None,
        concurrency: int | None = None,
    ) -> list[Outcome]:
        """Answer every request; a failed request gives its :class:`BackendError` instead of raising.

        Parameters
        ----------
        requests : sequence of Request
        on_result : callable, optional
            Called as ``on_result(index, outcome)`` as soon as each request is done.
        concurrency : int, optional
            Largest number of requests in flight (backends that run requests one by one ignore it).
        """
        reqs = _check_requests(requests)
        concurrency = _check_concurrency(concurrency)
        if self._closed:
            raise BackendError(f"this {self.kind} backend is closed")

        def record(i: int, out: Outcome) -> None:
            with self._usage_lock:
                u = self._usage
                if isinstance(out, BackendError):
                    self._usage = Usage(u.requests, u.failures + 1, u.prompt_tokens, u.completion_tokens)
                else:
                    self._usage = Usage(
                        u.requests + 1,
                        u.failures,
                        u.prompt_tokens + out.prompt_tokens,
                        u.completion_tokens + out.completion_tokens,
                    )
            if on_result is not None:
                on_result(i, out)

        return self._outcomes(reqs, record, concurrency) if reqs else []

    @property
    def usage(self) -> Usage:
        """Totals since this backend was created (cache hits are not counted by the inner backend)."""
        with self._usage_lock:
            return self._usage

    def close(self) -> None:
        """Release the model, client or engine; calling it twice is harmless."""
        self._closed = True

    def __enter__(self) -> BackendBase:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}(kind={self.kind!r}, model={self.model!r})"


def _check_requests(requests: Sequence[Request]) -> list[Request]:
    if isinstance(requests, (str, bytes, Request)) or not isinstance(requests, Sequence):
        raise TypeError("`requests` must be a sequence of Request")
    reqs = list(requests)
    for r in reqs:
        if not isinstance(r, Request):
            raise TypeError(f"`requests` must hold Request objects, got {type(r).__name__}")
    return reqs


def _check_concurrency(concurrency: int | None) -> int | None:
    if concurrency is None:
        return None
    if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
        raise ValueError(f"`concurrency` must be a positive integer, got {concurrency!r}")
    return concurrency


def generate_outcomes(
    backend: Backend,
    requests: Sequence[Request],
    *,
    on_result: OnResult | None = None,
    concurrency: int | None = None,
) -> list[Outcome]:
    """Answer ``requests`` with any backend, isolating failures per request.

    Backends built on :class:`BackendBase` (and the cache) are called directly.  For any
    other object that implements :class:`Backend`, each request is sent on its own with up
    to ``concurrency`` threads, so one failing request cannot take the batch down.

    Examples
    --------
    >>> from ipcausal.testing import SimulatedModel
    >>> outs = generate_outcomes(SimulatedModel(), [Request(messages_of("Hi"))])
    >>> type(outs[0]).__name__
    'Response'
    """
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend (a `generate` method)")
    method = getattr(backend, "generate_outcomes", None)
    if callable(method):
        return list(method(requests, on_result=on_result, concurrency=concurrency))
    reqs = _check_requests(requests)
    workers = _check_concurrency(concurrency) or 1
    results: list[Outcome | None] = [None] * len(reqs)

    def one(i: int) -> None:
        try:
            got = backend.generate([reqs[i]])
            if len(got) != 1 or not isinstance(got[0], Response):
                raise BackendError(f"{type(backend).__name__}.generate returned {len(got)} items for 1 request")
            out: Outcome = got[0]
        except BackendError as exc:
            out = exc
        except Exception as exc:  # a foreign backend's own failure becomes a per-request error
            out = BackendError(f"{type(exc).__name__}: {exc}")
        results[i] = out
        if on_result is not None:
            on_result(i, out)

    if workers == 1 or len(reqs) <= 1:
        for i in range(len(reqs)):
            one(i)
    else:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            list(pool.map(one, range(len(reqs))))
    return results  # type: ignore[return-value]


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
    >>> from ipcausal.testing import SimulatedModel
    >>> chat(SimulatedModel(), "Hello").startswith("Answer: ")
    True
    """
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend (a `generate` method)")
    req = Request(messages_of(prompt, system), config or GenerationConfig())
    (resp,) = backend.generate([req])
    return resp.text
