"""The run stage: send both prompts of every pair to a model and record the responses.

:func:`run` fills ``y_i`` and ``y_j`` and adds metadata columns; a request that fails is
recorded in ``error_i`` / ``error_j`` (its ``y`` stays missing), never dropped.
:func:`summarize` reads those columns back into a :class:`RunSummary`.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from ipcausal.backends.base import (
    Backend,
    BackendError,
    GenerationConfig,
    Outcome,
    Request,
    Response,
    generate_outcomes,
    messages_of,
)
from ipcausal.pairs import PairSet
from ipcausal.study.inputs import check_prompts
from ipcausal.study.options import RunOptions

__all__ = ["run", "summarize", "RunSummary", "Failure", "RESULT_COLUMNS", "RunInterrupted"]


class RunInterrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`run`; the message says how many responses the cache keeps and how to resume."""

SIDES = ("i", "j")
#: Columns :func:`run` writes (per side ``_i`` / ``_j`` where marked ``*``).
RESULT_COLUMNS: tuple[str, ...] = (
    "y_*", "error_*", "finish_reason_*", "prompt_tokens_*", "completion_tokens_*", "cached_*",
    "model", "model_id", "fingerprint",
)


@dataclass(frozen=True)
class Failure:
    """A response that could not be obtained: which pair, which side, why."""

    pair_id: str
    side: str
    reason: str


@dataclass(frozen=True)
class RunSummary:
    """What a run did (from :func:`summarize`).

    Attributes
    ----------
    requested : int
        Responses needed (two per pair).
    completed : int
        Responses obtained.
    from_cache : int
        Responses served from the cache (not asked of the model in this run).
    failed : int
        Responses missing; ``failures`` says which and why.
    prompt_tokens, completion_tokens : int
        Tokens of all obtained responses.
    new_prompt_tokens, new_completion_tokens : int
        Tokens of the responses generated in this run (not from the cache).
    cost : float or None
        Cost of the new tokens in the prices' currency, when prices were given.
    failures : tuple of Failure
    """

    requested: int
    completed: int
    from_cache: int
    failed: int
    prompt_tokens: int
    completion_tokens: int
    new_prompt_tokens: int
    new_completion_tokens: int
    cost: float | None
    failures: tuple[Failure, ...] = ()

    @property
    def complete(self) -> bool:
        """True when every response was obtained."""
        return self.failed == 0

    @property
    def reasons(self) -> dict[str, int]:
        """Failure reasons with their counts, most frequent first."""
        return dict(Counter(f.reason for f in self.failures).most_common())

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        d = asdict(self)
        d["failures"] = [asdict(f) for f in self.failures]
        d["reasons"] = self.reasons
        return d

    def format(self, max_reasons: int = 5, *, currency: str | None = None) -> str:
        """The closing summary as text lines (``currency`` names the prices' currency in the cost line)."""
        lines = [
            f"requested {self.requested}, completed {self.completed}, from cache {self.from_cache}, "
            f"failed {self.failed}",
            f"tokens: {self.prompt_tokens} prompt + {self.completion_tokens} completion "
            f"(new in this run: {self.new_prompt_tokens} + {self.new_completion_tokens})",
        ]
        if self.cost is not None:
            unit = f" {currency}" if currency else " (in the prices' currency)"
            lines.append(f"cost of the new tokens: {self.cost:.4f}{unit}")
        for reason, count in list(self.reasons.items())[:max_reasons]:
            lines.append(f"  failed x{count}: {reason}")
        if len(self.reasons) > max_reasons:
            lines.append(f"  … and {len(self.reasons) - max_reasons} more reasons")
        if self.failed:
            lines.append(f"INCOMPLETE: {self.failed} response(s) missing; run again to retry them")
        return "\n".join(lines)


def _check_price(name: str, value: float | None) -> float | None:
    if value is None:
        return None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not value >= 0:
        raise ValueError(f"`{name}` must be a non-negative number (price per million tokens), got {value!r}")
    return float(value)


