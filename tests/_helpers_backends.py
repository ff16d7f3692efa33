"""Tiny deterministic backends: EchoBackend and ScriptedBackend.

EchoBackend: a tiny deterministic backend that implements the protocol (for cache/runner logic tests).

It answers ``"echo:<last message>"`` (plus the sample index when ``n > 1``), fails with a
:class:`BackendError` for prompts containing ``"FAIL"``, and counts what it was asked.
It deliberately does *not* subclass BackendBase, so it also exercises the protocol-only path.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Sequence

from ipcausal.backends import BackendError, Choice, Request, Response


class EchoBackend:
    kind = "echo"

    def __init__(self, model: str = "echo-1", fail_word: str | None = "FAIL") -> None:
        self.model = model
        self.fail_word = fail_word
        self.asked: Counter[str] = Counter()
        self.calls = 0
        self._lock = threading.Lock()

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        with self._lock:
            self.calls += 1
        for req in requests:
            text = req.messages[-1]["content"]
            with self._lock:
                self.asked[text] += 1
            if self.fail_word and self.fail_word in text:
                raise BackendError(f"refused: {self.fail_word}")
            choices = tuple(
                Choice(f"echo:{text}" + (f"#{k}" if req.config.n > 1 else ""), "stop", completion_tokens=2)
                for k in range(req.config.n)
            )
            out.append(Response(choices, model=self.model, fingerprint="fp-1", prompt_tokens=len(text.split()),
                                completion_tokens=2 * req.config.n))
        return out

    @property
    def total_asked(self) -> int:
        return sum(self.asked.values())


class ScriptedBackend:
    """Answers each request with ``reply(prompt_text, request)``; records every request."""

    kind = "scripted"
    model = "scripted-test"

    def __init__(self, reply: Callable[[str, Request], str] | Sequence[str]) -> None:
        self.requests: list[Request] = []
        if callable(reply):
            self._reply = reply
        else:
            replies = list(reply)
            self._reply = lambda _p, _r: replies[min(len(self.requests) - 1, len(replies) - 1)]

    def generate(self, requests: Sequence[Request]) -> list[Response]:
        out = []
        for r in requests:
            self.requests.append(r)
            text = self._reply(r.messages[-1]["content"], r)
            out.append(Response(choices=(Choice(text=text),), model=self.model))
        return out
