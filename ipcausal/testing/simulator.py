"""A simulated model of the structural causal model, usable as a backend.

:class:`SimulatedModel` answers prompts with a number whose dependence on the implied user
background B is known exactly, so the whole pipeline (pairs → :func:`ipcausal.run` → scores
→ :func:`ipcausal.test`) can run offline against a known truth.

How a response is made, for a prompt X (all message contents joined by newlines):

1. **B is detected** from X, by the first of these that speaks:

   a. the mapping ``known`` it was given (prompt → background; the prompt is the last message),
      the declared truth;
   b. the background's own *markers* in X: the words listed for it in ``markers`` (default: a
      built-in American/British list for backgrounds named ``"american"`` and ``"british"``) and
      its tag ``[name]`` (e.g. ``[AAE]``), whole words, case-insensitively; the background with
      strictly the most hits is B (a tie between backgrounds: B = None);
   c. the built-in cases' own cues, read with the package's detectors (:mod:`ipcausal.testing._cues`):
      a stated belief, a stated age, culture markers, dialect features.  A cue that names no
      background of ``backgrounds`` takes its rank in its own family (``false_belief`` is 1), so
      the simulator answers every built-in case's prompts.

   A prompt told by (a) is answered exactly as the same prompt with the tag ``[B]`` before its
   last message (the noise ε below is drawn for that text).  A prompt read by (c) has its S read
   with the cue taken out (the stated belief dropped, British markers read as American ones, the
   age words as one word), so the two prompts of a built-in case's pair share S.  When none tells
   (no mapping, marker, tag or cue; or a tie), B = None, no effect is applied, and the simulator
   says so once with a :class:`BackgroundUnknownWarning` that names the prompts.
2. **S is read** from X: its words, lower-cased, with every marker replaced by the token of its
   position (markers are aligned by position: the k-th marker of every background means the
   same), tags and punctuation dropped.  Swapping markers therefore leaves S unchanged.
3. **The answer** is ``v = base(S) + shift(B) + noise · ε``.  ``base(S)`` is a standard normal
   value fixed by a hash of S (questions differ); ``shift(B)`` is ``effect · k`` for the k-th
   background (so the first background and B = None have shift 0) or ``effect[B]`` when
   ``effect`` is a mapping; ``ε`` is a standard normal value fixed by a hash of the model seed
   and the exact text X — and, when ``temperature > 0``, also of the sample's seed
   (``config.sample_seed(k)``), so that two samples of the same prompt differ only when the
   model samples.  With ``levels=k`` the answer is rounded and clipped to the rating scale
   1..k around its centre ``(k + 1) / 2``.
4. **The response text** is ``"Answer: <v>"`` (then a note naming the inferred background);
   :meth:`SimulatedModel.read` gets ``v`` back.

Option log-probabilities (the ``logprob`` scorer): :meth:`SimulatedModel.option_probabilities` is a
softmax over per-option logits fixed by hashes of S and X, with ``shift(B)`` added to the first
option's logit, so the first option's log-odds move by exactly the background's shift.

Scorers: :meth:`SimulatedModel.score` (interval: the answer itself) and
:meth:`SimulatedModel.similarity` (``m0 ** (|v_a − v_b| / c)`` with ``c = noise · √2 · z₀.₇₅``,
the median of ``|v_a − v_b|`` when B plays no role, so that without IP the median similarity
is exactly ``m0``: the sign test's null holds exactly).  Identical answers have similarity 1.
"""

from __future__ import annotations

import hashlib
import math
import numbers
import re
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from statistics import NormalDist
from typing import Any

import numpy as np
import pandas as pd

from ipcausal.outcomes import directed
from ipcausal.backends.base import Choice, GenerationConfig, Request, Response, check_option_texts, messages_of
from ipcausal.pairs import PairSet
from ipcausal._validate import as_generator
from ipcausal.study.probe import PROBE_MARKER, probe_prompt, read_probe_prompt
from ipcausal.testing import _cues
from ipcausal.testing._markers import AMERICAN, BRITISH
from ipcausal.testing._probe import probe_answer

