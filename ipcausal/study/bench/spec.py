"""The bench file (``BENCH.toml``) read and checked up front: :class:`BenchSpec` (issue 20, SPEC §10).

A bench file has three parts::

    [settings]            # optional: alpha, seed, correction (the cells' tests), probe
    alpha = 0.05
    probe = true          # also probe each cell: can the model name the background? (bench.probe)

    [[models]]            # one table per model: the label in every table and how to reach it
    name = "effect"
    backend = "simulated" # simulated | local | openai | vllm
    effect = 0.5          # simulated only: the background's known effect
    probe_accuracy = 0.9  # simulated only: how often it names a probed prompt's background

    [[cases]]             # one table per registered case
    name = "echo"
    limit = 8             # optional: source (a PairSet file), limit, margin, probe (true/false)
    mitigation = "strip"  # optional: also run the cell with this mitigation (markers|dialect|strip|instruct)

Every key is checked before any model is asked: an error names the key as it is written in the
file (``models[1].backend`` …).  The key of an ``openai`` model is never in the file: ``api_key_env``
names the environment variable that holds it.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ipcausal.study.defaults import DEFAULTS

__all__ = ["BenchSpec", "ModelSpec", "CaseSpec", "read_spec", "BACKENDS"]

BACKENDS: tuple[str, ...] = ("simulated", "local", "openai", "vllm")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
_MODEL_KEYS = {"name", "backend", "effect", "noise", "seed", "model", "base_url", "api_key_env", "price_input",
               "price_output", "concurrency", "latency", "probe_accuracy",
               *("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
                 "distributed_executor_backend", "tokenizer")}
#: The ``vllm`` keys passed through to :class:`~ipcausal.backends.vllm_backend.VLLMBackend` (vLLM's engine).
VLLM_KEYS: tuple[str, ...] = ("tensor_parallel_size", "pipeline_parallel_size", "data_parallel_size",
                              "distributed_executor_backend", "tokenizer")
_CASE_KEYS = {"name", "source", "limit", "margin", "probe", "mitigation", "instruction"}
_SETTING_KEYS = {"alpha", "seed", "correction", "probe"}


def _fail(key: str, what: str, value: Any) -> ValueError:
    return ValueError(f"`{key}` must be {what}, got {value!r}")


def _number(d: Mapping[str, Any], key: str, where: str, *, minimum: float | None = None,
            positive: bool = False) -> float | None:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v) \
            or (minimum is not None and v < minimum) or (positive and v <= 0):
        what = "a positive number" if positive else ("a number >= %g" % minimum if minimum is not None else "a number")
        raise _fail(f"{where}.{key}", what, v)
    return float(v)


def _count(d: Mapping[str, Any], key: str, where: str, *, minimum: int = 1) -> int | None:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int) or v < minimum:
        raise _fail(f"{where}.{key}", f"an integer >= {minimum}", v)
    return v


def _string(d: Mapping[str, Any], key: str, where: str) -> str | None:
    v = d.get(key)
    if v is not None and (not isinstance(v, str) or not v.strip()):
        raise _fail(f"{where}.{key}", "a non-empty string", v)
    return v


def _flag(d: Mapping[str, Any], key: str, where: str) -> bool | None:
    v = d.get(key)
    if v is not None and not isinstance(v, bool):
        raise _fail(f"{where}.{key}", "true or false", v)
    return v


def _table(d: Any, where: str, keys: set[str]) -> Mapping[str, Any]:
    if not isinstance(d, Mapping):
        raise TypeError(f"`{where}` must be a table, got {type(d).__name__}")
    unknown = sorted(set(d) - keys)
    if unknown:
        raise ValueError(f"`{where}`: unknown key(s) {', '.join(unknown)}; allowed: {', '.join(sorted(keys))}")
    return d


@dataclass(frozen=True)
class ModelSpec:
    """One ``[[models]]`` table: a label and how to reach the model (see the module docstring)."""

    name: str
    backend: str
    effect: float = 0.0
    noise: float = 1.0
    seed: int = 0
    model: str | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    price_input: float | None = None
    price_output: float | None = None
    concurrency: int | None = None
    latency: float = 0.0
    engine: tuple[tuple[str, Any], ...] = ()
    probe_accuracy: float | None = None  # simulated only: how often it names a probed prompt's background

    @classmethod
    def parse(cls, d: Any, where: str) -> ModelSpec:
        d = _table(d, where, _MODEL_KEYS)
        name = d.get("name")
        if not isinstance(name, str) or not _NAME.match(name):
            raise _fail(f"{where}.name", "a label of letters, digits, '.', '_' or '-' (it names a folder)", name)
        backend = d.get("backend")
        if backend not in BACKENDS:
            raise _fail(f"{where}.backend", "one of " + ", ".join(map(repr, BACKENDS)), backend)
        sim_only = [k for k in ("effect", "noise", "latency", "probe_accuracy") if k in d and backend != "simulated"]
        if sim_only:
            raise ValueError(f"`{where}.{sim_only[0]}` is a key of backend = \"simulated\" only")
        if backend == "simulated" and any(k in d for k in ("model", "base_url", "api_key_env")):
            raise ValueError(f"`{where}`: model, base_url and api_key_env do not apply to backend = \"simulated\"")
        for key in ("base_url", "api_key_env", "concurrency"):
            if key in d and backend not in ("openai", "simulated"):
                raise ValueError(f"`{where}.{key}` is a key of backend = \"openai\" only")
        if backend == "vllm" and d.get("model") is None:
            raise ValueError(f"`{where}.model` is required for backend = \"vllm\"")
        engine = []
        for key in VLLM_KEYS:
            if key not in d:
                continue
            if backend != "vllm":
                raise ValueError(f"`{where}.{key}` is a key of backend = \"vllm\" only")
            if key == "distributed_executor_backend":
                if d[key] not in ("mp", "ray", "uni"):
                    raise _fail(f"{where}.{key}", "one of 'mp', 'ray', 'uni'", d[key])
                engine.append((key, d[key]))
            elif key == "tokenizer":
                engine.append((key, _string(d, key, where)))
            else:
                engine.append((key, _count(d, key, where)))
        env = _string(d, "api_key_env", where)
        if env is not None and not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", env):
            raise _fail(f"{where}.api_key_env", "the NAME of an environment variable (never the key)", env)
        pin, pout = _number(d, "price_input", where, minimum=0), _number(d, "price_output", where, minimum=0)
        if (pin is None) != (pout is None):
            raise ValueError(f"`{where}.price_input` and `{where}.price_output` go together (per million tokens)")
        acc = _number(d, "probe_accuracy", where, minimum=0)
        if acc is not None and acc > 1:
            raise _fail(f"{where}.probe_accuracy", "a probability in [0, 1]", d["probe_accuracy"])
        return cls(name, backend, _number(d, "effect", where) or 0.0,
                   1.0 if d.get("noise") is None else float(_number(d, "noise", where, minimum=0) or 0.0),
                   _count(d, "seed", where, minimum=0) or 0, _string(d, "model", where), _string(d, "base_url", where),
                   env, pin, pout, _count(d, "concurrency", where),
                   _number(d, "latency", where, minimum=0) or 0.0, tuple(engine), probe_accuracy=acc)


@dataclass(frozen=True)
class CaseSpec:
    """One ``[[cases]]`` table: a registered case, optionally its pairs file, limit and margin.

    ``probe``: ``True``/``False`` probes this case's cells or not, whatever ``[settings] probe``
    says; ``None`` (not in the file): as the settings say.  ``mitigation`` (one of
    :data:`~ipcausal.study.defaults.MITIGATION_KINDS`) also runs each cell of the case with it, on
    the same pairs and cache (:mod:`ipcausal.study.mitigation.case`); ``instruction`` is the system
    instruction of ``mitigation = "instruct"`` (only there).
    """

    name: str
    source: str | None = None
    limit: int | None = None
    margin: float | None = None
    probe: bool | None = None
    mitigation: str | None = None
    instruction: str | None = None

    @classmethod
    def parse(cls, d: Any, where: str, base: Path) -> CaseSpec:
        from ipcausal.cases.registry import get_case

        d = _table(d, where, _CASE_KEYS)
        name = d.get("name")
        if not isinstance(name, str):
            raise _fail(f"{where}.name", "a registered case name (`ipcausal cases`)", name)
        try:
            get_case(name)
        except (ValueError, KeyError) as exc:
            raise ValueError(f"`{where}.name`: {exc}") from None
        source = _string(d, "source", where)
        if source is not None:
            path = Path(source) if Path(source).is_absolute() else base / source
            if not path.is_file():
                raise ValueError(f"`{where}.source`: {str(path)!r} is not a file (a PairSet made by `ipcausal build`)")
            source = str(path)
        mitigation, instruction = _mitigation_keys(d, where)
        return cls(name, source, _count(d, "limit", where), _number(d, "margin", where, positive=True),
                   _flag(d, "probe", where), mitigation=mitigation, instruction=instruction)


def _mitigation_keys(d: Mapping[str, Any], where: str) -> tuple[str | None, str | None]:
    from ipcausal.study.defaults import MITIGATION_KINDS

    kinds = [k for k in MITIGATION_KINDS if k != "rewrite"]  # an LLM rewrite needs a model of its own
    m, text = d.get("mitigation"), _string(d, "instruction", where)
    if m is not None and m not in kinds:
        raise _fail(f"{where}.mitigation", f"one of {', '.join(kinds)}", m)
    if text is not None and m != "instruct":
        raise ValueError(f"`{where}.instruction` applies to `mitigation = \"instruct\"` only")
    return m, text


@dataclass(frozen=True)
class BenchSpec:
    """A checked bench file: models, cases and settings.

    Examples
    --------
    >>> from ipcausal.study.bench.spec import BenchSpec
    >>> spec = BenchSpec.parse({"models": [{"name": "m", "backend": "simulated"}],
    ...                         "cases": [{"name": "echo", "limit": 4}]})
    >>> spec.models[0].backend, spec.cases[0].limit, spec.alpha
    ('simulated', 4, 0.05)
    >>> BenchSpec.parse({"models": [{"name": "m", "backend": "gpt"}], "cases": [{"name": "echo"}]})
    Traceback (most recent call last):
    ...
    ValueError: `models[0].backend` must be one of 'simulated', 'local', 'openai', 'vllm', got 'gpt'
    """

    models: tuple[ModelSpec, ...]
    cases: tuple[CaseSpec, ...]
    alpha: float = DEFAULTS["alpha"]
    seed: int = 0
    correction: str = DEFAULTS["correction"]
    raw: Mapping[str, Any] = field(default_factory=dict, compare=False, repr=False)
    probe: bool = False  # ``[settings] probe``: probe every cell (a case's ``probe`` overrides it)

    def probes(self, case: CaseSpec) -> bool:
        """Whether the cells of ``case`` are probed (its own ``probe``, else the settings')."""
        return self.probe if case.probe is None else case.probe

    @classmethod
    def parse(cls, d: Any, base: str | os.PathLike[str] = ".") -> BenchSpec:
        """Check a parsed bench file (a mapping as :mod:`tomllib` gives it); ``base`` resolves relative ``source``."""
        from ipcausal.stats.multitest import CORRECTIONS
        from ipcausal.study.defaults import JOINT_CORRECTIONS

        d = _table(d, "bench file", {"models", "cases", "settings"})
        s = _table(d.get("settings", {}), "settings", _SETTING_KEYS)
        alpha = _number(s, "alpha", "settings")
        if alpha is not None and not 0 < alpha < 1:
            raise _fail("settings.alpha", "a level in (0, 1)", alpha)
        allowed = tuple(CORRECTIONS) + tuple(JOINT_CORRECTIONS)
        correction = s.get("correction", DEFAULTS["correction"])
        if correction not in allowed:
            raise _fail("settings.correction", "one of " + ", ".join(map(repr, allowed)), correction)
        models, cases = d.get("models"), d.get("cases")
        for key, items in (("models", models), ("cases", cases)):
            if not isinstance(items, list) or not items:
                raise ValueError(f"`{key}` must be a non-empty array of tables ([[{key}]]), got {items!r}")
        ms = tuple(ModelSpec.parse(m, f"models[{i}]") for i, m in enumerate(models))
        cs = tuple(CaseSpec.parse(c, f"cases[{i}]", Path(base)) for i, c in enumerate(cases))
        for key, names in (("models", [m.name for m in ms]), ("cases", [c.name for c in cs])):
            dup = sorted({n for n in names if names.count(n) > 1})
            if dup:
                raise ValueError(f"`{key}[].name` must be unique, {', '.join(map(repr, dup))} appears twice")
        return cls(ms, cs, DEFAULTS["alpha"] if alpha is None else alpha,
                   _count(s, "seed", "settings", minimum=0) or 0, correction, dict(d),
                   probe=bool(_flag(s, "probe", "settings")))


def read_spec(spec: Any) -> BenchSpec:
    """A :class:`BenchSpec` from a BenchSpec, a parsed mapping or the path of a TOML bench file.

    Examples
    --------
    >>> read_spec("no-such-bench.toml")
    Traceback (most recent call last):
    ...
    FileNotFoundError: `spec`: no bench file at 'no-such-bench.toml'
    """
    if isinstance(spec, BenchSpec):
        return spec
    if isinstance(spec, Mapping):
        return BenchSpec.parse(spec)
    if isinstance(spec, (str, os.PathLike)):
        path = Path(spec)
        if not path.is_file():
            raise FileNotFoundError(f"`spec`: no bench file at {str(path)!r}")
        try:
            data = tomllib.loads(path.read_text(encoding="utf-8"))
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"`spec`: {path} is not valid TOML ({exc})") from None
        return BenchSpec.parse(data, base=path.parent)
    raise TypeError(f"`spec` must be a BenchSpec, a mapping or a TOML file path, got {type(spec).__name__}")
