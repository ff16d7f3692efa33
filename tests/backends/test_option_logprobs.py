"""``option_logprobs``: llama.cpp in process (SmolLM2), llama_cpp.server through the OpenAI backend, refusals."""

from __future__ import annotations

import numpy as np
import pytest

from _helpers_backends import EchoBackend
from ipcausal.backends import BackendError, Request, messages_of
from ipcausal.backends.base import check_option_texts, supports_option_logprobs
from ipcausal.scoring.logprob import option_distribution, require_option_logprobs

llama_cpp = pytest.importorskip("llama_cpp", reason="needs llama-cpp-python: pip install 'ipcausal[local]'")

from ipcausal.backends.local import LocalBackend, resolve_gguf  # noqa: E402

PROMPT = "What is the capital of Australia?\n1. Sydney\n2. Canberra\nReply with the number of your choice only."


@pytest.fixture(scope="module")
def local() -> LocalBackend:
    with LocalBackend(n_threads=2, n_ctx=512) as b:
        yield b


@pytest.fixture(scope="module")
def raw_llama():  # an independent model instance: the oracle
    llm = llama_cpp.Llama(model_path=str(resolve_gguf()), n_ctx=512, n_threads=2, logits_all=True, verbose=False)
    yield llm
    llm.close()


def _direct(llm, prompt_text: str, option: str) -> tuple[float, int]:
    """log p(option | prompt) straight from an independent model's logits, one token at a time."""
    ptoks = llm.tokenize(prompt_text.encode(), add_bos=bool(llm._model.add_bos_token()), special=True)
    otoks = llm.tokenize(option.encode(), add_bos=False, special=False)
    total = 0.0
    for j, tok in enumerate(otoks):  # re-evaluate each prefix: logits of its last position only
        llm.reset()
        llm.eval(ptoks + otoks[:j])
        row = np.asarray(llm.scores[len(ptoks) + j - 1], dtype=np.float64)
        total += float(row[tok] - np.log(np.sum(np.exp(row - row.max()))) - row.max())
    return total, len(otoks)


def test_local_option_logprobs_equal_a_direct_computation_for_a_two_token_option(local, raw_llama) -> None:
    req = Request(messages_of(PROMPT))
    text = local._chat_prompt(req)
    assert "Reply with the number" in text and text.endswith("<|im_start|>assistant\n")
    got = local.option_logprobs(req, ["Canberra", "2"])
    want, n_tok = _direct(raw_llama, text, "Canberra")
    assert n_tok == 2  # the case the brief asks for: a two-token option
    assert got[0] == pytest.approx(want, abs=2e-3)
    want2, _ = _direct(raw_llama, text, "2")
    assert got[1] == pytest.approx(want2, abs=2e-3)
    assert all(v < 0 for v in got)


def test_local_probabilities_over_options_sum_to_one_and_order_is_kept(local) -> None:
    p = option_distribution(local, PROMPT, ["Sydney", "Canberra"])
    assert p.sum() == pytest.approx(1.0, abs=1e-12) and np.all(p > 0)
    lp = np.array(local.option_logprobs(Request(messages_of(PROMPT)), ["1", "2"]))
    want = np.exp(lp - lp.max()) / np.exp(lp - lp.max()).sum()
    np.testing.assert_allclose(p, want, rtol=1e-9)
    # the raw (unnormalised) probabilities of the two options do not sum to 1
    assert np.exp(lp).sum() < 1.0


def test_local_generation_still_works_after_scoring(local) -> None:
    from ipcausal.backends import GenerationConfig

    (resp,) = local.generate([Request(messages_of("Say hi"), GenerationConfig(max_tokens=4))])
    assert isinstance(resp.text, str)


def test_bad_inputs_name_the_parameter(local) -> None:
    with pytest.raises(TypeError, match="`request` must be a Request"):
        local.option_logprobs("hi", ["1"])
    with pytest.raises(TypeError, match="`options` must be a sequence"):
        local.option_logprobs(Request(messages_of("hi")), "12")
    with pytest.raises(ValueError, match="`options` must hold at least one non-empty text"):
        check_option_texts(["1", ""])