__all__ = ["SimulatedModel", "DEFAULT_BACKGROUNDS", "BackgroundUnknownWarning"]

DEFAULT_BACKGROUNDS: tuple[str, ...] = ("american", "british")
_BUILTIN_MARKERS: dict[str, tuple[str, ...]] = {"american": AMERICAN, "british": BRITISH}
_ND = NormalDist()
_Z75 = _ND.inv_cdf(0.75)
_ANSWER = re.compile(r"Answer:\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)")
_TOKEN = re.compile(r"\[[^\]\n]+\]|[A-Za-z]+")
_OUTCOMES = ("interval", "similarity")
_SHOWN = 3  # prompts the warning names


class BackgroundUnknownWarning(UserWarning):
    """The simulator could not tell some prompts' background and answered them with no effect."""


def _known(known: Any) -> dict[str, str]:
    """``known`` as prompt → background (a PairSet's prompts that stand for two backgrounds left out)."""
    if known is None:
        return {}
    if isinstance(known, PairSet):
        df = known.to_frame()
        seen: dict[str, set[str]] = {}
        for s in ("i", "j"):
            for x, b in zip(df[f"x_{s}"], df[f"background_{s}"]):
                seen.setdefault(str(x), set()).add(str(b))
        return {x: next(iter(bs)) for x, bs in seen.items() if len(bs) == 1}
    if not isinstance(known, Mapping):
        raise TypeError(f"`known` must map prompts to backgrounds (or be a PairSet), got {type(known).__name__}")
    for x, b in known.items():
        if not isinstance(x, str) or not isinstance(b, str):
            raise TypeError(f"`known` must map prompt text to a background name, got {x!r}: {b!r}")
    return dict(known)


def _tagged(contents: Sequence[str], background: str) -> str:
    """The messages joined, with the tag ``[background]`` before the last one (how a told prompt is answered)."""
    return "\n".join([*contents[:-1], f"[{background}] " + contents[-1]])


def _normal(*parts: object) -> float:
    """A standard normal value fixed by a hash of ``parts``."""
    h = hashlib.blake2b("\x1f".join(map(str, parts)).encode("utf-8"), digest_size=8).digest()
    return _ND.inv_cdf((int.from_bytes(h, "big") + 0.5) / 2.0**64)


def _real(value: Any, name: str, *, minimum: float | None = None) -> float:
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(float(value)):
        raise ValueError(f"`{name}` must be a finite number, got {value!r}")
    if minimum is not None and float(value) < minimum:
        raise ValueError(f"`{name}` must be >= {minimum:g}, got {value!r}")
    return float(value)


