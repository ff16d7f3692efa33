"""Model backends: one protocol (:class:`Backend`), several implementations, and the SQLite cache.

Implementations are imported only when asked for, so that an optional dependency that is
missing (``llama-cpp-python``, ``openai``, ``vllm``) costs nothing until it is needed.
"""

from __future__ import annotations

import importlib
from typing import Any

from ipcausal.backends.base import (
    Backend,
    BackendBase,
    BackendError,
    Choice,
    GenerationConfig,
    Outcome,
    Request,
    Response,
    Usage,
    chat,
    generate_outcomes,
    messages_of,
)

__all__ = [
    "Backend",
    "BackendBase",
    "BackendError",
    "Choice",
    "GenerationConfig",
    "Outcome",
    "Request",
    "Response",
    "Usage",
    "BACKEND_KINDS",
    "Backoff",
    "CachedBackend",
    "ResponseCache",
    "chat",
    "generate_outcomes",
    "get_backend",
    "messages_of",
]

# kind -> (module, class)
_KINDS: dict[str, tuple[str, str]] = {
    "local": ("ipcausal.backends.local", "LocalBackend"),
    "openai": ("ipcausal.backends.openai_backend", "OpenAIBackend"),
    "vllm": ("ipcausal.backends.vllm_backend", "VLLMBackend"),
    # the SCM simulator (a known truth, offline); it lives with the testing tools, above the study layer
    "simulated": ("ipcausal.testing.simulator", "SimulatedModel"),
}
BACKEND_KINDS: tuple[str, ...] = tuple(_KINDS)


def get_backend(kind: str, **kwargs: Any) -> Backend:
    """Create a backend by kind.

    Parameters
    ----------
    kind : {"local", "openai", "vllm", "simulated"}
        ``"local"``: a GGUF model in process (llama.cpp; default SmolLM2-135M-Instruct).
        ``"openai"``: OpenAI or any OpenAI-compatible server (``base_url=``).
        ``"vllm"``: vLLM in process (tensor/pipeline parallel, Ray).
        ``"simulated"``: the SCM simulator, whose implicit personalization is known exactly
        (``effect=``, ``noise=``, ``seed=``, ``backgrounds=``, ``probe_accuracy=``, ``known=`` …).
    **kwargs
        Passed to the backend class (:class:`~ipcausal.backends.local.LocalBackend`,
        :class:`~ipcausal.backends.openai_backend.OpenAIBackend`,
        :class:`~ipcausal.backends.vllm_backend.VLLMBackend`,
        :class:`~ipcausal.testing.SimulatedModel`), e.g. ``model=``.

    Returns
    -------
    Backend

    Raises
    ------
    ValueError
        For an unknown ``kind`` or bad settings; ImportError (with an install hint) when the
        backend's optional dependency is missing.

    Examples
    --------
    >>> get_backend("gpt")
    Traceback (most recent call last):
    ...
    ValueError: `kind` must be one of 'local', 'openai', 'vllm', 'simulated', got 'gpt'
    >>> get_backend("simulated", effect=1.0, seed=3).detect("Which colour is best?")
    'british'
    >>> backend = get_backend("local", model="smollm2-135m-instruct")  # doctest: +SKIP
    """
    if not isinstance(kind, str) or kind not in _KINDS:
        allowed = ", ".join(repr(k) for k in _KINDS)
        raise ValueError(f"`kind` must be one of {allowed}, got {kind!r}")
    module, cls = _KINDS[kind]
    return getattr(importlib.import_module(module), cls)(**kwargs)


def __getattr__(name: str) -> Any:
    if name in ("CachedBackend", "ResponseCache", "cache_key"):
        from ipcausal.backends import cache

        return getattr(cache, name)
    if name == "Backoff":
        from ipcausal.backends._retry import Backoff

        return Backoff
    raise AttributeError(f"module 'ipcausal.backends' has no attribute {name!r}")