def summarize(pairs: PairSet, *, price_input: float | None = None, price_output: float | None = None) -> RunSummary:
    """Summarize a PairSet written by :func:`run`.

    Parameters
    ----------
    pairs : PairSet
        The output of :func:`run`.
    price_input, price_output : float, optional
        Prices per million prompt / completion tokens; both needed for ``cost``.

    Examples
    --------
    >>> from ipcausal import PairSet
    >>> ps = PairSet.from_records([{"pair_id": 1, "background_i": "US", "background_j": "UK",
    ...     "x_i": "a", "x_j": "b", "y_i": "A", "y_j": None, "error_j": "HTTP 500",
    ...     "cached_i": False, "cached_j": False, "prompt_tokens_i": 5, "completion_tokens_i": 2}])
    >>> s = summarize(ps, price_input=1.0, price_output=2.0)
    >>> s.completed, s.failed, s.cost
    (1, 1, 9e-06)
    """
    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    pin, pout = _check_price("price_input", price_input), _check_price("price_output", price_output)
    df = pairs.to_frame()
    n = len(df)

    def col(name: str, default: Any) -> pd.Series:
        return df[name] if name in df.columns else pd.Series([default] * n, dtype=object)

    completed = from_cache = 0
    tok = {"p": 0, "c": 0, "np": 0, "nc": 0}
    failures: list[Failure] = []
    for s in SIDES:
        y, err, cached = col(f"y_{s}", None), col(f"error_{s}", None), col(f"cached_{s}", False)
        ptok, ctok = col(f"prompt_tokens_{s}", 0), col(f"completion_tokens_{s}", 0)
        for k in range(n):
            if isinstance(y.iat[k], str):
                completed += 1
                p, c = _int(ptok.iat[k]), _int(ctok.iat[k])
                tok["p"] += p
                tok["c"] += c
                if bool(cached.iat[k]) and not _missing(cached.iat[k]):
                    from_cache += 1
                else:
                    tok["np"] += p
                    tok["nc"] += c
            else:
                reason = err.iat[k] if isinstance(err.iat[k], str) else "no response recorded"
                failures.append(Failure(str(df["pair_id"].iat[k]), s, reason))
    cost = None
    if pin is not None and pout is not None:
        cost = (tok["np"] * pin + tok["nc"] * pout) / 1e6
    return RunSummary(2 * n, completed, from_cache, len(failures), tok["p"], tok["c"], tok["np"], tok["nc"],
                      cost, tuple(failures))


def _missing(v: Any) -> bool:
    return v is None or (isinstance(v, float) and v != v)


def _int(v: Any) -> int:
    return 0 if _missing(v) else int(v)


def _progress(progress: bool | Any, total: int) -> Any:
    from ipcausal.study.progress import bar

    return bar(progress, total, unit="req", desc="ipcausal run")


def run(
    pairs: PairSet,
    backend: Backend,
    *,
    cache: str | os.PathLike[str] | Any | None = None,
    config: GenerationConfig | None = None,
    system: str | None = None,
    concurrency: int | None = None,
    batch_size: int | None = None,
    progress: bool | Any = True,
    preflight: bool = True,
) -> PairSet:
    """Get a response to both prompts of every pair.

    Parameters
    ----------
    pairs : PairSet
        Pairs with prompts ``x_i`` and ``x_j`` (text, not empty).
    backend : Backend
        Any backend (``ipcausal.get_backend(...)``, the SCM simulator, your own).
    cache : path, ResponseCache or None
        Where answered requests are stored as they arrive; a later run with the same settings
        takes them from there instead of asking the model again (resume after a crash).
        ``None`` (default): no cache.
    config : GenerationConfig, optional
        Generation settings (default ``GenerationConfig()``: greedy, seed 0, 256 tokens).
    system : str, optional
        A system message put before each prompt.
    concurrency : int, optional
        Largest number of requests in flight (default: the backend's own setting).
    batch_size : int, optional
        Requests handed to the backend per call (default ``max(64, 16 * concurrency)``).
    progress : bool or tqdm-like
        Show a progress bar on stderr.
    preflight : bool
        Before sending anything, call the backend's ``check()`` when it has one (the openai
        backend lists the server's models), so that an unreachable server is one clear
        :class:`~ipcausal.backends.BackendError` instead of a run where every request fails.

    Returns
    -------
    PairSet
        The input with ``y_i``/``y_j`` (first sample; ``samples_i``/``samples_j`` hold all
        of them when ``n > 1``), ``error_*``, ``finish_reason_*``, ``prompt_tokens_*``,
        ``completion_tokens_*``, ``cached_*``, ``model``, ``model_id`` and ``fingerprint``.
        Earlier values of these columns are replaced.

    Examples
    --------
    >>> import ipcausal
    >>> ps = ipcausal.PairSet.from_records([{"pair_id": 1, "background_i": "US", "background_j": "UK",
    ...     "x_i": "What color is the sky?", "x_j": "What colour is the sky?"}])
    >>> from ipcausal.study.run import summarize
    >>> out = ipcausal.run(ps, ipcausal.get_backend("local"), progress=False,
    ...                    config=ipcausal.backends.GenerationConfig(max_tokens=16))
    >>> summarize(out).completed
    2
    """
    from ipcausal.backends.cache import CachedBackend, ResponseCache, cache_key

    if not isinstance(pairs, PairSet):
        raise TypeError(f"`pairs` must be a PairSet, got {type(pairs).__name__}")
    if not isinstance(backend, Backend):
        raise TypeError("`backend` must implement ipcausal.backends.Backend (kind, model, generate)")
    if len(pairs) == 0:
        raise ValueError("`pairs` is empty: there is nothing to run")
    config = RunOptions(config=config, system=system, concurrency=concurrency, cache=cache).generation
    if batch_size is not None and (not isinstance(batch_size, int) or isinstance(batch_size, bool) or batch_size < 1):
        raise ValueError(f"`batch_size` must be a positive integer, got {batch_size!r}")
    df = pairs.to_frame()
    check_prompts(df)

    if not isinstance(preflight, bool):
        raise TypeError(f"`preflight` must be True or False, got {preflight!r}")
    check = getattr(backend, "check", None)
    if preflight and callable(check):
        check()
    wrapped: Backend = backend
    if cache is not None:  # its type is checked by RunOptions above
        wrapped = CachedBackend(backend, cache if isinstance(cache, ResponseCache) else ResponseCache(cache))

    # one request per distinct (prompt, settings); several pairs may share a prompt
    kind, model = str(getattr(backend, "kind", "?")), str(getattr(backend, "model", "?"))
    unique: list[Request] = []
    where: dict[str, int] = {}
    slot: dict[str, list[int]] = {s: [] for s in SIDES}
    for s in SIDES:
        for text in df[f"x_{s}"]:
            req = Request(messages_of(text, system), config)
            key = cache_key(kind or "?", model, req, 0)
            if key not in where:
                where[key] = len(unique)
                unique.append(req)
            slot[s].append(where[key])

    outcomes: list[Outcome | None] = [None] * len(unique)
    step = batch_size or max(64, 16 * (concurrency or int(getattr(backend, "concurrency", 1) or 1)))
    bar = _progress(progress, len(unique))
    failed = [0]
    try:
        for start in range(0, len(unique), step):
            chunk = unique[start : start + step]

            def arrived(i: int, out: Outcome, _start: int = start) -> None:
                outcomes[_start + i] = out
                if bar is not None:
                    if isinstance(out, BackendError):
                        failed[0] += 1
                        if hasattr(bar, "set_postfix_str"):  # the bar says how many failed
                            bar.set_postfix_str(f"{failed[0]} failed", refresh=False)
                    bar.update(1)

            got = generate_outcomes(wrapped, chunk, on_result=arrived, concurrency=concurrency)
            for i, out in enumerate(got):
                outcomes[start + i] = out
    except KeyboardInterrupt:
        kept = sum(isinstance(o, Response) for o in outcomes)
        where = (f"{kept} of {len(unique)} responses are kept in the cache; run the same command again to resume"
                 if cache is not None else f"{kept} of {len(unique)} responses were obtained but, with no cache, "
                 "are not kept")
        raise RunInterrupted(f"interrupted: {where}") from None
    finally:
        if bar is not None and progress is True:
            bar.close()
        if isinstance(wrapped, CachedBackend) and not isinstance(cache, ResponseCache):
            wrapped.cache.close()
    return _assemble(pairs, df, outcomes, slot, model, config.n)