class SimulatedModel:
    """A backend whose implicit personalization is known exactly (module docstring).

    Parameters
    ----------
    effect : float or mapping of str to float
        A float gives the k-th background the shift ``effect · k`` (so every background pair
        (a, b) has mean Δ = effect · (k_b − k_a)); a mapping gives shifts by name (missing: 0).
    noise : float
        Standard deviation of the per-response noise (>= 0).
    outcome : {"interval", "similarity"}
        What :meth:`study` scores: ``score_i``/``score_j`` or ``similarity``.
    backgrounds : sequence of str
        At least two distinct names; order fixes k in ``effect · k``.
    seed : int
        The model's identity: different seeds are different models.
    markers : mapping of str to sequence of str, optional
        Marker words per background (aligned by position); default: the built-in lists for
        ``"american"``/``"british"``, none for other names (their tag ``[name]`` still works).
    levels : int, optional
        Round answers to a 1..levels rating scale (interval outcome only).
    m0 : float
        The similarity scale's null median (see :meth:`similarity`).
    probe_accuracy : float in [0, 1], optional
        How often a background probe (:func:`ipcausal.probe`) is answered right; ``None``
        (default): it names the background it infers, or says it cannot tell
        (:mod:`ipcausal.testing._probe`).
    known : mapping of str to str, or PairSet, optional
        The background of each prompt, declared: prompt text (a request's last message) →
        background (one of ``backgrounds`` or a cue's label, e.g. ``"uk"``).  A PairSet gives its
        ``x_i``/``x_j`` → ``background_i``/``background_j`` (a prompt that stands for two
        backgrounds is left out).  It comes before the prompt's own cues (module docstring, 1a).
    latency : float
        Seconds each request waits, as a model's network time does (to try concurrency offline).

    Examples
    --------
    >>> import ipcausal
    >>> from ipcausal.testing import SimulatedModel
    >>> sim = SimulatedModel(effect=1.0, seed=3)
    >>> sim.detect("What is your favourite colour?")
    'british'
    >>> pairs = sim.study(n=40, rng=0)
    >>> ipcausal.test(pairs).ip_detected
    True
    >>> from ipcausal.backends import chat
    >>> chat(sim, "What is your favourite colour?")[:7]
    'Answer:'

    Through :func:`ipcausal.get_backend`, told the background of two prompts:

    >>> told = ipcausal.get_backend("simulated", effect=2.0, backgrounds=("young", "old"),
    ...                             known={"Plan my savings.": "old"})
    >>> told.detect("Plan my savings."), told.detect("I am in my twenties. Plan my savings.")
    ('old', 'young')
    """

    kind = "simulated"

    def __init__(
        self,
        effect: float | Mapping[str, float] = 0.0,
        noise: float = 1.0,
        outcome: str = "interval",
        backgrounds: Sequence[str] = DEFAULT_BACKGROUNDS,
        seed: int = 0,
        *,
        markers: Mapping[str, Sequence[str]] | None = None,
        levels: int | None = None,
        m0: float = 0.8,
        probe_accuracy: float | None = None,
        known: Mapping[str, str] | PairSet | None = None,
        latency: float = 0.0,
    ) -> None:
        if isinstance(backgrounds, str) or not isinstance(backgrounds, Sequence):
            raise TypeError("`backgrounds` must be a sequence of names")
        bgs = tuple(backgrounds)
        if len(bgs) < 2 or any(not isinstance(b, str) or not b.strip() for b in bgs):
            raise ValueError(f"`backgrounds` needs at least two non-empty names, got {bgs!r}")
        if len({b.lower() for b in bgs}) != len(bgs):
            raise ValueError(f"`backgrounds` must be distinct (case-insensitively), got {bgs!r}")
        if isinstance(effect, Mapping):
            unknown = sorted(set(effect) - set(bgs))
            if unknown:
                raise ValueError(f"`effect` names unknown background(s) {unknown}; backgrounds are {bgs}")
            self._shift = {b: _real(effect.get(b, 0.0), "effect") for b in bgs}
            self.effect: float | dict[str, float] = dict(self._shift)
        else:
            e = _real(effect, "effect")
            self._shift = {b: e * k for k, b in enumerate(bgs)}
            self.effect = e
        self.noise = _real(noise, "noise", minimum=0.0)
        if outcome not in _OUTCOMES:
            raise ValueError(f"`outcome` must be 'interval' or 'similarity', got {outcome!r}")
        if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
            raise ValueError(f"`seed` must be a non-negative integer, got {seed!r}")
        if levels is not None:
            if isinstance(levels, bool) or not isinstance(levels, numbers.Integral) or levels < 2:
                raise ValueError(f"`levels` must be an integer >= 2 or None, got {levels!r}")
            if not directed(outcome):
                raise ValueError("`levels` applies to the interval outcome only")
        m0 = _real(m0, "m0")
        if not 0.0 < m0 < 1.0:
            raise ValueError(f"`m0` must lie in (0, 1), got {m0!r}")
        if probe_accuracy is not None:
            probe_accuracy = _real(probe_accuracy, "probe_accuracy")
            if not 0.0 <= probe_accuracy <= 1.0:
                raise ValueError(f"`probe_accuracy` must lie in [0, 1] or be None, got {probe_accuracy!r}")
        self.probe_accuracy = probe_accuracy
        self.latency = _real(latency, "latency", minimum=0.0)
        self.outcome, self.backgrounds, self.seed = outcome, bgs, int(seed)
        self.levels, self.m0 = (None if levels is None else int(levels)), m0
        self._scale = self.noise * math.sqrt(2.0) * _Z75 if self.noise > 0 else 1.0
        self._markers = self._build_markers(markers)
        self._words: dict[str, dict[int, str]] = {b: {} for b in bgs}
        for w, (pos, b) in self._markers.items():
            if pos >= 0:
                self._words[b][pos] = w
        # positions every background can write: then prompts differ only in markers, else tags
        common = set.intersection(*(set(d) for d in self._words.values()))
        self._common_positions = sorted(common)
        self._known = {x: self._resolve(b, "known") for x, b in _known(known).items()}
        self._warned = False
        self._unknown: dict[str, None] = {}
        self._lock = threading.Lock()
        eff = self.effect if isinstance(self.effect, float) else sorted(self.effect.items())
        self.model = (
            f"simulated(effect={eff!r},noise={self.noise!r},outcome={outcome},levels={self.levels},"
            f"backgrounds={'|'.join(bgs)},seed={self.seed},m0={m0!r}"
            + ("" if probe_accuracy is None else f",probe_accuracy={probe_accuracy!r}") + ")"
        )

    def _build_markers(self, markers: Mapping[str, Sequence[str]] | None) -> dict[str, tuple[int, str]]:
        """word (lower case) -> (position, background); tags -> (-1, background)."""
        if markers is None:
            markers = {b: _BUILTIN_MARKERS[b.lower()] for b in self.backgrounds if b.lower() in _BUILTIN_MARKERS}
        elif not isinstance(markers, Mapping):
            raise TypeError("`markers` must map background names to sequences of words")
        table: dict[str, tuple[int, str]] = {}
        for b, words in markers.items():
            if b not in self.backgrounds:
                raise ValueError(f"`markers` names unknown background {b!r}; backgrounds are {self.backgrounds}")
            if isinstance(words, str) or not isinstance(words, Sequence):
                raise TypeError(f"`markers`[{b!r}] must be a sequence of words")
            for pos, w in enumerate(words):
                if not isinstance(w, str) or not re.fullmatch(r"[A-Za-z]+", w):
                    raise ValueError(f"`markers`[{b!r}] must hold single words of letters, got {w!r}")
                key = w.lower()
                if key in table and table[key][1] != b:
                    raise ValueError(f"`markers`: {w!r} is a marker of both {table[key][1]!r} and {b!r}")
                table[key] = (pos, b)
        for b in self.backgrounds:
            table[f"[{b.lower()}]"] = (-1, b)
        return table

    # -- the SCM, piece by piece ----------------------------------------------------------
    def _scan(self, prompt: str) -> tuple[str | None, str, int]:
        """(B, S, the most hits of one background) of ``prompt`` from its tags and markers, in one pass."""
        if not isinstance(prompt, str):
            raise TypeError(f"`prompt` must be text, got {type(prompt).__name__}")
        hits = dict.fromkeys(self.backgrounds, 0)
        canon = []
        for tok in _TOKEN.findall(prompt):
            low = tok.lower()
            found = self._markers.get(low)
            if found is None:
                canon.append(low)
            else:
                hits[found[1]] += 1
                if found[0] >= 0:
                    canon.append(f"<m{found[0]}>")
        best = max(hits.values())
        winners = [b for b, h in hits.items() if h == best]
        return (winners[0] if best > 0 and len(winners) == 1 else None), " ".join(canon), best

    def _parse(self, prompt: str) -> tuple[str | None, str]:
        """(B, S) of ``prompt`` from its tags and markers only (module docstring, step 1b)."""
        return self._scan(prompt)[:2]

    def _resolve(self, label: str, where: str | None = None) -> str | None:
        """The simulator's name for the background ``label`` names (a cue's or ``known``'s), or None."""
        for b in self.backgrounds:
            if _cues.same(b, label):
                return b
        low = label.lower()
        if low in _cues.LABELS and (low != "sae" or where is not None):  # no dialect cue is SAE where declared
            return next(b for b in _cues.LABELS if _cues.same(b, low) and b not in ("american", "british"))
        if where is not None:
            raise ValueError(f"`{where}` names the background {label!r}, which is neither one of "
                             f"{self.backgrounds} nor a cue's ({', '.join(sorted(_cues.LABELS))})")
        return None

    def _infer(self, contents: Sequence[str]) -> tuple[str | None, str, str]:
        """(B, S, the text whose hash draws the noise) of a request's message texts (module docstring, 1)."""
        text = "\n".join(contents)
        told = self._known.get(contents[-1]) if self._known else None
        if told is None:
            b, sem, hits = self._scan(text)
            if hits:  # its own tags and markers speak (a tie among them: B = None)
                return b, sem, text
            cue, neutral = _cues.read_cue(contents[-1])
            read = None if cue is None else self._resolve(cue)
            if read is None:
                return None, sem, text
            return read, self._parse("\n".join([*contents[:-1], neutral]))[1], text
        noisy = _tagged(contents, told)
        if told in self._shift:  # answered as the tagged prompt, exactly
            return (*self._parse(noisy), noisy)
        return told, self._parse(text)[1], noisy

    def detect(self, prompt: str) -> str | None:
        """The background B inferred from ``prompt`` (``None`` when it cannot tell: module docstring, step 1)."""
        return self._infer([prompt])[0]

    def semantics(self, prompt: str) -> str:
        """The canonical form of ``prompt`` that stands for S: its words, lower-cased, with
        markers replaced by their position token, tags and punctuation dropped."""
        return self._parse(prompt)[1]

    def shift(self, background: str | None) -> float:
        """shift(B): the effect of background ``background`` on the answer (0 for ``None``).

        A cue's label that is not one of ``backgrounds`` (``"false_belief"`` for the default
        simulator) shifts by ``effect · k`` for its rank k in its family (0 when ``effect`` is a mapping).
        """
        if background is None:
            return 0.0
        if background in self._shift:
            return self._shift[background]
        k = _cues.rank(background) if isinstance(background, str) else None
        if k is None:
            raise ValueError(f"`background` must be one of {self.backgrounds} or None, got {background!r}")
        return self.effect * k if isinstance(self.effect, float) else 0.0

    @property
    def unknown_prompts(self) -> tuple[str, ...]:
        """Every prompt (last message) so far whose background the simulator could not tell, in order."""
        with self._lock:
            return tuple(self._unknown)

    def _warn(self, unknown: Sequence[str]) -> None:
        """Record the prompts whose background could not be told (they got no effect); say so once."""
        if not unknown:
            return
        with self._lock:
            new = [x for x in dict.fromkeys(unknown) if x not in self._unknown]
            self._unknown.update(dict.fromkeys(new))
            if self._warned or not new:
                return
            self._warned = True
        named = ", ".join(repr(x if len(x) <= 60 else x[:57] + "...") for x in new[:_SHOWN])
        more = f" and {len(new) - _SHOWN} more" if len(new) > _SHOWN else ""
        warnings.warn(f"{self.model}: cannot tell the background of {len(new)} prompt(s): {named}{more} "
                      "(not in `known`, and no tag, marker or cue of a background it knows); they are answered "
                      "with no effect. Give `known=` (prompt -> background) to declare them. This is said once: "
                      "`unknown_prompts` lists every such prompt.", BackgroundUnknownWarning, stacklevel=3)

    def answer(self, prompt: str, *, temperature: float = 0.0, sample_seed: int | None = 0) -> float:
        """The number the model answers to ``prompt`` (see the module docstring, step 3)."""
        b, sem, noisy = self._infer([prompt])
        self._warn([] if b is not None else [prompt])
        return self._answer(noisy, (b, sem), temperature, sample_seed)

    def _answer(self, prompt: str, parsed: tuple[str | None, str], temperature: float, sample_seed: int | None) -> float:
        b, sem = parsed
        base = _normal(self.seed, "S", sem)
        if temperature > 0:
            eps = _normal(self.seed, "eps", prompt, sample_seed, float(temperature))
        else:
            eps = _normal(self.seed, "eps", prompt)
        v = base + self.shift(b) + self.noise * eps
        if self.levels is not None:
            v = float(min(self.levels, max(1, round((self.levels + 1) / 2 + v))))
        return v

    # -- the Backend protocol -------------------------------------------------------------
    def generate(self, requests: Sequence[Request]) -> list[Response]:
        """Answer each request with ``config.n`` samples (deterministic for a given request)."""
        if isinstance(requests, (str, bytes, Request)) or not isinstance(requests, Sequence):
            raise TypeError("`requests` must be a sequence of Request")
        out, unknown = [], []
        for req in requests:
            if not isinstance(req, Request):
                raise TypeError(f"`requests` must hold Request objects, got {type(req).__name__}")
            contents = [m["content"] for m in req.messages]
            text = "\n".join(contents)
            probe = read_probe_prompt(text) if PROBE_MARKER in text else None
            if probe is not None:
                out.append(self._probe_response(text, probe, req.config, unknown))
                continue
            b, sem, noisy = self._infer(contents)
            if b is None:
                unknown.append(contents[-1])
            cfg = req.config
            choices = []
            for k in range(cfg.n):
                v = self._answer(noisy, (b, sem), cfg.temperature, cfg.sample_seed(k))
                shown = str(int(v)) if self.levels is not None else repr(v)
                body = f"Answer: {shown} (simulated response; background inferred: {b or 'none'})"
                choices.append(Choice(text=body, finish_reason="stop", completion_tokens=len(body.split())))
            out.append(
                Response(
                    choices=tuple(choices),
                    model=self.model,
                    fingerprint="sim-" + hashlib.blake2b(self.model.encode(), digest_size=4).hexdigest(),
                    prompt_tokens=len(noisy.split()),
                    completion_tokens=sum(c.completion_tokens or 0 for c in choices),
                )
            )
        if self.latency:  # a model's wait per request
            time.sleep(self.latency * len(out))
        self._warn(unknown)
        return out

    def _probe_response(self, text: str, probe: tuple[str, tuple[str, ...]], cfg: GenerationConfig,
                        unknown: list[str]) -> Response:
        message, options = probe
        truth, _, noisy = self._infer([message])
        if truth is None:
            unknown.append(message)
        # a told message is quoted tagged, as every told prompt is answered (module docstring, 1)
        shown = text if noisy == message else probe_prompt(noisy, options)
        bodies = [probe_answer(self, shown, options, truth, cfg.temperature, cfg.sample_seed(k)) for k in range(cfg.n)]
        choices = tuple(Choice(text=b, finish_reason="stop", completion_tokens=len(b.split())) for b in bodies)
        return Response(choices=choices, model=self.model, prompt_tokens=len(shown.split()),
                        completion_tokens=sum(c.completion_tokens or 0 for c in choices))

    def option_probabilities(self, prompt: str, n_options: int) -> np.ndarray:
        """The known-truth probabilities of ``n_options`` answer options for ``prompt``.

        A softmax over logits ``z_k = base_k(S) + noise · ε_k(X) + shift(B) · [k = 0]``: ``base_k``
        and ``ε_k`` are standard normal values fixed by hashes of (seed, S, k) and of (seed, X, k);
        the background's shift raises the **first** option's logit only, so its probability moves
        with B exactly as the answer of :meth:`answer` does (no shift: a paired Δ of 0 in law).

        Examples
        --------
        >>> p = SimulatedModel(effect=2.0).option_probabilities("Which is best? [british]", 3)
        >>> round(float(p.sum()), 12), p.shape
        (1.0, (3,))
        """
        if isinstance(n_options, bool) or not isinstance(n_options, numbers.Integral) or n_options < 1:
            raise ValueError(f"`n_options` must be a positive integer, got {n_options!r}")
        return self._option_probabilities([prompt], int(n_options))

    def _option_probabilities(self, contents: Sequence[str], n_options: int) -> np.ndarray:
        b, sem, noisy = self._infer(contents)
        self._warn([] if b is not None else [contents[-1]])
        z = np.array([_normal(self.seed, "opt", sem, k) + self.noise * _normal(self.seed, "opt-eps", noisy, k)
                      for k in range(n_options)])
        z[0] += self.shift(b)
        z -= z.max()
        e = np.exp(z)
        return e / e.sum()

    def option_logprobs(self, request: Request, options: Sequence[str]) -> tuple[float, ...]:
        """Log of :meth:`option_probabilities` for the request's text (messages joined by newlines).

        The backend capability of :class:`~ipcausal.backends.Backend`; here the values are
        normalised over the options already (a real model's are not).
        """
        if not isinstance(request, Request):
            raise TypeError(f"`request` must be a Request, got {type(request).__name__}")
        opts = check_option_texts(options)
        contents = [m["content"] for m in request.messages]
        return tuple(float(v) for v in np.log(self._option_probabilities(contents, len(opts))))

    def close(self) -> None:
        """Nothing to release (present for symmetry with the real backends)."""

    def __enter__(self) -> SimulatedModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- scorers --------------------------------------------------------------------------
    @property
    def answer_scorer(self) -> Any:
        """The scorer that reads this model's answers: the number ``v`` of ``"Answer: <v>"`` (interval).

        With ``levels=k`` the answers lie in 1..k, so its bound on |Δ| is k − 1 (what a sequential
        audit needs); otherwise it has none.  The optional capability of a backend whose answers a
        case's own scorer cannot read (:class:`~ipcausal.backends.Backend`): ``ipcausal case`` and
        the bench score with it.

        Examples
        --------
        >>> SimulatedModel().answer_scorer.bound is None, SimulatedModel(levels=5).answer_scorer.bound
        (True, 4.0)
        """
        from ipcausal.scoring import get_scorer

        if self.levels is None:
            return get_scorer("essay", rater=SimulatedModel.read)
        return get_scorer("essay", rater=SimulatedModel.read, bound=self.levels - 1)

    @staticmethod
    def read(text: str) -> float:
        """The number in a simulated response (``"Answer: <v> …"``)."""
        if not isinstance(text, str):
            raise TypeError(f"`text` must be a response text, got {type(text).__name__}")
        m = _ANSWER.search(text)
        if m is None:
            raise ValueError(f"`text` holds no 'Answer: <number>': {text[:60]!r}")
        return float(m.group(1))

    def score(self, text: str) -> float:
        """Interval scorer: the answer in ``text``."""
        return self.read(text)

    def similarity(self, text_a: str, text_b: str) -> float:
        """Similarity scorer: ``m0 ** (|v_a − v_b| / c)`` in (0, 1] (module docstring)."""
        d = abs(self.read(text_a) - self.read(text_b))
        return float(self.m0 ** (d / self._scale))

    # -- the truth, for planning and checks -------------------------------------------------
    def mean_delta(self, background_a: str, background_b: str) -> float:
        """The true mean of Δ = score(b) − score(a) (before any rounding to ``levels``)."""
        return self.shift(background_b) - self.shift(background_a)

    @property
    def delta_sd(self) -> float:
        """The standard deviation of Δ for a pair (noise of two responses), before rounding."""
        return self.noise * math.sqrt(2.0)

    def share_below(self, background_a: str, background_b: str) -> float:
        """The true probability that a pair's similarity falls below ``m0`` (0.5 without IP).

        This is the ``effect`` that :func:`ipcausal.power` takes for similarity outcomes.
        """
        delta = self.mean_delta(background_a, background_b)
        if self.noise == 0:
            return 1.0 if abs(delta) > self._scale else 0.0
        z = delta / self.delta_sd
        return float(1.0 - _ND.cdf(_Z75 - z) + _ND.cdf(-_Z75 - z))

    # -- a whole study ------------------------------------------------------------------------
    def prompt(self, question: str, background: str) -> str:
        """The prompt of ``question`` (any id) as written by a user of ``background``.

        When every background has marker words at two or more common positions, the prompt
        carries two of them (chosen by a hash of ``question``), so the prompts of two
        backgrounds differ only in their markers; otherwise it starts with the tag
        ``[background]``.  Either way S is the same for every background.
        """
        if background not in self.backgrounds:
            raise ValueError(f"`background` must be one of {self.backgrounds}, got {background!r}")
        h = int.from_bytes(hashlib.blake2b(str(question).encode(), digest_size=4).digest(), "big")
        pool = self._common_positions
        if len(pool) >= 2:
            i1 = h % len(pool)
            i2 = (i1 + 1 + (h // len(pool)) % (len(pool) - 1)) % len(pool)
            w1, w2 = self._words[background][pool[i1]], self._words[background][pool[i2]]
            return f"Question {question}: what do you think about the {w1} and the {w2}?"
        return f"[{background}] Question {question}: what would you recommend?"

    def study(
        self,
        n: int = 50,
        *,
        rng: int | np.random.Generator | None = None,
        config: GenerationConfig | None = None,
    ) -> PairSet:
        """A scored PairSet: ``n`` pairs for every pair of backgrounds, answered by this model.

        For backgrounds a before b (in ``backgrounds`` order), each pair asks one fresh
        question in the words of a (``x_i``) and of b (``x_j``); Δ = score_j − score_i has mean
        :meth:`mean_delta` (a, b).  ``rng`` picks the questions, so different ``rng`` give
        independent studies.  Responses come from :meth:`generate` with ``config``.

        Examples
        --------
        >>> from ipcausal.testing import SimulatedModel
        >>> ps = SimulatedModel(outcome="similarity").study(n=5, rng=1)
        >>> len(ps), ps.outcome
        (5, 'similarity')
        """
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 1:
            raise ValueError(f"`n` must be a positive integer, got {n!r}")
        cfg = GenerationConfig() if config is None else config
        if not isinstance(cfg, GenerationConfig):
            raise TypeError(f"`config` must be a GenerationConfig, got {type(cfg).__name__}")
        nonce = int(as_generator(rng).integers(0, 2**62))
        rows: dict[str, list[Any]] = {c: [] for c in ("pair_id", "background_i", "background_j", "x_i", "x_j")}
        for ia, a in enumerate(self.backgrounds):
            for b in self.backgrounds[ia + 1 :]:
                for k in range(int(n)):
                    q = f"{nonce}-{k}" if len(self.backgrounds) == 2 else f"{nonce}-{ia}{self.backgrounds.index(b)}-{k}"
                    rows["pair_id"].append(q)
                    rows["background_i"].append(a)
                    rows["background_j"].append(b)
                    rows["x_i"].append(self.prompt(q, a))
                    rows["x_j"].append(self.prompt(q, b))
        reqs = [Request(messages_of(x), cfg) for x in rows["x_i"] + rows["x_j"]]
        texts = [r.text for r in self.generate(reqs)]
        m = len(rows["x_i"])
        rows["y_i"], rows["y_j"] = texts[:m], texts[m:]
        rows["model"] = [self.model] * m
        if directed(self.outcome):
            rows["score_i"] = [self.read(t) for t in rows["y_i"]]
            rows["score_j"] = [self.read(t) for t in rows["y_j"]]
        else:
            rows["similarity"] = [self.similarity(a, b) for a, b in zip(rows["y_i"], rows["y_j"])]
        return PairSet.from_frame(pd.DataFrame(rows))

    def __repr__(self) -> str:
        return f"SimulatedModel({self.model})"
