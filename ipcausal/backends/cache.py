"""The response cache: SQLite (WAL), one row per generated sample, committed as it arrives.

A sample is keyed by a SHA-256 hash of the backend kind, the model, every generation
setting except ``n``, the chat messages and the sample's index.  So changing the
temperature, the seed, ``max_tokens`` or the prompt asks the model again, while raising
``n`` from 2 to 4 only asks for what is missing.  Failed requests are never stored, and
nothing about the connection (base URL, API key) is: a key is only ever read from the
environment or an argument.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Sequence
from pathlib import Path

from ipcausal.backends.base import (
    Backend,
    BackendBase,
    Choice,
    GenerationConfig,
    OnResult,
    Outcome,
    Request,
    Response,
    generate_outcomes,
)

__all__ = ["ResponseCache", "CachedBackend", "cache_key"]

_SCHEMA = 1
_CHUNK = 500  # keys per SELECT … IN (…)


def cache_key(kind: str, model: str, request: Request, sample_index: int) -> str:
    """The hash that identifies one sample of one request for one model.

    Parameters
    ----------
    kind : str
        Backend kind (``"local"``, ``"openai"``, ``"vllm"``, …).
    model : str
        Model name or path as the backend was configured.
    request : Request
        Messages and generation settings (``n`` excluded: it says how many samples, not which).
    sample_index : int
        Which sample of the request (0-based).

    Examples
    --------
    >>> from ipcausal.backends import Request, messages_of
    >>> k = cache_key("local", "m", Request(messages_of("Hi")), 0)
    >>> len(k), k == cache_key("local", "m", Request(messages_of("Hi")), 1)
    (64, False)
    """
    if not isinstance(kind, str) or not kind:
        raise ValueError(f"`kind` must be a non-empty string, got {kind!r}")
    if not isinstance(model, str):
        raise TypeError(f"`model` must be a string, got {type(model).__name__}")
    if not isinstance(request, Request):
        raise TypeError(f"`request` must be a Request, got {type(request).__name__}")
    if not isinstance(sample_index, int) or isinstance(sample_index, bool) or sample_index < 0:
        raise ValueError(f"`sample_index` must be a non-negative integer, got {sample_index!r}")
    messages = json.dumps([[m["role"], m["content"]] for m in request.messages], ensure_ascii=False,
                          separators=(",", ":"))
    blob = "\x1f".join((str(_SCHEMA), kind, model, _settings(request.config), messages, str(sample_index)))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@functools.lru_cache(maxsize=1024)
def _settings(config: GenerationConfig) -> str:
    """Canonical JSON of every generation setting except ``n`` (memoised: configs are frozen)."""
    settings = config.to_dict()
    settings.pop("n", None)
    return json.dumps(settings, sort_keys=True, separators=(",", ":"))


class ResponseCache:
    """A SQLite file of generated samples.

    Parameters
    ----------
    path : str or path-like
        The database file (created with its folder when missing).  ``":memory:"`` keeps it in memory.

    Notes
    -----
    The database runs in WAL mode and every :meth:`put` is its own committed transaction,
    so a process killed at any moment (even ``kill -9``) keeps every sample stored before
    the kill.  One cache may be shared by several threads of one process.

    Examples
    --------
    >>> from ipcausal.backends import Choice, Request, Response, messages_of
    >>> cache = ResponseCache(":memory:")
    >>> req = Request(messages_of("Hi"))
    >>> cache.put("local", "m", req, Response((Choice("Hello!"),), model="m"))
    >>> cache.get("local", "m", req).text, len(cache)
    ('Hello!', 1)
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"`path` must be a file path, got {type(path).__name__}")
        self.path = str(path)
        if self.path != ":memory:":
            p = Path(self.path)
            if p.is_dir():
                raise ValueError(f"`path` is a folder, not a cache file: {p}")
            p.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.RLock()
        try:
            self._db = sqlite3.connect(self.path, timeout=30.0, check_same_thread=False, isolation_level=None)
            self._db.execute("PRAGMA journal_mode=WAL")
            self._db.execute("PRAGMA synchronous=NORMAL")
            self._db.execute(
                "CREATE TABLE IF NOT EXISTS samples ("
                " key TEXT PRIMARY KEY, kind TEXT NOT NULL, model TEXT NOT NULL, sample_index INTEGER NOT NULL,"
                " text TEXT NOT NULL, finish_reason TEXT, logprobs TEXT, tokens TEXT,"
                " model_id TEXT, fingerprint TEXT, prompt_tokens INTEGER, completion_tokens INTEGER,"
                " latency_s REAL, request TEXT NOT NULL, created REAL NOT NULL)"
            )
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"`path`: {self.path} is not a usable SQLite cache ({exc})") from None

    # -- reading ----------------------------------------------------------------------
    def get(self, kind: str, model: str, request: Request) -> Response | None:
        """The cached response to ``request`` (all ``n`` samples), or ``None`` when any is missing."""
        return self.get_many(kind, model, [request])[0]

    def get_many(self, kind: str, model: str, requests: Sequence[Request]) -> list[Response | None]:
        """Look many requests up at once (fast path for big runs); ``None`` where incomplete."""
        keys = [[cache_key(kind, model, r, k) for k in range(r.config.n)] for r in requests]
        rows = self._rows([k for ks in keys for k in ks])
        out: list[Response | None] = []
        for ks in keys:
            got = [rows.get(k) for k in ks]
            out.append(None if any(g is None for g in got) else _response(got))  # type: ignore[arg-type]
        return out

    def _rows(self, keys: Iterable[str]) -> dict[str, tuple]:
        keys = list(dict.fromkeys(keys))
        found: dict[str, tuple] = {}
        with self._lock:
            for start in range(0, len(keys), _CHUNK):
                part = keys[start : start + _CHUNK]
                marks = ",".join("?" * len(part))
                cur = self._db.execute(
                    "SELECT key, text, finish_reason, logprobs, tokens, model_id, fingerprint,"
                    f" prompt_tokens, completion_tokens, latency_s FROM samples WHERE key IN ({marks})",
                    part,
                )
                for row in cur:
                    found[row[0]] = row[1:]
        return found

    def __len__(self) -> int:
        with self._lock:
            return int(self._db.execute("SELECT COUNT(*) FROM samples").fetchone()[0])

    def __contains__(self, key: object) -> bool:
        with self._lock:
            return self._db.execute("SELECT 1 FROM samples WHERE key = ?", (key,)).fetchone() is not None

    # -- writing ----------------------------------------------------------------------
    def put(self, kind: str, model: str, request: Request, response: Response) -> None:
        """Store every sample of ``response`` in one committed transaction (errors are never stored).

        A sample already stored under the same key is kept (the first answer wins).
        """
        if isinstance(response, BaseException):
            raise TypeError("`response`: errors are never cached")
        if not isinstance(response, Response):
            raise TypeError(f"`response` must be a Response, got {type(response).__name__}")
        n = len(response.choices)
        req_json = json.dumps(
            {"messages": list(request.messages), "config": request.config.to_dict()}, ensure_ascii=False
        )
        rows = []
        for k, ch in enumerate(response.choices):
            completion = ch.completion_tokens
            if completion is None:
                completion = response.completion_tokens // n + (1 if k < response.completion_tokens % n else 0)
            rows.append(
                (
                    cache_key(kind, model, request, k), kind, model, k, ch.text, ch.finish_reason,
                    None if ch.logprobs is None else json.dumps(list(ch.logprobs)),
                    None if ch.tokens is None else json.dumps(list(ch.tokens), ensure_ascii=False),
                    response.model, response.fingerprint, response.prompt_tokens, int(completion),
                    response.latency_s, req_json, time.time(),
                )
            )
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                self._db.executemany("INSERT OR IGNORE INTO samples VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def clear(self) -> None:
        """Delete every stored sample."""
        with self._lock:
            self._db.execute("DELETE FROM samples")

    def close(self) -> None:
        """Close the database (further use raises)."""
        with self._lock:
            self._db.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"ResponseCache({self.path!r})"


def _response(rows: list[tuple]) -> Response:
    choices = []
    for text, finish, logprobs, tokens, *_rest in rows:
        choices.append(
            Choice(
                text=text,
                finish_reason=finish,
                logprobs=None if logprobs is None else tuple(json.loads(logprobs)),
                tokens=None if tokens is None else tuple(json.loads(tokens)),
                completion_tokens=_rest[-2],
            )
        )
    first = rows[0]
    return Response(
        choices=tuple(choices),
        model=first[4] or "",
        fingerprint=first[5],
        prompt_tokens=int(first[6] or 0),
        completion_tokens=sum(int(r[7] or 0) for r in rows),
        latency_s=float(first[8] or 0.0),
        cached=True,
    )


class CachedBackend(BackendBase):
    """Wrap any backend so that answered requests are served from a :class:`ResponseCache`.

    Parameters
    ----------
    backend : Backend
        The backend that answers cache misses.
    cache : ResponseCache or path-like
        The cache (a path opens one).

    Notes
    -----
    Identical requests within one batch are sent once.  Each response is written to the
    cache the moment the inner backend reports it; failures are passed through, not stored.

    Examples
    --------
    >>> from ipcausal.backends import get_backend  # doctest: +SKIP
    >>> with CachedBackend(get_backend("local"), "responses.sqlite") as b:  # doctest: +SKIP
    ...     b.generate([Request(messages_of("Hi"))])[0].cached
    False
    """

    def __init__(self, backend: Backend, cache: ResponseCache | str | os.PathLike[str]) -> None:
        if not isinstance(backend, Backend):
            raise TypeError("`backend` must implement ipcausal.backends.Backend")
        self._owns_cache = isinstance(cache, (str, os.PathLike))
        if isinstance(cache, (str, os.PathLike)):
            cache = ResponseCache(cache)
        if not isinstance(cache, ResponseCache):
            raise TypeError(f"`cache` must be a ResponseCache or a path, got {type(cache).__name__}")
        super().__init__()
        self.inner = backend
        self.cache = cache
        self.kind = backend.kind
        self.model = backend.model

    def _outcomes(self, requests: Sequence[Request], on_result: OnResult, concurrency: int | None) -> list[Outcome]:
        results: list[Outcome | None] = [None] * len(requests)
        for i, hit in enumerate(self.cache.get_many(self.kind, self.model, requests)):
            if hit is not None:
                results[i] = hit
                on_result(i, hit)
        # group identical misses so that each distinct request is sent once
        todo: dict[tuple[str, int], list[int]] = {}
        for i, r in enumerate(requests):
            if results[i] is None:
                todo.setdefault((cache_key(self.kind, self.model, r, 0), r.config.n), []).append(i)
        groups = list(todo.values())
        send = [requests[g[0]] for g in groups]
        lock = threading.Lock()

        def arrived(j: int, out: Outcome) -> None:
            if isinstance(out, Response):
                self.cache.put(self.kind, self.model, send[j], out)
                if send[j].config.n > 1:  # samples stored earlier (a smaller n) are kept, not replaced
                    merged = self.cache.get(self.kind, self.model, send[j])
                    if merged is not None:
                        out = dataclasses.replace(merged, cached=False, latency_s=out.latency_s,
                                                  prompt_tokens=out.prompt_tokens,
                                                  completion_tokens=out.completion_tokens)
            with lock:
                for i in groups[j]:
                    results[i] = out
                    on_result(i, out)

        if send:
            outs = generate_outcomes(self.inner, send, on_result=arrived, concurrency=concurrency)
            for j, out in enumerate(outs):  # a backend that skipped its callback still gets stored
                if results[groups[j][0]] is None:
                    arrived(j, out)
        return results  # type: ignore[return-value]

    @property
    def inner_usage(self) -> object:
        """The wrapped backend's own usage (what was really sent), when it keeps one."""
        return getattr(self.inner, "usage", None)

    def close(self) -> None:
        """Close the wrapped backend, and the cache when this object opened it from a path."""
        if not self._closed:
            close = getattr(self.inner, "close", None)
            if callable(close):
                close()
            if self._owns_cache:
                self.cache.close()
        super().close()
