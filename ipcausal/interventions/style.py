"""LLM style transfer of a Standard American English (SAE) prompt into another English style.

Education case (SPEC §5): an LLM rewrites an essay prompt in African-American English
(``"aae"``) or as a second-language learner would write it (``"esl"``), keeping the
meaning and the question type.  Every output is validated — it changed, it is still a
prompt of the same type (a question stays a question; the length stays comparable), it
names no background explicitly, and its meaning is preserved (embedding similarity ≥
``min_similarity`` when the embedding model is installed) — and rejected outputs are
retried with a new seed, then recorded as a failure with the reasons.
"""

from __future__ import annotations

import re

import numpy as np

from ipcausal.backends.base import Backend
from ipcausal.interventions._llm import GeneratedText, ask, check_attempts, check_backend, clean_output
from ipcausal.interventions._util import is_question_like
from ipcausal.interventions.checks import check_pair
from ipcausal.interventions.semantic import MEANING_THRESHOLD, semantic_similarity
from ipcausal.scm import InterventionSpec, check_intervention
from ipcausal._validate import int_seed

__all__ = ["STYLES", "STYLE_SPEC", "STYLE_TEMPLATES", "style_transfer"]

STYLES: tuple[str, ...] = ("aae", "esl")

STYLE_SPEC = check_intervention(
    InterventionSpec(
        name="style_transfer",
        changes="the English variety the prompt is written in (SAE -> AAE or ESL), by an LLM rewrite",
        preserves_semantics_by=f"instruction to keep every idea and the question type; outputs validated "
        f"(changed, same prompt type, no explicit background cue, embedding similarity >= {MEANING_THRESHOLD})",
    )
)

_SYSTEM = "You rewrite texts in a requested variety of English. You reply with the rewritten text only."

STYLE_TEMPLATES: dict[str, str] = {
    "aae": (
        "Rewrite the essay prompt below in African-American English, phrased the way a speaker of that "
        "variety would naturally say it. Keep every idea, the task and the kind of prompt exactly as they are "
        "(a question stays a question). Do not answer it, do not add or remove content, and do not mention any "
        "dialect, race or group.\n\nPrompt:\n{text}\n\nRewritten prompt:"
    ),
    "esl": (
        "Rewrite the essay prompt below the way a person still learning English as a second language would "
        "write it, with at least {n_errors} typical learner mistakes (for example subject-verb agreement, a "
        "missing or wrong article, a wrong preposition, a wrong plural, a misspelled word). Keep every idea, the "
        "task and the kind of prompt exactly as they are (a question stays a question). Do not answer it, do not "
        "comment, and do not say that it contains mistakes.\n\nPrompt:\n{text}\n\nRewritten prompt:"
    ),
}

_CUES = {
    "aae": ("african american", "african-american", "aave", "ebonics", "black english", "dialect", "slang"),
    "esl": ("second language", "esl", "learner", "mistake", "error", "non-native"),
}


def _norm(t: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", t.lower()).strip()


def validate_rewrite(original: str, candidate: str, style: str, min_similarity: float) -> tuple[str | None, float | None]:
    """Return (reason for rejection or None, similarity) for one candidate rewrite."""
    if not candidate:
        return "empty output", None
    if _norm(candidate) == _norm(original):
        return "unchanged: the output equals the input", None
    ratio = len(candidate) / max(1, len(original))
    if not 0.4 <= ratio <= 2.5:
        return f"length changed too much (ratio {ratio:.2f}, allowed 0.4-2.5)", None
    if is_question_like(original) and "?" in original and not is_question_like(candidate):
        return "question type changed: the input is a question, the output is not", None
    lost = [p for p in check_pair(original, candidate) if p.kind in ("number", "option", "name", "url") and p.before]
    if lost:
        return f"{lost[0].kind} not kept: {lost[0].detail}", None
    low = candidate.lower()
    cue = next((c for c in _CUES[style] if re.search(rf"(?<!\w){re.escape(c)}(?!\w)", low)), None)
    if cue:
        return f"explicit background cue {cue!r} in the output", None
    sim = semantic_similarity(original, candidate)
    if sim is not None and sim < min_similarity:
        return f"meaning not preserved: embedding similarity {sim:.3f} < {min_similarity}", sim
    return None, sim


def style_transfer(
    text: str,
    backend: Backend,
    style: str = "aae",
    *,
    n_errors: int = 3,
    max_attempts: int = 3,
    min_similarity: float = MEANING_THRESHOLD,
    rng: int | np.random.Generator | None = 0,
    max_tokens: int = 256,
) -> GeneratedText:
    """Rewrite ``text`` in another English style with an LLM, validated and retried.

    Parameters
    ----------
    text : str
        The SAE prompt.
    backend : ipcausal.backends.Backend
        The model that rewrites.
    style : {"aae", "esl"}
        Target style.
    n_errors : int, default 3
        For ``"esl"``: how many learner mistakes to ask for (the study asks for more than two).
    max_attempts : int, default 3
        Generations tried before the item is recorded as failed.
    min_similarity : float, default :data:`MEANING_THRESHOLD`
        Embedding cosine similarity an output must reach (checked when the model is installed).
    rng : int, numpy.random.Generator or None, default 0
        The base sampling seed sent to the backend (attempt k uses seed + k): the int itself, or
        one drawn from the Generator (``None``: fresh).
    max_tokens : int, default 256
        Generation limit per attempt.

    Returns
    -------
    GeneratedText
        ``.text`` is the accepted rewrite, or ``None`` with ``.failures`` giving one reason
        per rejected attempt (the item is never silently dropped).

    Examples
    --------
    >>> from ipcausal.interventions import style_transfer
    >>> r = style_transfer("Should cities ban cars downtown?", backend, "aae")  # doctest: +SKIP
    >>> r.ok, r.failures                                                       # doctest: +SKIP
    """
    if not isinstance(text, str):
        raise TypeError(f"`text` must be a str, got {type(text).__name__}")
    if not text.strip():
        raise ValueError("`text` must not be empty")
    check_backend(backend)
    if style not in STYLES:
        raise ValueError(f"`style` must be one of {STYLES}, got {style!r}")
    if not isinstance(n_errors, int) or isinstance(n_errors, bool) or n_errors < 1:
        raise ValueError(f"`n_errors` must be a positive integer, got {n_errors!r}")
    attempts = check_attempts(max_attempts)
    if not isinstance(min_similarity, (int, float)) or not -1.0 <= float(min_similarity) <= 1.0:
        raise ValueError(f"`min_similarity` must be a number in [-1, 1], got {min_similarity!r}")
    seed = int_seed(rng)
    prompt = STYLE_TEMPLATES[style].format(text=text.strip(), n_errors=n_errors)
    failures: list[str] = []
    for k in range(attempts):
        try:
            raw = ask(backend, prompt, _SYSTEM, attempt=k, seed=seed, max_tokens=max_tokens)
        except Exception as exc:  # a backend failure is a recorded failure, not a crash
            failures.append(f"backend error: {type(exc).__name__}: {exc}")
            continue
        cand = clean_output(raw)
        reason, sim = validate_rewrite(text, cand, style, float(min_similarity))
        if reason is None:
            return GeneratedText(cand, text, f"style_transfer:{style}", k + 1, tuple(failures), sim,
                                 {"style": style, "embedding_checked": sim is not None})
        failures.append(reason)
    return GeneratedText(None, text, f"style_transfer:{style}", attempts, tuple(failures), None, {"style": style})
