"""Option log-probabilities for the ``vllm`` backend: the token arithmetic, free of vLLM.

:meth:`~ipcausal.backends.vllm_backend.VLLMBackend.option_logprobs` scores each option the way
the ``local`` backend does: the request's prompt tokens (the chat template, as ``LLM.chat``
renders it for generation), then the option tokenized **on its own** (no special tokens) and
appended, so that the option's tokens are exactly the positions ``len(prompt) …`` of the
sequence whatever the tokenizer would have merged across the boundary.  vLLM's
``RequestOutput.prompt_logprobs`` (``SamplingParams(prompt_logprobs=0)``) holds, at position
``t``, a ``{token_id: Logprob}`` mapping that includes the token at ``t`` with its
log-probability given the tokens before it (position 0 is ``None``); the option's
log-probability is the sum of those entries over its positions.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from ipcausal.backends.base import BackendError

__all__ = ["option_sequences", "continuation_logprob", "chat_prompt_ids"]


def _token_ids(value: Any, name: str) -> list[int]:
    if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
        raise TypeError(f"`{name}` must be a sequence of token ids, got {type(value).__name__}")
    ids = list(value)
    if not all(isinstance(t, int) and not isinstance(t, bool) and t >= 0 for t in ids):
        raise ValueError(f"`{name}` must hold non-negative integer token ids, got {ids[:8]!r}")
    return ids


def option_sequences(prompt_ids: Sequence[int], option_ids: Sequence[Sequence[int]]) -> list[list[int]]:
    """The token sequences to score: ``prompt_ids + option`` for each option's token ids.

    Parameters
    ----------
    prompt_ids : sequence of int
        The rendered prompt (at least one token: position 0 has no log-probability).
    option_ids : sequence of sequences of int
        Each option tokenized on its own (at least one token each).

    Returns
    -------
    list of list of int
        One sequence per option; its option tokens start at position ``len(prompt_ids)``.

    Examples
    --------
    >>> option_sequences([5, 6, 7], [[1], [2, 3]])
    [[5, 6, 7, 1], [5, 6, 7, 2, 3]]
    """
    prompt = _token_ids(prompt_ids, "prompt_ids")
    if not prompt:
        raise ValueError("`prompt_ids` must hold at least one token")
    if isinstance(option_ids, (str, bytes)) or not isinstance(option_ids, Sequence) or not option_ids:
        raise ValueError("`option_ids` must be a non-empty sequence of token-id sequences")
    out = []
    for k, opt in enumerate(option_ids):
        ids = _token_ids(opt, f"option_ids[{k}]")
        if not ids:
            raise ValueError(f"`option_ids[{k}]` is empty: option {k} tokenized to no tokens")
        out.append(prompt + ids)
    return out


def _entry_logprob(entry: Any, token: int) -> float | None:
    """The log-probability of ``token`` in one position's ``{token_id: Logprob | float}`` mapping."""
    if not isinstance(entry, Mapping) and not hasattr(entry, "get"):
        return None
    info = entry.get(token)
    if info is None:
        return None
    value = getattr(info, "logprob", info)
    return float(value) if isinstance(value, (int, float)) else None


def continuation_logprob(prompt_logprobs: Sequence[Any] | None, sequence: Sequence[int], start: int) -> float:
    """Sum of the prompt log-probabilities of ``sequence[start:]`` (the option's tokens).

    Parameters
    ----------
    prompt_logprobs : sequence
        vLLM's ``RequestOutput.prompt_logprobs`` for ``sequence``: one entry per position, ``None``
        at position 0, else a mapping ``token_id -> Logprob`` (or a plain float) holding at least
        the token at that position.
    sequence : sequence of int
        The scored token ids (prompt then option).
    start : int
        Where the option begins (``len(prompt_ids)``; at least 1).

    Returns
    -------
    float
        ``sum(log p(sequence[t] | sequence[:t]) for t in range(start, len(sequence)))``.

    Raises
    ------
    BackendError
        When vLLM's answer does not line up with ``sequence`` (a missing position or token).

    Examples
    --------
    >>> lp = [None, {6: -0.5}, {7: -0.25, 9: -2.0}, {1: -1.0}]
    >>> continuation_logprob(lp, [5, 6, 7, 1], 2)
    -1.25
    """
    seq = _token_ids(sequence, "sequence")
    if isinstance(start, bool) or not isinstance(start, int) or not 1 <= start < len(seq):
        raise ValueError(f"`start` must be an integer in [1, len(sequence)={len(seq)}), got {start!r}")
    if prompt_logprobs is None or len(prompt_logprobs) != len(seq):
        got = "none" if prompt_logprobs is None else f"{len(prompt_logprobs)} positions"
        raise BackendError(f"vLLM: prompt log-probabilities for {len(seq)} tokens expected, got {got}")
    total = 0.0
    for t in range(start, len(seq)):
        value = _entry_logprob(prompt_logprobs[t], seq[t])
        if value is None or math.isnan(value):
            raise BackendError(f"vLLM: no prompt log-probability for token {seq[t]} at position {t}")
        total += value
    return total


def chat_prompt_ids(llm: Any, messages: Sequence[Mapping[str, str]]) -> list[int]:
    """The prompt token ids ``llm.chat`` builds for ``messages`` (chat template, assistant turn opened).

    Uses the engine's own chat preprocessing (``LLM._preprocess_chat_one``, what ``LLM.chat``
    calls: the engine's chat template and ``add_special_tokens=False``, the template emitting any
    BOS); engines without it fall back to the tokenizer's ``apply_chat_template`` with the same
    settings.

    Examples
    --------
    >>> class Tok:
    ...     def apply_chat_template(self, conv, tokenize, add_generation_prompt):
    ...         return "|".join(m["content"] for m in conv) + "|>"
    ...     def encode(self, text, add_special_tokens):
    ...         return [ord(c) for c in text]
    >>> class Engine:
    ...     def get_tokenizer(self):
    ...         return Tok()
    >>> chat_prompt_ids(Engine(), [{"role": "user", "content": "Hi"}])
    [72, 105, 124, 62]
    """
    conv = [dict(m) for m in messages]
    pre = getattr(llm, "_preprocess_chat_one", None)
    if callable(pre):
        rendered = pre(conv)
        ids = rendered.get("prompt_token_ids") if isinstance(rendered, Mapping) else None
        if ids is None and isinstance(rendered, Mapping):  # an encoder-decoder input
            ids = (rendered.get("decoder_prompt") or {}).get("prompt_token_ids")
        if ids is None:
            raise BackendError("vLLM: the chat preprocessing gave no prompt token ids")
        return [int(t) for t in ids]
    tok = llm.get_tokenizer()
    text = tok.apply_chat_template(conv, tokenize=False, add_generation_prompt=True)
    return [int(t) for t in tok.encode(text, add_special_tokens=False)]
