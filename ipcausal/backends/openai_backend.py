"""The ``openai`` backend: the official ``openai`` client, for OpenAI and any compatible server.

Works with api.openai.com and with OpenAI-compatible servers reached through ``base_url``
(``vllm serve``, ``python -m llama_cpp.server``, …).  Requests run asynchronously with a
bounded number in flight.  Retries go through ``tenacity`` with one decision,
:func:`should_retry`: rate limits (429), server errors (5xx), timeouts, dropped connections and
malformed answers are retried with exponential backoff that honours the server's
``Retry-After``; other client errors (400, 401, 404, …) fail at once, and an exception raised by
our own code (a programming error) propagates at once with its own message, never retried.
The ``openai`` client's own retries are switched off because they cannot retry a malformed
200 answer and give no hook per attempt for the :class:`~ipcausal.backends.breaker.Breaker` that
skips the rest of a run once the server has stopped answering.  The API key comes from an
argument or the environment and is never stored in the cache, written to an output, or
shown in an error message.
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
from typing import Any
from urllib.parse import urlsplit

from ipcausal.backends.base import (
    BackendBase,
    BackendError,
    Breaker,
    Choice,
    OnResult,
    Outcome,
    Request,
    Response,
    check_option_texts,
)
from ipcausal.backends._retry import (
    Backoff,
    _describe,
    _gguf_stem,
    _Malformed,
    _openai,
    _public_url,
    _retry_after,
    _Skipped,
    _tenacity,
    _validate,
    should_retry,
)

__all__ = ["OpenAIBackend", "should_retry"]

_KEY_PATTERN = re.compile(r"(sk-|Bearer\s+)[A-Za-z0-9_\-*.]{3,}")
_NO_KEY = "sk-no-key-required"
_PROBE_EVERY = 30.0  # seconds between probes of a server the breaker gave up on


class OpenAIBackend(BackendBase):
    """Chat completions through the official ``openai`` client.

    Parameters
    ----------
    model : str, optional
        Model name sent with each request.  Required for api.openai.com; with ``base_url``
        it defaults to the first model the server lists (labelled by its file stem when the
        server lists a path to a ``.gguf`` file, as llama.cpp does without ``--model_alias``).
        :meth:`check` (the run's preflight) fails when the server lists models and this is
        not one of them (nor the stem of a listed ``.gguf`` path).
    base_url : str, optional
        An OpenAI-compatible endpoint, e.g. ``"http://127.0.0.1:8000/v1"``.
    api_key : str, optional
        The key; default: the environment variable named by ``api_key_env``.  Servers on a
        ``base_url`` that need no key get a placeholder.
    api_key_env : str, optional
        Environment variable holding the key (default ``OPENAI_API_KEY``).  A variable named
        here must be set: an unset one is an error before any request, also for a ``base_url``
        server (only the default may be absent there, for servers that need no key).
    concurrency : int
        Largest number of HTTP requests in flight.
    timeout : float
        Seconds before one HTTP request is abandoned (and retried).
    max_retries : int
        Retries of a retryable failure before the request is reported as failed.
    backoff : float or Backoff
        The waits between retries (:class:`~ipcausal.backends.Backoff`: ``base``, ``cap``,
        ``max_retry_after``); a number is the ``base`` (default 0.5 s; cap 30 s, ``Retry-After``
        honoured up to 120 s).  The wait before retry ``k`` is ``min(cap, base * 2**k)`` with
        jitter, and at least what the server asked for in ``Retry-After``.
    send_repeat_penalty : bool, optional
        Send ``repeat_penalty`` (llama.cpp's server defaults it to 1.1, so it must be sent to get
        the in-process behaviour).  Default: only when ``base_url`` is given (OpenAI rejects it).
    extra_body : mapping, optional
        More JSON fields sent with every request (e.g. ``{"top_k": 1}`` for vLLM/llama.cpp).
    down_after : float, optional
        Seconds without any answer from the server after which (and at least two failed
        attempts in a row) it is taken to have stopped answering; default ``2 * timeout``.
    check_model : bool
        Whether :meth:`check` rejects a ``model`` the server does not list.  Turn it off for
        gateways that accept names they do not list.

    Notes
    -----
    A :class:`~ipcausal.backends.breaker.Breaker` watches every attempt.  When
    ``max(8, concurrency)`` requests in a row found the server unreachable or silent
    (connection refused or dropped, or timed out) after their retries, or two attempts in a
    row did and nothing was heard from it for ``down_after`` seconds, every request still
    waiting fails at once with a
    "skipped, the server stopped answering" error instead of going through its retries; the
    run is then reported incomplete and a rerun resumes.  With the defaults (timeout 60 s,
    concurrency 8, 5 retries) a server that hangs is given up after about two minutes
    (two timed-out attempts in a row, 120 s of silence) at any concurrency, instead of
    timeout x attempts x requests / concurrency; refused connections are given up after
    eight requests (milliseconds).  Later batches are skipped too; every 30 s one probe (a model list with
    a timeout of at most 10 s) checks whether the server is back, and a successful
    :meth:`check` resets the breaker.

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
        api_key_env: str | None = None,
        concurrency: int = 8,
        timeout: float = 60.0,
        max_retries: int = 5,
        backoff: float | Backoff = 0.5,
        send_repeat_penalty: bool | None = None,
        extra_body: Mapping[str, Any] | None = None,
        down_after: float | None = None,
        check_model: bool = True,
    ) -> None:
        super().__init__()
        if model is not None and (not isinstance(model, str) or not model.strip()):
            raise ValueError(f"`model` must be a non-empty string, got {model!r}")
        if base_url is not None:
            if not isinstance(base_url, str) or urlsplit(base_url).scheme not in ("http", "https"):
                raise ValueError(f"`base_url` must be an http(s) URL, got {base_url!r}")
        if api_key is not None and (not isinstance(api_key, str) or not api_key):
            raise ValueError("`api_key` must be a non-empty string")
        named = api_key_env is not None
        if not named:
            api_key_env = "OPENAI_API_KEY"
        if not isinstance(api_key_env, str) or not api_key_env:
            raise ValueError(f"`api_key_env` must name an environment variable, got {api_key_env!r}")
        if not isinstance(timeout, (int, float)) or isinstance(timeout, bool) or not timeout >= 0:
            raise ValueError(f"`timeout` must be a non-negative number, got {timeout!r}")
        waits = backoff if isinstance(backoff, Backoff) else Backoff(base=backoff)
        if timeout <= 0:
            raise ValueError(f"`timeout` must be positive, got {timeout!r}")
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ValueError(f"`concurrency` must be a positive integer, got {concurrency!r}")
        if not isinstance(max_retries, int) or isinstance(max_retries, bool) or max_retries < 0:
            raise ValueError(f"`max_retries` must be a non-negative integer, got {max_retries!r}")
        if extra_body is not None and not isinstance(extra_body, Mapping):
            raise TypeError("`extra_body` must be a mapping")
        if down_after is not None and (
            not isinstance(down_after, (int, float)) or isinstance(down_after, bool) or not down_after > 0
        ):
            raise ValueError(f"`down_after` must be a positive number of seconds, got {down_after!r}")
        if not isinstance(check_model, bool):
            raise TypeError(f"`check_model` must be True or False, got {check_model!r}")
        _openai()
        _tenacity()
        key = api_key or os.environ.get(api_key_env)
        if not key:
            if named and api_key is None:
                raise ValueError(f"`api_key_env`: ${api_key_env} is not set (export it before the run; the key is "
                                 "never read from a file)")
            if base_url is None:
                raise ValueError(f"`api_key`: no API key given and ${api_key_env} is not set")
            key = _NO_KEY
        self._key = key  # kept only in memory; never in repr, cache, outputs or messages
        self.base_url = base_url.rstrip("/") if base_url else None
        self.concurrency = concurrency
        self.timeout = float(timeout)
        self.max_retries = max_retries
        self.backoff, self.max_backoff, self.max_retry_after = waits.base, waits.cap, waits.max_retry_after
        self.send_repeat_penalty = (base_url is not None) if send_repeat_penalty is None else bool(send_repeat_penalty)
        self.extra_body = dict(extra_body or {})
        self._jitter = random.Random()
        self.check_model = check_model
        self.down_after = 2.0 * self.timeout if down_after is None else float(down_after)
        self._breaker = Breaker(max(8, concurrency), self.down_after)
        self.model = model or ""  # the label (responses, cache keys, reports)
        self._wire = model or ""  # the name sent in each request
        if model is None:
            if base_url is None:
                raise ValueError("`model` is required for api.openai.com (e.g. 'gpt-4o-mini')")
            models = self.check()
            if not models:
                raise ValueError(f"`model`: the server at {self.where} lists no models; pass one explicitly")
            self._wire = models[0]
            self.model = _gguf_stem(models[0]) or models[0]

    @property
    def where(self) -> str:
        """The endpoint, safe to print."""
        return _public_url(self.base_url) if self.base_url else "api.openai.com"

    def _v1_hint(self, status: int) -> str:
        """For a 404 from a ``base_url`` whose path does not end in ``/v1``: the URL to try instead.

        Examples
        --------
        >>> OpenAIBackend("m", base_url="http://127.0.0.1:8765")._v1_hint(404)
        ' (not found: the URL lacks /v1; OpenAI-compatible servers answer under /v1, try http://127.0.0.1:8765/v1)'
        >>> OpenAIBackend("m", base_url="http://127.0.0.1:8765/v1")._v1_hint(404)
        ''
        """
        if status != 404 or not self.base_url:
            return ""
        url = _public_url(self.base_url).rstrip("/")
        if url.endswith("/v1"):
            return ""
        return (f" (not found: the URL lacks /v1; OpenAI-compatible servers answer under /v1, try {url}/v1)")

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
        """Ask the server which models it serves (a quick reachability test) and check ``model``.

        When the backend has a ``model`` and ``check_model`` is on, the server's list must
        contain it (or, for a listed ``.gguf`` path, its file stem, which is then what is
        sent): llama.cpp's server answers whatever name a request carries, so a wrong name
        would otherwise label every response with a model that did not produce it.  A
        successful check resets the breaker.

        Returns
        -------
        list of str
            The model ids the server lists.

        Raises
        ------
        BackendError
            When the server cannot be reached or refuses the request, or does not serve
            ``model``, with a one-line reason.
        """
        openai = _openai()
        client = openai.OpenAI(**{**self._client_kwargs(), "timeout": timeout})
        try:
            ids = [m.id for m in client.models.list()]
        except openai.APIConnectionError as exc:
            cause = exc.__cause__ or exc
            raise BackendError(f"cannot reach the server at {self.where}: {self._redact(str(cause) or type(cause).__name__)}") from None
        except openai.APIStatusError as exc:
            raise BackendError(f"the server at {self.where} answered HTTP {exc.status_code}"
                               f"{self._v1_hint(exc.status_code)}: {self._redact(str(exc))[:300]}") from None
        finally:
            client.close()
        self._breaker.reset()
        if self.model and self.check_model and ids and self._wire not in ids:
            stems = {_gguf_stem(i): i for i in ids if _gguf_stem(i)}
            if self.model not in stems:
                shown = ", ".join(repr(_gguf_stem(i) or i) for i in ids[:10])
                raise BackendError(f"`model` {self.model!r} is not served by the server at {self.where}, which "
                                   f"serves {shown}; pass one of these (or leave `model` out to use the first)")
            self._wire = stems[self.model]
        return ids

    # -- one request ------------------------------------------------------------------
    def _params(self, req: Request, n: int, seed: int | None) -> dict[str, Any]:
        cfg = req.config
        params: dict[str, Any] = {
            "model": self._wire,
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

    async def _attempt(self, client: Any, sem: asyncio.Semaphore, params: dict[str, Any]) -> Any:
        """One HTTP call: the completion, or the exception that :func:`should_retry` judges."""
        openai = _openai()
        async with sem:
            if self._breaker.tripped:
                raise _Skipped(self._redact(f"{self.where}: skipped, the server stopped answering "
                                            f"({self._breaker.reason})"), retryable=True)
            try:
                completion = await client.chat.completions.create(**params)
            except (openai.APITimeoutError, openai.APIConnectionError) as exc:
                self._breaker.down(_describe(exc, self.timeout))
                raise
            except json.JSONDecodeError as exc:  # a 200 whose body is not JSON (e.g. cut short)
                self._breaker.answered()
                raise _Malformed(f"not JSON: {exc.msg}") from None
            except openai.APIError:
                self._breaker.answered()
                raise
            self._breaker.answered()
        _validate(completion)
        return completion

    def _wait(self, state: Any) -> float:
        """Seconds before the next attempt: backoff with jitter, at least the server's Retry-After."""
        k = state.attempt_number - 1
        delay = min(self.max_backoff, self.backoff * 2**k) * (0.5 + 0.5 * self._jitter.random())
        exc = state.outcome.exception() if state.outcome is not None else None
        asked = _retry_after(getattr(exc, "response", None))
        if asked is not None:
            delay = max(delay, min(asked, self.max_retry_after))
        return delay

    async def _call(self, client: Any, sem: asyncio.Semaphore, params: dict[str, Any]) -> Any:
        """One request with its retries; the parsed completion, or BackendError when it failed."""
        openai = _openai()
        tenacity = _tenacity()
        retrying = tenacity.AsyncRetrying(
            stop=tenacity.stop_after_attempt(self.max_retries + 1),
            wait=self._wait,
            retry=tenacity.retry_if_exception(should_retry),
            reraise=True,
        )
        try:
            return await retrying(self._attempt, client, sem, params)
        except BackendError:
            raise
        except openai.APIStatusError as exc:
            if not should_retry(exc):
                raise BackendError(self._redact(_describe(exc, self.timeout) + self._v1_hint(exc.status_code)),
                                   retryable=False) from None
            last = _describe(exc, self.timeout)
        except (openai.APIError, _Malformed) as exc:
            last = _describe(exc, self.timeout)
            if isinstance(exc, openai.APIConnectionError):
                self._breaker.gave_up(last)
        raise BackendError(self._redact(f"{self.where}: {last} (gave up after {self.max_retries + 1} attempts)"),
                           retryable=True)

    async def _probe(self, client: Any) -> None:
        """The breaker has tripped: every 30 s, ask once whether the server answers again."""
        if self._breaker.since_trip() < _PROBE_EVERY:
            return
        openai = _openai()
        try:
            await client.with_options(timeout=min(self.timeout, 10.0)).models.list()
        except (openai.APITimeoutError, openai.APIConnectionError) as exc:
            self._breaker.retrip(_describe(exc, min(self.timeout, 10.0)))
            return
        except openai.APIError:
            pass
        self._breaker.reset()

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
        self._breaker.streak = max(8, concurrency)
        async with openai.AsyncOpenAI(**self._client_kwargs()) as client:
            if self._breaker.tripped:
                await self._probe(client)

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

    # -- option log-probabilities (the logprob scorer) ------------------------------------
    def option_logprobs(self, request: Request, options: Sequence[str]) -> tuple[float, ...]:
        """Log-probability of each option text after ``request``'s prompt, from legacy completions.

        Sends ``POST /completions`` with ``prompt = text + option``, ``echo=True``,
        ``logprobs=0``, ``max_tokens=1`` and sums the echoed log-probabilities of the tokens that
        start at or after the option (by ``text_offset``).  The completions endpoint applies no
        chat template, so ``text`` is the messages' contents joined by blank lines plus a newline
        (not what :meth:`generate` sends through the chat template).  A server that does not echo
        prompt log-probabilities (most hosted chat APIs) gives a :class:`BackendError` saying so.
        """
        if not isinstance(request, Request):
            raise TypeError(f"`request` must be a Request, got {type(request).__name__}")
        opts = check_option_texts(options)
        openai = _openai()
        text = "\n\n".join(m["content"] for m in request.messages) + "\n"
        out = []
        client = openai.OpenAI(**self._client_kwargs())
        try:
            for opt in opts:
                try:
                    got = client.completions.create(model=self._wire or "default", prompt=text + opt, echo=True,
                                                    logprobs=0, max_tokens=1, temperature=0.0)
                except openai.APIError as exc:
                    raise BackendError(self._redact(f"{self.where}: completions with echo+logprobs failed: "
                                                    f"{str(exc)[:300]}")) from None
                lp = getattr(got.choices[0], "logprobs", None) if got.choices else None
                offs = list(getattr(lp, "text_offset", None) or [])
                vals = list(getattr(lp, "token_logprobs", None) or [])
                if not offs or len(offs) != len(vals):
                    raise BackendError(f"{self.where}: the server did not echo prompt log-probabilities "
                                       "(completions echo+logprobs), so option log-probabilities are unavailable")
                start = min(offs)  # some servers count offsets from the start of the prompt, some not
                picked = [v for o, v in zip(offs, vals) if o - start >= len(text) and o - start < len(text + opt)]
                if not picked or any(v is None for v in picked):
                    raise BackendError(f"{self.where}: no echoed log-probability for option {opt!r}")
                out.append(float(sum(picked)))
        finally:
            client.close()
        return tuple(out)

    def __repr__(self) -> str:
        return f"OpenAIBackend(model={self.model!r}, where={self.where!r}, concurrency={self.concurrency})"

