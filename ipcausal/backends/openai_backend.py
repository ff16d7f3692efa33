"""The ``openai`` backend: the official ``openai`` client, for OpenAI and any compatible server.

Works with api.openai.com and with OpenAI-compatible servers reached through ``base_url``
(``vllm serve``, ``python -m llama_cpp.server``, …).  Requests run asynchronously with a
bounded number in flight.  Rate limits (429), server errors (5xx), timeouts, dropped
connections and malformed responses are retried with exponential backoff that honours the
server's ``Retry-After``; other client errors (400, 401, 404, …) fail at once.  The API key
comes from an argument or the environment and is never stored in the cache, written to an
output, or shown in an error message.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import re
import threading
import time
from collections.abc import Mapping, Sequence
from email.utils import parsedate_to_datetime
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from ipcausal.backends.base import (
    BackendBase,
    BackendError,
    Choice,
    OnResult,
    Outcome,
    Request,
    Response,
)

__all__ = ["OpenAIBackend"]

_KEY_PATTERN = re.compile(r"(sk-|Bearer\s+)[A-Za-z0-9_\-*.]{3,}")
_RETRY_STATUS = {408, 409, 425, 429}
_NO_KEY = "sk-no-key-required"


def _openai() -> Any:
    try:
        import openai
    except ImportError as exc:
        raise ImportError("the openai backend needs the openai client: pip install 'ipcausal[openai]'") from exc
    return openai


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


class OpenAIBackend(BackendBase):
    """Chat completions through the official ``openai`` client.

    Parameters
    ----------
    model : str, optional
        Model name sent with each request.  Required for api.openai.com; with ``base_url``
        it defaults to the first model the server lists.
    base_url : str, optional
        An OpenAI-compatible endpoint, e.g. ``"http://127.0.0.1:8000/v1"``.
    api_key : str, optional
        The key; default: the environment variable named by ``api_key_env``.  Servers on a
        ``base_url`` that need no key get a placeholder.
    api_key_env : str
        Environment variable holding the key.
    concurrency : int
        Largest number of HTTP requests in flight.
    timeout : float
        Seconds before one HTTP request is abandoned (and retried).
    max_retries : int
        Retries of a retryable failure before the request is reported as failed.
    backoff, max_backoff : float
        The wait before retry ``k`` is ``min(max_backoff, backoff * 2**k)`` with jitter, and
        at least what the server asked for in ``Retry-After`` (capped at ``max_retry_after``).
    max_retry_after : float
        Longest ``Retry-After`` honoured.
    send_repeat_penalty : bool, optional
        Send ``repeat_penalty`` (llama.cpp's server defaults it to 1.1, so it must be sent to get
        the in-process behaviour).  Default: only when ``base_url`` is given (OpenAI rejects it).
    extra_body : mapping, optional
        More JSON fields sent with every request (e.g. ``{"top_k": 1}`` for vLLM/llama.cpp).

    Notes
    -----
    When ``max(8, concurrency)`` requests of one batch in a row found the server unreachable
    (connection refused or dropped, after their retries), the rest of that batch fails at once
    with a "skipped" error instead of retrying each request; the run is then reported
    incomplete and the next run (or batch) tries the server again.

    Examples
    --------
    >>> from ipcausal.backends import chat
    >>> b = OpenAIBackend("smollm2", base_url="http://127.0.0.1:8080/v1")  # doctest: +SKIP
    >>> chat(b, "Say hi")  # doctest: +SKIP
    'Hi there!'
    """

    kind = "openai"

    def __init__(
        self,
        model: str | None = None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float = 0.5,
        max_backoff: float = 30.0,
        max_retry_after: float = 120.0,
        send_repeat_penalty: bool | None = None,
        extra_body: Mapping[str, Any] | None = None,
    ) -> None:
        super().__init__()
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ValueError(f"`model` must be a non-empty string, got {model!r}")
        if base_url is not None:
            if not isinstance(base_url, str) or urlsplit(base_url).scheme not in ("http", "https"):
                raise ValueError(f"`base_url` must be an http(s) URL, got {base_url!r}")
        if api_key is not None and (not isinstance(api_key, str) or not api_key):
            raise ValueError("`api_key` must be a non-empty string")
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ValueError(f"`api_key_env` must name an environment variable, got {api_key_env!r}")
        for name, value, low in (("timeout", timeout, 0.0), ("backoff", backoff, 0.0), ("max_backoff", max_backoff, 0.0),
                                 ("max_retry_after", max_retry_after, 0.0)):
            if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= low:
                raise ValueError(f"`{name}` must be a non-negative number, got {value!r}")
        if timeout <= 0:
            raise ValueError(f"`timeout` must be positive, got {timeout!r}")
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ValueError(f"`concurrency` must be a positive integer, got {concurrency!r}")
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValueError(f"`max_retries` must be a non-negative integer, got {max_retries!r}")
        if extra_body is not None and not isinstance(extra_body, Mapping):
            raise TypeError("`extra_body` must be a mapping")
        _openai()
        key = api_key or os.environ.get(api_key_env)
        if not key:
            if base_url is None:
                raise ValueError(f"`api_key`: no API key given and ${api_key_env} is not set")
            key = _NO_KEY
        self._key = key  # kept only in memory; never in repr, cache, outputs or messages
        self.base_url = base_url.rstrip("/") if base_url else None
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff, self.max_backoff, self.max_retry_after = float(backoff), float(max_backoff), float(max_retry_after)
        self.send_repeat_penalty = (base_url is not None) if send_repeat_penalty is None else bool(send_repeat_penalty)
        self.extra_body = dict(extra_body or {})
        self._jitter = random.Random()
        self._unreachable = 0  # requests in a row that ended with the server unreachable
        self._last_down = ""
        if model is None:
            if base_url is None:
                raise ValueError("`model` is required for api.openai.com (e.g. 'gpt-4o-mini')")
            models = self.check()
            if not models:
                raise ValueError(f"`model`: the server at {self.where} lists no models; pass one explicitly")
            model = models[0]
        self.model = model

    @property
    def where(self) -> str:
        """The endpoint, safe to print."""
        return _public_url(self.base_url) if self.base_url else "api.openai.com"

    def _redact(self, text: str) -> str:
        if self._key and self._key != _NO_KEY:
            text = text.replace(self._key, "***")
        return _KEY_PATTERN.sub(lambda m: m.group(1) + "***", text)

    def _client_kwargs(self) -> dict[str, Any]:
        kw: dict[str, Any] = {"api_key": self._key, "timeout": self.timeout, "max_retries": 0}
        if self.base_url:
            kw["base_url"] = self.base_url
        return kw

    def check(self, timeout: float = 10.0) -> list[str]:
        """Ask the server which models it serves (a quick reachability test).

        Raises
        ------
        BackendError
            When the server cannot be reached or refuses the request, with a one-line reason.
        """
        openai = _openai()
        client = openai.OpenAI(**{**self._client_kwargs(), "timeout": timeout})
        try:
            return [m.id for m in client.models.list()]
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise BackendError(f"cannot reach the server at {self.where}: {self._redact(str(cause) or type(cause).__name__)}") from None
        except openai.APIStatusError as exc:
            raise BackendError(f"the server at {self.where} answered HTTP {exc.status_code}: {self._redact(str(exc))[:300]}") from None
        finally:
            client.close()

    # -- one request ------------------------------------------------------------------
    def _params(self, req: Request, n: int, seed: int | None) -> dict[str, Any]:
        cfg = req.config
        params: dict[str, Any] = {
            "model": self.model,
            "messages": [dict(m) for m in req.messages],
            "max_tokens": cfg.max_tokens,
            "temperature": float(cfg.temperature),
            "top_p": float(cfg.top_p),
        }
        if n > 1:
            params["n"] = n
        if seed is not None:
            params["seed"] = seed
        if cfg.stop:
            params["stop"] = list(cfg.stop)
        if cfg.logprobs:
            params["logprobs"] = True
            params["top_logprobs"] = 1
        extra = dict(self.extra_body)
        if self.send_repeat_penalty:
            extra.setdefault("repeat_penalty", float(cfg.repeat_penalty))
        if extra:
            params["extra_body"] = extra
        return params

    async def _call(self, client: Any, sem: asyncio.Semaphore, params: dict[str, Any]) -> Any:
        """One HTTP call with retries; returns the parsed completion or raises BackendError."""
        openai = _openai()
        last = "no attempt made"
        unreachable = False
        for attempt in range(self.max_retries + 1):
            wait = None
            async with sem:
                if self._unreachable >= max(8, self.concurrency):
                    # the server was unreachable for many requests in a row: fail fast (the run is
                    # reported incomplete and can be resumed) instead of retrying every remaining one
                    raise BackendError(self._redact(f"{self.where}: skipped, the server stopped answering "
                                                    f"({self._last_down})"), retryable=True)
                unreachable = False
                try:
                    completion = await client.chat.completions.create(**params)
                    _validate(completion)
                    self._unreachable = 0
                    return completion
                except openai.APITimeoutError:
                    last = f"timed out after {self.timeout:g}s"
                except openai.APIConnectionError as exc:
                    cause = exc.__cause__ or exc
                    last = f"connection failed ({type(cause).__name__}: {cause})"
                    unreachable = True
                except openai.APIStatusError as exc:
                    status = exc.status_code
                    last = f"HTTP {status}: {str(exc)[:200]}"
                    if status < 500 and status not in _RETRY_STATUS:
                        raise BackendError(self._redact(last), retryable=False) from None
                    wait = _retry_after(exc.response)
                except (openai.APIResponseValidationError, json.JSONDecodeError, _Malformed, ValueError,
                        KeyError, TypeError, AttributeError) as exc:
                    last = f"malformed response ({type(exc).__name__}: {str(exc)[:200]})"
            if attempt == self.max_retries:
                break
            delay = min(self.max_backoff, self.backoff * 2**attempt) * (0.5 + 0.5 * self._jitter.random())
            if wait is not None:
                delay = max(delay, min(wait, self.max_retry_after))
            await asyncio.sleep(delay)
        if unreachable:
            self._unreachable += 1
            self._last_down = last
        raise BackendError(self._redact(f"{self.where}: {last} (gave up after {self.max_retries + 1} attempts)"),
                           retryable=True)

    async def _request(self, client: Any, sem: asyncio.Semaphore, req: Request) -> Response:
        cfg = req.config
        choices: list[Choice] = []
        prompt_tokens = completion_tokens = 0
        model_id, fingerprint = self.model, None
        start = time.perf_counter()
        while len(choices) < cfg.n:
            k = len(choices)
            want = cfg.n - k
            completion = await self._call(client, sem, self._params(req, want, cfg.sample_seed(k)))
            got = list(completion.choices)[:want]  # a server that ignores `n` returns one: loop
            usage = completion.usage
            if usage is not None:
                prompt_tokens = int(usage.prompt_tokens or 0)
                completion_tokens += int(usage.completion_tokens or 0)
            per_choice = int(usage.completion_tokens or 0) if (usage is not None and len(got) == 1) else None
            for c in got:
                lp = tok = None
                content = getattr(c.logprobs, "content", None) if cfg.logprobs else None
                if content:
                    lp = tuple(float(t.logprob) for t in content)
                    tok = tuple(str(t.token) for t in content)
                choices.append(Choice(c.message.content or "", c.finish_reason, lp, tok, per_choice))
            model_id = completion.model or model_id
            fingerprint = getattr(completion, "system_fingerprint", None) or fingerprint
        return Response(tuple(choices), model_id, fingerprint, prompt_tokens, completion_tokens,
                        time.perf_counter() - start)

    async def _all(self, requests: Sequence[Request], on_result: OnResult, concurrency: int) -> list[Outcome]:
        openai = _openai()
        results: list[Outcome | None] = [None] * len(requests)
        sem = asyncio.Semaphore(concurrency)
        self._unreachable = 0  # every batch tries the server afresh
        async with openai.AsyncOpenAI(**self._client_kwargs()) as client:

            async def one(i: int) -> None:
                try:
                    out: Outcome = await self._request(client, sem, requests[i])
                except BackendError as exc:
                    out = exc
                results[i] = out
                on_result(i, out)

            await asyncio.gather(*(one(i) for i in range(len(requests))))
        return results  # type: ignore[return-value]

    def _outcomes(self, requests: Sequence[Request], on_result: OnResult, concurrency: int | None) -> list[Outcome]:
        limit = concurrency or self.concurrency
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return asyncio.run(self._all(requests, on_result, limit))
        # called from inside an event loop (e.g. a notebook): run ours on a thread
        box: dict[str, Any] = {}

        def target() -> None:
            try:
                box["out"] = asyncio.run(self._all(requests, on_result, limit))
            except BaseException as exc:  # re-raised below in the caller's thread
                box["err"] = exc

        t = threading.Thread(target=target, daemon=True)
        t.start()
        t.join()
        if "err" in box:
            raise box["err"]
        return box["out"]

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, where={self.where!r}, concurrency={self.concurrency})"


class _Malformed(ValueError):
    """The server answered 200 with something that is not a usable chat completion."""


def _validate(completion: Any) -> None:
    choices = getattr(completion, "choices", None)
    if not isinstance(choices, list) or not choices:
        raise _Malformed("no choices")
    for c in choices:
        message = getattr(c, "message", None)
        if message is None or not isinstance(getattr(message, "content", None), (str, type(None))):
            raise _Malformed("a choice without a message")
