"""``VLLMBackend.option_logprobs`` without vLLM: the token arithmetic and the engine calls, on a fake engine.

The fake engine is a tiny known language model over a 64-token vocabulary (character tokens);
its ``generate`` answers ``prompt_logprobs`` the way vLLM 0.32 does (``None`` at position 0,
then ``{token_id: Logprob}`` holding the token at that position and the top token), so the
values the backend returns can be checked against a direct sum of the model's log-probabilities.
The real engine is checked in ``test_vllm.py`` (opt-in).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np
import pytest

from ipcausal.backends import BackendError, Request, messages_of
from ipcausal.backends._vllm_options import chat_prompt_ids, continuation_logprob, option_sequences
from ipcausal.backends.base import BackendBase, supports_option_logprobs
from ipcausal.backends.vllm_backend import VLLMBackend
from ipcausal.scoring.logprob import option_distribution

V = 64
BOS = 1


def _log_probs(prefix: list[int]) -> np.ndarray:
    """log p(· | prefix) of the fake model: a softmax of logits that depend on the whole prefix."""
    h = sum((k + 1) * t for k, t in enumerate(prefix)) % 97
    logits = np.sin(np.arange(V) * (h + 3) * 0.37) * 3.0
    return logits - logits.max() - math.log(np.exp(logits - logits.max()).sum())


@dataclass(frozen=True)
class _Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


class _Tokenizer:
    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        ids = [2 + ord(c) % (V - 2) for c in text]
        return ([BOS] if add_special_tokens else []) + ids

    def apply_chat_template(self, conv, tokenize: bool, add_generation_prompt: bool) -> str:  # noqa: ANN001
        assert not tokenize and add_generation_prompt
        return "".join(f"<{m['role']}>{m['content']}" for m in conv) + "<assistant>"


class _Engine:
    """Just the parts of ``vllm.LLM`` that ``option_logprobs`` touches."""

    def __init__(self) -> None:
        self.tok = _Tokenizer()
        self.calls: list[tuple[list[list[int]], object]] = []

    def get_tokenizer(self) -> _Tokenizer:
        return self.tok

    def _preprocess_chat_one(self, conv):  # noqa: ANN001, ANN202 - as LLM.chat renders: template, BOS from it
        text = self.tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=True)
        return {"type": "token", "prompt_token_ids": [BOS] + self.tok.encode(text, add_special_tokens=False)}

    def generate(self, prompts, sampling_params, use_tqdm):  # noqa: ANN001, ANN201
        seqs = [list(p["prompt_token_ids"]) for p in prompts]
        self.calls.append((seqs, sampling_params))
        outs = []
        for seq in seqs:
            plp: list[dict[int, _Logprob] | None] = [None]
            for t in range(1, len(seq)):
                row = _log_probs(seq[:t])
                top = int(row.argmax())
                plp.append({seq[t]: _Logprob(float(row[seq[t]])), top: _Logprob(float(row[top]), 1)})
            outs.append(SimpleNamespace(prompt_token_ids=seq, prompt_logprobs=plp))
        return outs


def _backend(engine: _Engine) -> VLLMBackend:
    """A VLLMBackend around the fake engine (``__init__`` would start a real one)."""
    b = VLLMBackend.__new__(VLLMBackend)
    BackendBase.__init__(b)
    import threading

    b._lock = threading.Lock()
    b._llm = engine
    b._sampling = lambda **kw: SimpleNamespace(**kw)
    b._errors = (ValueError, RuntimeError)
    b.model, b.batch_size, b._version = "fake", 8, "0"
    return b


def test_option_logprobs_equal_the_direct_sum_and_use_one_engine_call() -> None:
    engine = _Engine()
    b = _backend(engine)
    assert supports_option_logprobs(b)
    req = Request(messages_of("Pick one.", "Be brief."))
    got = b.option_logprobs(req, ["1", "22", "Canberra"])
    prompt = engine._preprocess_chat_one([dict(m) for m in req.messages])["prompt_token_ids"]
    want = []
    for opt in ["1", "22", "Canberra"]:
        ids = engine.tok.encode(opt, add_special_tokens=False)
        seq = prompt + ids
        want.append(sum(float(_log_probs(seq[:t])[seq[t]]) for t in range(len(prompt), len(seq))))
    assert got == pytest.approx(want, abs=1e-12)
    assert len(set(got)) == 3 and all(v < 0 for v in got)
    assert len(engine.calls) == 1  # all options of the request in one generate call
    seqs, params = engine.calls[0]
    assert [len(s) - len(prompt) for s in seqs] == [1, 2, 8]
    assert params.max_tokens == 1 and params.prompt_logprobs == 0
    p = option_distribution(b, "Pick one.", ["a", "b", "c"], system="Be brief.")
    assert p.sum() == pytest.approx(1.0, abs=1e-12) and p.shape == (3,)


def test_option_logprobs_validate_and_refuse_when_closed() -> None:
    b = _backend(_Engine())
    with pytest.raises(TypeError, match="`request` must be a Request"):
        b.option_logprobs("hi", ["1"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="`options` must be a sequence"):
        b.option_logprobs(Request(messages_of("hi")), "12")
    with pytest.raises(ValueError, match="`options` must hold at least one non-empty text"):
        b.option_logprobs(Request(messages_of("hi")), ["1", ""])
    b._llm = None
    with pytest.raises(BackendError, match="closed"):
        b.option_logprobs(Request(messages_of("hi")), ["1"])


def test_an_engine_error_becomes_a_backend_error() -> None:
    engine = _Engine()

    def too_long(prompts, sampling_params, use_tqdm):  # noqa: ANN001, ANN202
        raise ValueError("prompt is longer than max_model_len")

    engine.generate = too_long  # type: ignore[method-assign]
    with pytest.raises(BackendError, match="vLLM: prompt is longer"):
        _backend(engine).option_logprobs(Request(messages_of("hi")), ["1"])


def test_option_sequences_and_positions() -> None:
    assert option_sequences([9], [[1, 2], [3]]) == [[9, 1, 2], [9, 3]]
    with pytest.raises(ValueError, match="`prompt_ids` must hold at least one token"):
        option_sequences([], [[1]])
    with pytest.raises(ValueError, match=r"`option_ids\[1\]` is empty"):
        option_sequences([9], [[1], []])
    with pytest.raises(ValueError, match="`option_ids` must be a non-empty"):
        option_sequences([9], [])
    with pytest.raises(ValueError, match="`prompt_ids` must hold non-negative integer"):
        option_sequences([9, -1], [[1]])
    with pytest.raises(TypeError, match="`option_ids\\[0\\]` must be a sequence"):
        option_sequences([9], ["12"])


def test_continuation_logprob_reads_the_option_positions_only() -> None:
    lp = [None, {6: _Logprob(-0.5)}, {7: _Logprob(-0.25), 9: _Logprob(-0.1, 1)}, {1: -1.0}]
    assert continuation_logprob(lp, [5, 6, 7, 1], 3) == -1.0
    assert continuation_logprob(lp, [5, 6, 7, 1], 2) == -1.25
    assert continuation_logprob(lp, [5, 6, 7, 1], 1) == -1.75
    with pytest.raises(BackendError, match="no prompt log-probability for token 8 at position 2"):
        continuation_logprob(lp, [5, 6, 8, 1], 2)  # the entry holds other tokens only
    with pytest.raises(BackendError, match="for 3 tokens expected, got 4 positions"):
        continuation_logprob(lp, [5, 6, 7], 1)
    with pytest.raises(BackendError, match="got none"):
        continuation_logprob(None, [5, 6], 1)
    with pytest.raises(ValueError, match=r"`start` must be an integer in \[1, len\(sequence\)=4\)"):
        continuation_logprob(lp, [5, 6, 7, 1], 0)
    with pytest.raises(ValueError, match="`start`"):
        continuation_logprob(lp, [5, 6, 7, 1], 4)


def test_chat_prompt_ids_prefers_the_engines_chat_preprocessing() -> None:
    engine = _Engine()
    conv = [{"role": "user", "content": "Hi"}]
    assert chat_prompt_ids(engine, conv)[0] == BOS  # the engine's own rendering (BOS from the template)

    class Plain:  # no _preprocess_chat_one: the tokenizer's template, no special tokens added
        def get_tokenizer(self) -> _Tokenizer:
            return _Tokenizer()

    assert chat_prompt_ids(Plain(), conv) == _Tokenizer().encode("<user>Hi<assistant>", add_special_tokens=False)

    class Broken:
        def _preprocess_chat_one(self, conv):  # noqa: ANN001, ANN202
            return {"type": "embeds"}

    with pytest.raises(BackendError, match="no prompt token ids"):
        chat_prompt_ids(Broken(), conv)
