"""The "server stopped answering" breaker: its rules, and a real llama.cpp server frozen with SIGSTOP."""

from __future__ import annotations

import io
import os
import signal

import pytest

from ipcausal.backends.breaker import Breaker


class _Clock:
    def __init__(self) -> None:
        self.t = 0.0

    def __call__(self) -> float:
        return self.t


def test_refused_requests_trip_it_by_count() -> None:
    clock = _Clock()
    b = Breaker(streak=3, quiet_s=60.0, clock=clock)
    for _ in range(2):
        b.down("refused")
        b.gave_up("refused")
    assert not b.tripped  # four failed attempts, two requests, no time passed
    b.gave_up("refused")
    assert b.tripped and b.reason == "refused"


def test_silence_trips_it_by_time_after_two_attempts() -> None:
    clock = _Clock()
    b = Breaker(streak=100, quiet_s=60.0, clock=clock)
    clock.t = 59.0
    b.down("timed out")
    b.down("timed out")
    assert not b.tripped  # not quiet long enough
    clock.t = 61.0
    b.answered()  # … and an answer starts the silence afresh
    clock.t = 130.0
    b.down("timed out")
    assert not b.tripped  # one attempt is not enough
    b.down("timed out")
    assert b.tripped and b.since_trip() == 0.0
    clock.t = 140.0
    assert b.since_trip() == 10.0
    b.retrip("probe timed out")
    assert b.tripped and b.since_trip() == 0.0 and b.reason == "probe timed out"
    b.reset()
    assert not b.tripped and b.reason == ""


def test_breaker_validation() -> None:
    with pytest.raises(ValueError, match=r"`streak` must be a positive integer"):
        Breaker(streak=0)
    with pytest.raises(ValueError, match=r"`quiet_s` must be a positive number"):
        Breaker(quiet_s=0)
    with pytest.raises(TypeError, match=r"`clock` must be callable"):
        Breaker(clock=1.0)  # type: ignore[arg-type]


# -- a real server, frozen --------------------------------------------------------------------
pytest.importorskip("openai", reason="needs the openai client: pip install 'ipcausal[openai]'")
pytest.importorskip("llama_cpp.server", reason="needs llama-cpp-python[server]: pip install 'ipcausal[local]'")
tqdm = pytest.importorskip("tqdm").tqdm

import ipcausal  # noqa: E402
from _helpers_servers import llama_server_process  # noqa: E402
from ipcausal.backends import BackendError, GenerationConfig, Request, messages_of  # noqa: E402
from ipcausal.backends.local import resolve_gguf  # noqa: E402
from ipcausal.backends.openai_backend import OpenAIBackend  # noqa: E402
from ipcausal.pairs import PairSet  # noqa: E402
from ipcausal.study.run import summarize  # noqa: E402


@pytest.fixture(scope="module")
def server() -> tuple[str, int]:
    with llama_server_process(resolve_gguf()) as (url, proc):
        yield url, proc.pid


def _backend(url: str) -> OpenAIBackend:
    # one-second timeouts, three retries: without the breaker, 16 requests would take ~32 s
    return OpenAIBackend("smollm2", base_url=url, timeout=1.0, max_retries=3, backoff=0.01, concurrency=2)


def _req(k: int) -> Request:
    return Request(messages_of(f"Say the number {k}."), GenerationConfig(max_tokens=2))


