"""The study's released outputs as per-model runs that the model comparison takes (issue 20, item 5).

The released folders name the same model differently across cases, and two GPT-4 versions
appear.  :data:`MODEL_LABELS` maps every released file name to one label:

=========================  ======================  ======================  ======================
label                      case 1 (culture)        case 2 (education)      case 3 (echo)
=========================  ======================  ======================  ======================
``gpt-4-1106-preview``     gpt-4-1106-preview      gpt-4-1106-preview      —
``gpt-4-0613``             —                       —                       gpt-4-0613
``gpt-3.5-turbo-instruct`` —                       —                       gpt-3.5-turbo-instruct
``llama-2-7b-chat``        llama2_7b               llama2_7b               llama2-7b-chat
``llama-2-13b-chat``       llama2_13b              llama2_13b              llama2-13b-chat
``llama-2-70b-chat``       llama2_70b              llama2_70b              llama2-70b-chat
``vicuna-7b``              vicuna_7b               vicuna_7b               vicuna-7b-v1.5
``vicuna-13b``             vicuna_13b              vicuna_13b              vicuna-13b-v1.5
``alpaca``                 alpaca                  alpaca                  alpaca
=========================  ======================  ======================  ======================

The two GPT-4 snapshots stay apart (different models: a GPT-4 row never pools them).  That the
cases' ``llama2_13b`` is the chat model of case 3's ``llama2-13b-chat`` (and likewise for 7B and
70B) is an assumption: the released file names do not say "chat" in cases 1–2; the study's model
list names the chat models.  The Vicuna files of cases 1–2 carry no version; case 3 says v1.5;
the label leaves the version out.  A file name the table does not know keeps its own name.

:func:`released_runs` reads a case through :mod:`ipcausal.study.reproduce` and returns one
scored PairSet per label, whose ``pair_id`` no longer carries the model (so the same pair has
the same id in every run): the input of :func:`ipcausal.study.compare.compare_runs`.
"""

from __future__ import annotations

import os

from ipcausal.pairs import PairSet

__all__ = ["MODEL_LABELS", "label_of", "released_runs", "RELEASED_CASES"]

MODEL_LABELS: dict[str, str] = {
    "gpt-4-1106-preview": "gpt-4-1106-preview",
    "gpt-4-0613": "gpt-4-0613",
    "gpt-3.5-turbo-instruct": "gpt-3.5-turbo-instruct",
    "llama2_7b": "llama-2-7b-chat", "llama2-7b-chat": "llama-2-7b-chat",
    "llama2_13b": "llama-2-13b-chat", "llama2-13b-chat": "llama-2-13b-chat",
    "llama2_70b": "llama-2-70b-chat", "llama2-70b-chat": "llama-2-70b-chat",
    "vicuna_7b": "vicuna-7b", "vicuna-7b-v1.5": "vicuna-7b",
    "vicuna_13b": "vicuna-13b", "vicuna-13b-v1.5": "vicuna-13b",
    "alpaca": "alpaca",
}
#: Cases with an interval outcome, whose runs the model comparison takes.
RELEASED_CASES = ("education", "echo")


def label_of(released_name: str) -> str:
    """The label of a released model file name (:data:`MODEL_LABELS`; unknown names unchanged).

    Examples
    --------
    >>> from ipcausal.study.bench.leaderboard import label_of
    >>> label_of("llama2_13b"), label_of("llama2-13b-chat"), label_of("gpt-4-0613")
    ('llama-2-13b-chat', 'llama-2-13b-chat', 'gpt-4-0613')
    """
    if not isinstance(released_name, str):
        raise TypeError(f"`released_name` must be a model file name (str), got {type(released_name).__name__}")
    return MODEL_LABELS.get(released_name, released_name)


def released_runs(released: str | os.PathLike[str], case: str) -> dict[str, PairSet]:
    """One scored PairSet per model label for a released case, pair ids shared across the models.

    Parameters
    ----------
    released : path
        The released folder (``../shared/data/jiarui-liu-IP``).
    case : {"education", "echo"}
        Case 2 (essay scores per style; Δ = score(first style) − score(second), as
        :func:`ipcausal.study.reproduce.load_case2` orients it) or case 3 (correctness under a
        false vs a true belief; ``question_id`` clusters a question's two statement variants).

    Returns
    -------
    dict
        label → PairSet (``model`` = the label, ``released_model`` = the file's name), sorted by label.

    Examples
    --------
    >>> from pathlib import Path
    >>> from ipcausal.study.bench.leaderboard import released_runs
    >>> root = Path("../shared/data/jiarui-liu-IP")
    >>> runs = released_runs(root, "education") if root.is_dir() else {"llama-2-13b-chat": None}
    >>> "llama-2-13b-chat" in runs
    True
    """
    from ipcausal.study.reproduce import load_case2, load_case3

    if not isinstance(case, str) or case not in RELEASED_CASES:
        raise ValueError(f"`case` must be one of {', '.join(map(repr, RELEASED_CASES))} (interval outcomes); "
                         f"got {case!r}")
    ps = load_case2(released) if case == "education" else load_case3(released)
    df = ps.to_frame()
    out: dict[str, PairSet] = {}
    for name, sub in df.groupby("model", sort=True):
        label = label_of(str(name))
        if label in out:
            raise ValueError(f"`released`: two files of case {case!r} map to the label {label!r}")
        sub = sub.copy()
        prefix = f"{name}:"
        sub["pair_id"] = [p[len(prefix):] if p.startswith(prefix) else p for p in sub["pair_id"].astype(str)]
        sub["released_model"] = str(name)
        sub["model"] = label
        out[label] = PairSet.from_frame(sub.reset_index(drop=True))
    return dict(sorted(out.items()))
