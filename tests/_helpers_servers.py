"""Real servers on 127.0.0.1 for the backend tests (imported explicitly by the test modules).

* :func:`start_llama_server` runs ``python -m llama_cpp.server`` with the SmolLM2 GGUF on a
  free port and waits until ``/v1/models`` answers.
* :class:`FaultProxy` is a small HTTP front that forwards to an upstream server and, on
  request, injects faults: an HTTP status (429 with ``Retry-After``, 500, …), a delay (to
  cause client timeouts) or a truncated JSON body.  It records every request it saw.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def start_llama_server(model: Path, *, n_ctx: int = 1024, timeout: float = 180.0,
                       n_ubatch: int | None = None) -> Iterator[str]:
    """Run ``python -m llama_cpp.server`` and yield its base URL (``http://127.0.0.1:PORT/v1``).

    ``n_ubatch`` (default: the server's own) sets the decode micro-batch; ``1`` decodes one token
    at a time, which a llama.cpp build miscompiled for AMX needed (the Makefile builds without AMX).
    """
    with llama_server_process(model, n_ctx=n_ctx, timeout=timeout, n_ubatch=n_ubatch) as (url, _proc):
        yield url


@contextlib.contextmanager
def llama_server_process(model: Path, *, n_ctx: int = 1024, timeout: float = 180.0, alias: str | None = "smollm2",
                         n_ubatch: int | None = None) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """Like :func:`start_llama_server`, yielding ``(url, process)`` (to freeze it with SIGSTOP).

    ``alias=None`` starts the server without ``--model_alias`` (it then lists the model's path).
    """
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
           "--port", str(port), "--n_ctx", str(n_ctx)]
    if alias is not None:
        cmd += ["--model_alias", alias]
    if n_ubatch is not None:
        cmd += ["--n_ubatch", str(n_ubatch)]
    log = tempfile.TemporaryFile()  # llama.cpp logs ~200 kB while loading: a pipe would fill and block it
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + timeout
    try:
        while True:
            if proc.poll() is not None:
                log.seek(0)
                err = log.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"llama_cpp.server exited with {proc.returncode}: {err}")
            try:
                with urllib.request.urlopen(f"{url}/models", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"llama_cpp.server did not answer on {url} within {timeout}s")
            time.sleep(0.2)
        yield url, proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(proc.pid, signal.SIGCONT)  # a frozen server cannot act on SIGTERM
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


class FaultProxy:
    """Forward HTTP requests to ``upstream``, injecting the faults queued in :attr:`script`.

    Each POST takes the next action from :attr:`script` (once it is empty, requests pass):

    * ``("pass",)`` — forward unchanged;
    * ``("status", code, headers, body)`` — answer with this status instead of forwarding;
    * ``("sleep", seconds)`` — wait, then forward (the client may have timed out by then);
    * ``("truncate",)`` — forward, then send only the first half of the JSON body.

    Set :attr:`always` to an action to repeat it for every POST.
    """

    def __init__(self, upstream: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.script: list[tuple[Any, ...]] = []
        self.always: tuple[Any, ...] | None = None
        self.requests: list[dict[str, Any]] = []
        self.inflight = 0
        self.max_inflight = 0
        self._lock = threading.Lock()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                proxy._forward(self, None)

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                with proxy._lock:
                    action = proxy.always or (proxy.script.pop(0) if proxy.script else ("pass",))
                    proxy.requests.append({"t": time.monotonic(), "path": self.path, "json": json.loads(body or b"{}"),
                                           "auth": self.headers.get("Authorization")})
                    proxy.inflight += 1
                    proxy.max_inflight = max(proxy.max_inflight, proxy.inflight)
                try:
                    proxy._act(self, action, body)
                finally:
                    with proxy._lock:
                        proxy.inflight -= 1

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    def posts(self) -> list[dict[str, Any]]:
        """The chat-completion requests seen so far."""
        with self._lock:
            return [r for r in self.requests if r["path"].endswith("/chat/completions")]

    def _upstream(self, handler: BaseHTTPRequestHandler, body: bytes | None) -> tuple[int, bytes, str]:
        path = handler.path[len("/v1"):] if handler.path.startswith("/v1") else handler.path
        req = urllib.request.Request(self.upstream + path, data=body, method="POST" if body is not None else "GET",
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=120) as resp:
                return resp.status, resp.read(), resp.headers.get("Content-Type", "application/json")
        except urllib.error.HTTPError as exc:
            return exc.code, exc.read(), "application/json"

    def _send(self, handler: BaseHTTPRequestHandler, code: int, body: bytes, headers: dict[str, str] | None = None,
              ctype: str = "application/json") -> None:
        try:
            handler.send_response(code)
            handler.send_header("Content-Type", ctype)
            handler.send_header("Content-Length", str(len(body)))
            for k, v in (headers or {}).items():
                handler.send_header(k, v)
            handler.end_headers()
            handler.wfile.write(body)
        except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout test)
            pass

    def _forward(self, handler: BaseHTTPRequestHandler, body: bytes | None) -> None:
        code, data, ctype = self._upstream(handler, body)
        self._send(handler, code, data, ctype=ctype)

    def _act(self, handler: BaseHTTPRequestHandler, action: tuple[Any, ...], body: bytes) -> None:
        kind = action[0]
        if kind == "status":
            _, code, headers, payload = action
            data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
            self._send(handler, code, data, headers)
        elif kind == "status_echo_auth":  # a server that quotes the key back in its error
            _, code = action
            msg = {"error": {"message": f"Incorrect API key provided: {handler.headers.get('Authorization')}"}}
            self._send(handler, code, json.dumps(msg).encode())
        elif kind == "sleep":
            time.sleep(action[1])
            self._forward(handler, body)
        elif kind == "truncate":
            code, data, ctype = self._upstream(handler, body)
            self._send(handler, 200, data[: len(data) // 2], ctype=ctype)
        else:
            self._forward(handler, body)

    def close(self) -> None:
        """Stop serving."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> FaultProxy:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
