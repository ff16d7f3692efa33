"""The SQLite response cache: key properties, persistence, errors never stored, no resends."""

from __future__ import annotations

import dataclasses
import sqlite3

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _helpers_backends import EchoBackend
from ipcausal.backends import BackendError, Choice, GenerationConfig, Request, Response, messages_of
from ipcausal.backends.cache import CachedBackend, ResponseCache, cache_key

configs = st.builds(
    GenerationConfig,
    max_tokens=st.integers(1, 4),
    temperature=st.sampled_from([0.0, 0.7]),
    top_p=st.sampled_from([1.0, 0.9]),
    seed=st.sampled_from([None, 0, 1]),
    stop=st.sampled_from([(), ("\n",)]),
    n=st.integers(1, 3),
    logprobs=st.booleans(),
    repeat_penalty=st.sampled_from([1.0, 1.1]),
)


@settings(max_examples=200, deadline=None, derandomize=True)
@given(a=configs, b=configs, i=st.integers(0, 2), j=st.integers(0, 2))
def test_key_changes_with_every_setting_and_sample_index_but_not_n(a, b, i, j) -> None:  # type: ignore[no-untyped-def]
    ka = cache_key("local", "m", Request(messages_of("q"), a), i)
    kb = cache_key("local", "m", Request(messages_of("q"), b), j)
    same = dataclasses.replace(a, n=1) == dataclasses.replace(b, n=1) and i == j
    assert (ka == kb) == same


def test_key_changes_with_kind_model_and_messages() -> None:
    req = Request(messages_of("q"))
    base = cache_key("local", "m", req, 0)
    assert cache_key("openai", "m", req, 0) != base
    assert cache_key("local", "m2", req, 0) != base
    assert cache_key("local", "m", Request(messages_of("q ")), 0) != base
    assert cache_key("local", "m", Request(messages_of("q", system="s")), 0) != base
    assert cache_key("local", "m", Request(messages_of("q")), 0) == base  # stable


def test_key_validation() -> None:
    req = Request(messages_of("q"))
    with pytest.raises(ValueError, match=r"`kind` must be a non-empty string"):
        cache_key("", "m", req, 0)
    with pytest.raises(TypeError, match=r"`model` must be a string"):
        cache_key("k", None, req, 0)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`request` must be a Request"):
        cache_key("k", "m", "q", 0)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"`sample_index` must be a non-negative integer"):
        cache_key("k", "m", req, -1)


def _resp(*texts: str) -> Response:
    return Response(tuple(Choice(t, "stop", (-0.5, -1.0), ("a", "b"), 2) for t in texts), "mid", "fp", 7, 2 * len(texts))


def test_put_get_round_trip_and_persistence(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "sub" / "c.sqlite"
    req = Request(messages_of("q"), GenerationConfig(n=2, logprobs=True))
    with ResponseCache(path) as cache:
        assert cache.get("k", "m", req) is None
        cache.put("k", "m", req, _resp("x", "y"))
        assert len(cache) == 2
    with ResponseCache(path) as cache:  # reopened: still there
        got = cache.get("k", "m", req)
        assert got is not None and got.cached
        assert [c.text for c in got.choices] == ["x", "y"]
        assert got.choices[0].logprobs == (-0.5, -1.0) and got.choices[0].tokens == ("a", "b")
        assert (got.model, got.fingerprint, got.prompt_tokens, got.completion_tokens) == ("mid", "fp", 7, 4)
        # asking for more samples than stored is a miss; fewer is a hit
        assert cache.get("k", "m", dataclasses.replace(req, config=GenerationConfig(n=3, logprobs=True))) is None
        assert cache.get("k", "m", dataclasses.replace(req, config=GenerationConfig(n=1, logprobs=True))).text == "x"
        assert cache_key("k", "m", req, 0) in cache
    mode = sqlite3.connect(path).execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_cache_validation(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(TypeError, match=r"`path` must be a file path"):
        ResponseCache(3)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r"`path` is a folder"):
        ResponseCache(tmp_path)
    junk = tmp_path / "junk.sqlite"
    junk.write_bytes(b"this is not a database" * 100)
    with pytest.raises(ValueError, match=r"`path`: .* is not a usable SQLite cache"):
        ResponseCache(junk)
    cache = ResponseCache(":memory:")
    req = Request(messages_of("q"))
    with pytest.raises(TypeError, match=r"`response`: errors are never cached"):
        cache.put("k", "m", req, BackendError("boom"))  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`response` must be a Response"):
        cache.put("k", "m", req, "text")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`backend` must implement"):
        CachedBackend(object(), cache)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"`cache` must be a ResponseCache or a path"):
        CachedBackend(EchoBackend(), 42)  # type: ignore[arg-type]


def test_completed_requests_are_never_sent_again_and_errors_never_stored(tmp_path) -> None:  # type: ignore[no-untyped-def]
    inner = EchoBackend()
    reqs = [Request(messages_of(t)) for t in ("a", "FAIL", "b", "a")]
    with CachedBackend(inner, tmp_path / "c.sqlite") as cb:
        outs = cb.generate_outcomes(reqs)
        assert [getattr(o, "text", None) for o in outs] == ["echo:a", None, "echo:b", "echo:a"]
        assert isinstance(outs[1], BackendError)
        assert inner.asked == {"a": 1, "FAIL": 1, "b": 1}  # the duplicate "a" was sent once
        assert len(cb.cache) == 2  # the failure was not stored
        again = cb.generate_outcomes(reqs)
        assert [o.cached for o in again if isinstance(o, Response)] == [True, True, True]
        assert inner.asked == {"a": 1, "FAIL": 2, "b": 1}  # only the failure was asked again
        assert cb.kind == "echo" and cb.model == "echo-1"


def test_changed_settings_ask_again_and_more_samples_keep_the_old_ones(tmp_path) -> None:  # type: ignore[no-untyped-def]
    inner = EchoBackend()
    cb = CachedBackend(inner, ResponseCache(tmp_path / "c.sqlite"))
    cb.generate([Request(messages_of("q"), GenerationConfig(n=1))])
    cb.generate([Request(messages_of("q"), GenerationConfig(n=1, temperature=0.5))])
    assert inner.asked["q"] == 2
    two = cb.generate([Request(messages_of("q"), GenerationConfig(n=2))])[0]
    assert [c.text for c in two.choices] == ["echo:q", "echo:q#1"]  # sample 0 kept from the n=1 run
    assert len(cb.cache) == 3
    cb.close()
    # the cache object was passed in, so closing the backend leaves it open
    assert len(cb.cache) == 3