def _assemble(
    pairs: PairSet, df: pd.DataFrame, outcomes: Sequence[Outcome | None], slot: dict[str, list[int]], model: str, n: int
) -> PairSet:
    cols: dict[str, list[Any]] = {}
    model_id: list[Any] = [None] * len(df)
    fingerprint: list[Any] = [None] * len(df)
    for s in SIDES:
        y, err, fin, ptok, ctok, cached, samples = ([] for _ in range(7))
        for row, u in enumerate(slot[s]):
            out = outcomes[u]
            if isinstance(out, Response) and out.choices:
                y.append(out.choices[0].text)
                err.append(None)
                fin.append(out.choices[0].finish_reason)
                ptok.append(int(out.prompt_tokens))
                ctok.append(int(out.completion_tokens))
                cached.append(bool(out.cached))
                samples.append([c.text for c in out.choices])
                model_id[row] = model_id[row] or out.model or None
                fingerprint[row] = fingerprint[row] or out.fingerprint
            else:
                reason = str(out) if isinstance(out, BackendError) else "no response (backend returned nothing)"
                y.append(None)
                err.append(reason or "unknown error")
                fin.append(None)
                ptok.append(None)
                ctok.append(None)
                cached.append(False)
                samples.append(None)
        cols.update({f"y_{s}": y, f"error_{s}": err, f"finish_reason_{s}": fin, f"prompt_tokens_{s}": ptok,
                     f"completion_tokens_{s}": ctok, f"cached_{s}": cached})
        if n > 1:
            cols[f"samples_{s}"] = samples
    cols.update({"model": [model] * len(df), "model_id": model_id, "fingerprint": fingerprint})
    if n == 1:  # samples of an earlier run with n > 1 would no longer match y_*
        pairs = pairs.drop_columns("samples_i", "samples_j")
    return pairs.with_columns(**{k: pd.Series(v, dtype=object) if k[:7] != "cached_" else pd.Series(v, dtype=bool)
                                 for k, v in cols.items()})
