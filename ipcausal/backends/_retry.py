"""The openai backend's one retry decision and the helpers around it (no state, no client).

:func:`should_retry` is the only place that says whether a failed attempt is tried again;
:mod:`ipcausal.backends.openai_backend` hands it to ``tenacity``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import PurePath
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ipcausal.backends.base import BackendError

__all__ = ["should_retry", "Backoff"]

_RETRY_STATUS = {408, 409, 425, 429}


@dataclass(frozen=True)
class Backoff:
    """The waits between retries: before retry ``k``, ``min(cap, base * 2**k)`` with jitter, and at
    least the server's ``Retry-After`` (honoured up to ``max_retry_after`` seconds).

    Examples
    --------
    >>> from ipcausal.backends import Backoff
    >>> Backoff(base=0.1).cap
    30.0
    >>> Backoff(max_retry_after=-1)
    Traceback (most recent call last):
    ...
    ValueError: `max_retry_after` must be a non-negative number, got -1
    """

    base: float = 0.5
    cap: float = 30.0
    max_retry_after: float = 120.0

    def __post_init__(self) -> None:
        for name, label in (("base", "backoff"), ("cap", "max_backoff"), ("max_retry_after", "max_retry_after")):
            value = getattr(self, name)
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
                raise ValueError(f"`{label}` must be a non-negative number, got {value!r}")
            object.__setattr__(self, name, float(value))


def _openai() -> Any:
    try:
        import openai
    except ImportError as exc:
        raise ImportError("the openai backend needs the openai client: pip install 'ipcausal[openai]'") from exc
    return openai


def _tenacity() -> Any:
    try:
        import tenacity
    except ImportError as exc:
        raise ImportError("the openai backend retries with tenacity: pip install 'ipcausal[openai]'") from exc
    return tenacity


class _Malformed(ValueError):
    """The server answered 200 with something that is not a usable chat completion."""


class _Skipped(BackendError):
    """The breaker has tripped: the request is not sent."""


def should_retry(exc: BaseException) -> bool:
    """The one retry decision of the openai backend: could another attempt succeed?

    Parameters
    ----------
    exc : BaseException
        What one attempt raised.

    Returns
    -------
    bool
        True for timeouts, failed or dropped connections, HTTP 408/409/425/429 and 5xx, and
        malformed answers (a 200 whose body is not a chat completion); False for every other
        client error (400, 401, 404, …), for :class:`~ipcausal.backends.BackendError` (already
        decided, e.g. skipped by the breaker) and for any other exception, which is a
        programming error and must surface at once.

    Examples
    --------
    >>> should_retry(KeyError("choices"))
    False
    >>> import openai, httpx
    >>> should_retry(openai.APITimeoutError(request=httpx.Request("POST", "http://x")))
    True
    """
    openai = _openai()
    if isinstance(exc, (openai.APIConnectionError, openai.APIResponseValidationError, _Malformed)):
        return True  # APITimeoutError is an APIConnectionError
    if isinstance(exc, openai.APIStatusError):
        return exc.status_code >= 500 or exc.status_code in _RETRY_STATUS
    return False


def _describe(exc: BaseException, timeout: float) -> str:
    """One line for a failed attempt (before redaction)."""
    openai = _openai()
    if isinstance(exc, openai.APITimeoutError):
        return f"timed out after {timeout:g}s"
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return f"connection failed ({type(cause).__name__}: {cause})"
    if isinstance(exc, openai.APIStatusError):
        return f"HTTP {exc.status_code}: {str(exc)[:200]}"
    return f"malformed response ({type(exc).__name__}: {str(exc)[:200]})"


def _gguf_stem(model_id: str) -> str | None:
    """The file stem when ``model_id`` is a path to a .gguf file (llama.cpp without an alias)."""
    if model_id.lower().endswith(".gguf"):
        return PurePath(model_id.replace("\\", "/")).stem
    return None


def _public_url(url: str) -> str:
    """``url`` without user:password (so it is safe to print)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _retry_after(response: Any) -> float | None:
    """Seconds asked for by ``Retry-After`` / ``retry-after-ms``, or ``None``."""
    headers = getattr(response, "headers", None)
    if headers is None:
        return None
    ms = headers.get("retry-after-ms")
    if ms is not None:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        try:
            return max(0.0, parsedate_to_datetime(value).timestamp() - time.time())
        except (TypeError, ValueError, IndexError):
            return None


def _validate(completion: Any) -> None:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise _Malformed("no choices")
    for c in choices:
        message = getattr(c, "message", None)
        if message is None or not isinstance(getattr(message, "content", None), (str, type(None))):
            raise _Malformed("a choice without a message")