def test_a_backend_without_the_capability_fails_before_any_request() -> None:
    from ipcausal.pairs import PairSet
    from ipcausal.scoring.logprob import score_logprob

    echo = EchoBackend()
    assert not supports_option_logprobs(echo)
    ps = PairSet.from_records([{"pair_id": 0, "background_i": "a", "background_j": "b", "x_i": "q a", "x_j": "q b",
                                "options": ["x", "y"], "correct_option": 1}])
    with pytest.raises(ValueError, match="scorer 'logprob' needs option log-probabilities, which backend 'echo'"):
        score_logprob(ps, echo)
    assert echo.calls == 0 and echo.total_asked == 0


def test_refusals_name_the_backend_and_say_why_for_a_cached_one(tmp_path) -> None:
    class NoOptions:  # a backend of kind "vllm" without the method (e.g. a user's own wrapper)
        kind, model = "vllm", "m"

        def generate(self, requests):  # pragma: no cover - never called
            raise AssertionError

    with pytest.raises(ValueError, match=r"which backend 'vllm' \(model 'm'\) cannot give; use a local"):
        require_option_logprobs(NoOptions())
    from ipcausal.backends.cache import CachedBackend, ResponseCache

    with pytest.raises(ValueError, match="uncached backend"):
        require_option_logprobs(CachedBackend(EchoBackend(), ResponseCache(tmp_path / "c.sqlite")))


# -- the real llama_cpp.server through the OpenAI-compatible backend -------------------------
pytest.importorskip("openai", reason="needs the openai client")


@pytest.fixture(scope="module")
def server(llama_server: str) -> str:
    return llama_server  # the session's server (tests/conftest.py); the context size plays no part here


def test_llama_server_echo_logprobs_are_shifted_by_one_token(server, raw_llama) -> None:
    """llama-cpp-python's server echoes, for each prompt token, the log-softmax of the logits *at* that
    token (the next-token distribution) instead of the logits before it.  The OpenAI backend reads what
    the server sends, so against this server its option log-probabilities are not the model's: this test
    pins the defect down (and fails, to update docs/backends.md, once the server is fixed)."""
    from ipcausal.backends.openai_backend import OpenAIBackend

    b = OpenAIBackend(model="smollm2", base_url=server)
    got = b.option_logprobs(Request(messages_of("2+2=")), ["4", "5"])
    text = "2+2=\n"  # the backend's documented raw-text prompt: contents + newline
    far = []
    for g, opt in zip(got, ["4", "5"]):
        toks = raw_llama.tokenize((text + opt).encode(), add_bos=bool(raw_llama._model.add_bos_token()),
                                  special=False)
        raw_llama.reset()
        raw_llama.eval(toks)
        rows = np.asarray(raw_llama.scores[: len(toks)], dtype=np.float64)
        logsm = rows - rows.max(axis=1, keepdims=True)
        logsm -= np.log(np.exp(logsm).sum(axis=1, keepdims=True))
        model_value = logsm[len(toks) - 2, toks[-1]]  # log p(option | prompt): what a conformant server echoes
        shifted = logsm[len(toks) - 1, toks[-1]]
        if opt == "4":  # the first request (no prompt cache on the server yet): exactly the shifted value
            assert g == pytest.approx(shifted, abs=2e-3)
        far.append(abs(g - model_value) > 0.05)
    assert all(far)
    p = option_distribution(b, "2+2=", ["4", "5"])
    assert p.sum() == pytest.approx(1.0)


def test_a_server_that_does_not_echo_logprobs_gives_a_clear_error(monkeypatch) -> None:
    from types import SimpleNamespace

    import openai

    from ipcausal.backends.openai_backend import OpenAIBackend

    class NoEcho:
        def __init__(self, **kw):
            self.completions = SimpleNamespace(create=lambda **kw: SimpleNamespace(
                choices=[SimpleNamespace(text="x", logprobs=None)]))

        def close(self):
            pass

    monkeypatch.setattr(openai, "OpenAI", NoEcho)
    b = OpenAIBackend(model="m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(BackendError, match="did not echo prompt log-probabilities"):
        b.option_logprobs(Request(messages_of("hi")), ["1", "2"])
