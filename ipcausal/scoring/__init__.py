"""Scorers: turn the responses of a PairSet into an outcome the tests can use.

Similarity outcomes (``similarity`` ∈ [0, 1], tested with the sign test):
``"choice"``, ``"scale"``, ``"embedding"``, ``"judge"``.  Interval outcomes (``score_i``,
``score_j``, tested with the permutation test): ``"essay"``, ``"mcq"``.

:func:`score_pairs` scores every pair and returns a :class:`ScoreResult`: the scored pairs
(ready for :func:`ipcausal.test`), the pairs it could not score (with the reason), and the
counts that go into the report.

Every scorer reads numbers, ratings and choices out of free text with one reader,
:func:`read_number` / :func:`read_choice` (:mod:`ipcausal.scoring.read` states its rules).

Unparseable responses (the answer names no option, a judge gives no rating after its
retries) are never silently scored.  ``unparseable="exclude"`` (default) drops the pair
and counts it; ``unparseable="zero"`` scores that response 0 (correctness 0, rating 0,
similarity 0) and counts it too — the study's convention for wrong-format answers, which
biases effects toward whichever background produces more malformed answers.  Missing
responses (the run failed) and judge backend failures are always dropped and counted.
"""

from __future__ import annotations

from ipcausal._lazy import lazy_names

# public name -> module; imported on first use (the CLI reads the registry at ``--help`` time
# without loading pandas)
_LAZY: dict[str, str] = {
    "SCORERS": "ipcausal.scoring.registry",
    "SIMILARITY_SCORERS": "ipcausal.scoring.registry",
    "REGISTRY": "ipcausal.scoring.registry",
    "UNPARSEABLE_POLICIES": "ipcausal.scoring._common",
    "check_policy": "ipcausal.scoring._common",
    "Scorer": "ipcausal.scoring.registry",
    "register": "ipcausal.scoring.registry",
    "get_scorer": "ipcausal.scoring.registry",
    "check_scorer": "ipcausal.scoring.registry",
    "ScoreResult": "ipcausal.scoring.pipeline",
    "NoScorablePairs": "ipcausal.scoring.pipeline",
    "score_pairs": "ipcausal.scoring.pipeline",
    "choice_similarity": "ipcausal.scoring.similarity",
    "scale_similarity": "ipcausal.scoring.similarity",
    "cosine_to_similarity": "ipcausal.scoring.similarity",
    "EmbeddingSimilarity": "ipcausal.scoring.similarity",
    "JudgeSimilarity": "ipcausal.scoring.similarity",
    "EssayJudge": "ipcausal.scoring.ratings",
    "ESSAY_RUBRIC": "ipcausal.scoring.ratings",
    "OfflineEssayRater": "ipcausal.scoring.ratings",
    "offline_essay_score": "ipcausal.scoring.ratings",
    "essay_features": "ipcausal.scoring.ratings",
    "parse_choice": "ipcausal.scoring.ratings",
    "parse_rating": "ipcausal.scoring.similarity",
    "read_number": "ipcausal.scoring.read",
    "read_choice": "ipcausal.scoring.read",
    "NumberReader": "ipcausal.scoring.read",
    "number_reader": "ipcausal.scoring.read",
    "mcq_correct": "ipcausal.scoring.ratings",
    "embedding_model_path": "ipcausal.scoring.similarity",
    "score_logprob": "ipcausal.scoring.logprob",
    "option_distribution": "ipcausal.scoring.logprob",
}

__all__ = list(_LAZY)


__getattr__, __dir__ = lazy_names('ipcausal.scoring', _LAZY)