def _wait_until_idle(url: str) -> None:
    """One tiny completion with a patient client: it is answered once the backlog is worked off
    (on a loaded machine that takes longer than the backend's one-second timeout)."""
    import json
    import urllib.request

    body = json.dumps({"prompt": "1", "max_tokens": 1}).encode()
    req = urllib.request.Request(f"{url}/completions", data=body, headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as resp:  # noqa: S310 - 127.0.0.1 only
        resp.read()


def test_a_hung_server_trips_the_breaker(server: tuple[str, int], monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import ipcausal.backends.openai_backend as ob

    url, pid = server
    b = _backend(url)
    os.kill(pid, signal.SIGSTOP)  # accepts connections (the kernel does), never answers
    try:
        outs = b.generate_outcomes([_req(k) for k in range(16)])
        # the next batch is skipped at once: no probe before 30 s have passed
        later = b.generate_outcomes([_req(k) for k in range(16, 20)])
        assert all("skipped, the server stopped answering" in str(o) for o in later)
        monkeypatch.setattr(ob, "_PROBE_EVERY", 0.0)  # a probe now: the server is still frozen
        assert all("skipped" in str(o) for o in b.generate_outcomes([_req(20)]))
        assert "timed out after 1s" in b._breaker.reason
    finally:
        os.kill(pid, signal.SIGCONT)
    _wait_until_idle(url)  # the server first works off the requests it took in while frozen
    # from here on the test waits on the server, not on a clock: a one-second timeout suited a frozen
    # server (which never answers), but a loaded machine may take longer than that to answer a live one
    b.timeout = 120.0
    # back: the probe finds it answering and the batch goes through (no check() needed)
    assert all(not isinstance(o, BackendError) for o in b.generate_outcomes([_req(21)]))
    reasons = [str(o) for o in outs]
    assert all(isinstance(o, BackendError) and o.retryable for o in outs)
    skipped = [r for r in reasons if "skipped, the server stopped answering (timed out after 1s)" in r]
    # two attempts in a row timed out with 2 s of silence: the rest never waited for their timeouts
    assert len(skipped) >= 14, reasons
    assert not any("gave up after 4 attempts" in r for r in reasons), reasons
    # the server is back: a successful check resets the breaker and requests go through again
    assert b.check() == ["smollm2"]
    assert all(not isinstance(o, BackendError) for o in b.generate_outcomes([_req(0)]))


class _FreezingBar(tqdm):  # type: ignore[misc, valid-type]
    """A real tqdm bar that freezes the server once two responses have arrived, and from then on
    gives the backend one-second timeouts (a frozen server never answers: any timeout would do)."""

    def __init__(self, pid: int, backend: OpenAIBackend, **kw: object) -> None:
        super().__init__(**kw)
        self.pid, self.backend, self.seen = pid, backend, 0

    def update(self, n: float | None = 1) -> bool | None:
        self.seen += 1
        if self.seen == 2:
            os.kill(self.pid, signal.SIGSTOP)
            self.backend.timeout = 1.0  # taken by the next batch's client
        return super().update(n)


def test_a_run_whose_server_hangs_midway_shows_failures_and_resumes(server: tuple[str, int], tmp_path) -> None:  # type: ignore[no-untyped-def]
    url, pid = server
    pairs = PairSet.from_records([{"pair_id": k, "background_i": "US", "background_j": "UK",
                                   "x_i": f"Name colour {k}.", "x_j": f"Name color {k}."} for k in range(10)])
    # the first two answers wait on the server however loaded the machine is (no clock decides whether
    # they arrive); the batch of two ends with them and the freeze, the next batches meet a frozen server
    b = OpenAIBackend("smollm2", base_url=url, timeout=120.0, down_after=2.0, max_retries=3, backoff=0.01,
                      concurrency=2)
    text = io.StringIO()
    bar = _FreezingBar(pid, b, total=20, file=text, mininterval=0, ascii=True)
    try:
        out = ipcausal.run(pairs, b, cache=tmp_path / "c.sqlite", config=GenerationConfig(max_tokens=2),
                           progress=bar, concurrency=1, batch_size=2)
    finally:
        os.kill(pid, signal.SIGCONT)
        bar.close()
    s = summarize(out)
    assert s.completed >= 2 and s.failed == 20 - s.completed
    assert sum("skipped, the server stopped answering" in f.reason for f in s.failures) >= s.failed - 2
    assert f"{s.failed} failed" in text.getvalue()  # not a bare "100% 20/20"
    # a rerun (its preflight finds the server back) sends only what is missing; it waits on the server
    _wait_until_idle(url)
    b.timeout = 120.0
    again = ipcausal.run(pairs, b, cache=tmp_path / "c.sqlite", config=GenerationConfig(max_tokens=2), progress=False)
    s2 = summarize(again)
    assert s2.failed == 0 and s2.from_cache == s.completed
