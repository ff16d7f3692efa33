"""The ``reads`` step of ``ipcausal check-case``: can the case's scorer read what a real model writes?

A case's reader is written against the format its prompts ask for; a real model answers in its own.
:func:`read_check` sends the first few pairs of the case to a real backend (the local SmolLM2 model
by default in ``ipcausal check-case``, or the backend given), scores the replies with the case's
scorer, and passes when the share of replies the scorer could read — the **parse rate** — is at least
80 % (:data:`PARSE_FLOOR`).  A failure shows the replies it could not read, so the contributor sees
what the model wrote.  Scorers that read no number or choice (an embedding, the offline essay
rater, option log-probabilities) score every reply as it is: the step passes without asking the
model (:func:`reads_text`).

The step is self-contained: it returns a :class:`ReadCheck`, which
:func:`~ipcausal.study.checkcase.check_case` turns into its ``reads`` item.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ipcausal.pairs import PairSet

__all__ = ["read_check", "reads_text", "ReadCheck", "parse_rate", "PARSE_FLOOR", "READ_PAIRS"]

#: The smallest parse rate the step accepts.
PARSE_FLOOR = 0.8
#: Pairs sent by default (two replies each).
READ_PAIRS = 5
_SHOWN = 3  # unread replies quoted in the reason
_CHARS = 80


def parse_rate(scored_frame: Any, dropped: Any) -> tuple[int, int, list[str]]:
    """``(read, asked, unread replies)`` of one scoring: replies the scorer read, replies it was given, and
    the texts it could not read (missing responses count in neither).

    ``scored_frame`` and ``dropped`` are a :class:`~ipcausal.scoring.ScoreResult`'s pairs (as a frame)
    and dropped frame; a similarity scorer's unit is the pair (both replies together).
    """
    read = asked = 0
    unread: list[str] = []
    for frame in (scored_frame, dropped):
        if frame is None or len(frame) == 0:
            continue
        if "similarity_status" in frame.columns:
            for st, a, b in zip(frame["similarity_status"], frame["y_i"], frame["y_j"]):
                if st in ("ok", "unparseable"):
                    asked += 1
                    read += st == "ok"
                    if st == "unparseable":
                        unread.append(f"{a} | {b}")
            continue
        for side in ("i", "j"):
            for st, y in zip(frame[f"status_{side}"], frame[f"y_{side}"]):
                if st in ("ok", "unparseable"):
                    asked += 1
                    read += st == "ok"
                    if st == "unparseable":
                        unread.append(str(y))
    return read, asked, unread


@dataclass(frozen=True)
class ReadCheck:
    """What :func:`read_check` found: ``passed``, the ``reason`` in words, the replies ``read`` of those
    ``asked``, and the ``unread`` replies' texts."""

    passed: bool
    reason: str
    read: int = 0
    asked: int = 0
    unread: tuple[str, ...] = ()

    @property
    def rate(self) -> float:
        """The parse rate (NaN when no reply came back)."""
        return self.read / self.asked if self.asked else float("nan")


def reads_text(scorer: Any) -> bool:
    """Whether ``scorer`` reads a number or a choice out of the replies (False: an embedding, the offline
    essay rater, option log-probabilities — every reply is scored as it is).

    Examples
    --------
    >>> from ipcausal.scoring import get_scorer
    >>> reads_text(get_scorer("mcq")), reads_text(get_scorer("embedding")), reads_text(get_scorer("essay"))
    (True, False, False)
    """
    from ipcausal.scoring.ratings import OfflineEssayRater

    if scorer.name in ("embedding", "logprob"):
        return False
    if scorer.name == "essay":
        rater, backend = scorer.options.get("rater"), scorer.options.get("backend")
        return not (isinstance(rater, OfflineEssayRater) or (rater is None and backend is None))
    return True


def _quote(text: str) -> str:
    flat = " ".join(str(text).split())
    return repr(flat if len(flat) <= _CHARS else flat[: _CHARS - 1] + "…")


def read_check(case: Any, backend: Any, pairs: PairSet, *, given: bool = False, n_pairs: int = READ_PAIRS,
               seed: int = 0) -> Any:
    """Send the first ``n_pairs`` of ``pairs`` to ``backend`` and check the case's scorer reads the replies.

    Parameters
    ----------
    case : Case
        The case (its scorer for these pairs, its generation budget).
    backend : Backend
        A real model (``get_backend("local")``, an OpenAI-compatible server …).
    pairs : PairSet
        The case's pairs (the first ``n_pairs`` are sent).
    given : bool
        Whether ``pairs`` are given pairs (the case's full source) rather than its demo set.
    n_pairs : int
        Pairs to send (>= 1).
    seed : int
        Generation seed (greedy decoding).

    Returns
    -------
    ReadCheck
        Passed when the parse rate is at least :data:`PARSE_FLOOR`; the reason gives the rate, the
        model and, on a failure, the replies not read.

    Examples
    --------
    >>> from ipcausal.cases import get_case
    >>> from ipcausal.testing import SimulatedModel
    >>> case = get_case("echo")
    >>> item = read_check(case, SimulatedModel(backgrounds=case.backgrounds), case.demo.load(0, 3), n_pairs=3)
    >>> item.passed, item.reason[:43]
    (False, 'parse rate 0 % (0 of 6 replies read) < 80 %')
    """
    from ipcausal.backends.base import Backend, GenerationConfig
    from ipcausal.scoring import NoScorablePairs, score_pairs
    from ipcausal.study.run import run

    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend")
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    if isinstance(n_pairs, bool) or not isinstance(n_pairs, int) or n_pairs < 1:
        raise ValueError(f"`n_pairs` must be an integer >= 1, got {n_pairs!r}")
    sent = pairs.head(n_pairs)
    scorer = case.scorer_for(given=given)
    if not reads_text(scorer):  # nothing to parse: the model is not asked
        return ReadCheck(True, f"not needed: the scorer ({scorer.describe()}) reads no number or choice from the "
                               "replies, so it scores every reply")
    config = GenerationConfig(max_tokens=case.source(given=given).max_tokens, temperature=0.0, seed=seed)
    answered = run(sent, backend, config=config, progress=False)
    model = f"{getattr(backend, 'kind', '?')} model {getattr(backend, 'model', '?')!s}"
    try:
        res = score_pairs(answered, scorer)
        read, asked, unread = parse_rate(res.pairs.to_frame(), res.dropped)
    except NoScorablePairs as exc:
        read, asked, unread = parse_rate(None, exc.dropped)
    if asked == 0:
        return ReadCheck(False, f"the {model} answered none of the {len(sent)} pairs sent (no reply to read)")
    rate = read / asked
    what = f"parse rate {100 * rate:.0f} % ({read} of {asked} replies read)"
    if rate >= PARSE_FLOOR:
        return ReadCheck(True, f"{what} on {len(sent)} pairs sent to the {model}", read, asked, tuple(unread))
    shown = "; ".join(_quote(u) for u in unread[:_SHOWN]) + (f"; … {len(unread) - _SHOWN} more" if len(unread) > _SHOWN
                                                            else "")
    return ReadCheck(False, f"{what} < {100 * PARSE_FLOOR:.0f} % on {len(sent)} pairs sent to the {model}: the "
                            f"scorer cannot read this model. Not read: {shown}", read, asked, tuple(unread))
