"""The build manifest: what a builder read, made, skipped and with which settings."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ipcausal.builders._options import ON_PROBLEM
from ipcausal.pairs import PairSet

__all__ = ["ON_PROBLEM", "Manifest", "BuildResult", "sha256_of", "manifest_path_for", "check_record",
           "validate_on_problem"]


_MAX_FAILURES = 200


def sha256_of(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of a file's bytes."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def manifest_path_for(out: str | os.PathLike[str]) -> Path:
    """``pairs.jsonl`` → ``pairs.manifest.json`` (next to the pair file)."""
    p = Path(out)
    return p.with_name(p.stem + ".manifest.json")


@dataclass
class Manifest:
    """Mutable record filled while a builder runs; frozen into a dict by :meth:`to_dict`."""

    builder: str
    settings: dict[str, Any] = field(default_factory=dict)
    sources: list[dict[str, Any]] = field(default_factory=list)
    counts: Counter[str] = field(default_factory=Counter)
    skipped: Counter[str] = field(default_factory=Counter)
    failures: list[dict[str, Any]] = field(default_factory=list)
    n_failures: int = 0
    checks: Counter[str] = field(default_factory=Counter)

    def add_source(self, path: str | os.PathLike[str], **info: Any) -> None:
        p = Path(path)
        self.sources.append({"path": str(p), "name": p.name, "bytes": p.stat().st_size,
                             "sha256": sha256_of(p), **info})

    def skip(self, reason: str, item: str | None = None, details: Any = None) -> None:
        """Count an item that produced no pair, with the reason (never a silent drop)."""
        self.skipped[reason] += 1
        if item is not None or details is not None:
            self.fail(item or "?", reason, details)

    def fail(self, item: str, stage: str, details: Any = None) -> None:
        """Record a generator failure (kept in full for the first 200)."""
        self.n_failures += 1
        if len(self.failures) < _MAX_FAILURES:
            self.failures.append({"item": item, "stage": stage, "details": details})

    def check(self, item: str, problems: list[Any], on_problem: str) -> bool:
        """Count one pair's check result by reason; return whether the pair is kept."""
        if not problems:
            self.checks["clean"] += 1
            return True
        kinds = [p.kind for p in problems]
        for k in kinds:
            self.checks[k] += 1
        details = [p.to_dict() for p in problems]
        if on_problem == "drop":
            self.checks["dropped"] += 1
            self.skip(f"pair check failed: {', '.join(kinds)}", item, details)
            return False
        self.checks["flagged"] += 1
        self.fail(item, f"warning: pair check failed ({', '.join(kinds)}); kept, flagged", details)
        return True

    def to_dict(self) -> dict[str, Any]:
        from ipcausal import __version__

        return {
            "builder": self.builder,
            "ipcausal_version": __version__,
            "created_utc": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "settings": self.settings,
            "sources": self.sources,
            "counts": dict(self.counts),
            "skipped": dict(self.skipped),
            "n_skipped": int(sum(self.skipped.values())),
            "checks": dict(self.checks),
            "n_failures": self.n_failures,
            "failures": self.failures,
        }


def validate_on_problem(on_problem: object) -> str:
    if on_problem not in ON_PROBLEM:
        raise ValueError(f"`on_problem` must be one of {ON_PROBLEM}, got {on_problem!r}")
    return str(on_problem)


def belief_allowed(record: dict[str, Any]) -> list[str]:
    """The two belief statements of an echo-chamber pair as they stand in its prompts (the declared change)."""
    from ipcausal.interventions import belief_statement

    return [st for st in (belief_statement(record["x_i"]), belief_statement(record["x_j"])) if st]


def check_record(record: dict[str, Any], man: Manifest, on_problem: str, allowed: Any = (),
                 ignore: tuple[str, ...] = (), fluency: str | None = None) -> bool:
    """Check one pair record in place and count it; return whether to keep it.

    Runs :func:`~ipcausal.interventions.check_pair` on ``x_i``/``x_j`` (``allowed``: what the
    generator changed; problem kinds in ``ignore`` are left to the builder) and
    :func:`~ipcausal.interventions.detect_features` on ``x_j``, and adds the columns
    ``check_problems`` (JSON list, or None when clean), ``features_j`` (JSON: the AAE, ESL
    and British-marker features found in ``x_j``) and ``target_features_j`` (whether
    ``x_j`` shows features of its background's variety; None for backgrounds without a
    detector, such as ``sae``, ``us`` or a belief).  ``fluency`` (a family of
    :mod:`ipcausal.interventions.fluency`) adds the fluency check and the column ``fluency_drop``
    (nats per token of x_j below x_i; None when the model is not installed).
    """
    from ipcausal.interventions import check_pair, detect_features, target_variety

    problems = [p for p in check_pair(record["x_i"], record["x_j"], allowed=allowed, fluency=fluency)
                if p.kind not in ignore]
    if fluency is not None:
        from ipcausal.interventions.fluency import check_fluency

        fl = check_fluency(record["x_i"], record["x_j"], family=fluency)  # scores cached: not computed twice
        record["fluency_drop"] = None if fl is None else round(fl.drop, 4)
    found = detect_features(record["x_j"])
    variety = target_variety(record.get("background_j"))
    record["check_problems"] = (json.dumps([{"kind": p.kind, "detail": p.detail} for p in problems],
                                           ensure_ascii=False) if problems else None)
    record["features_j"] = json.dumps(found.to_dict(), ensure_ascii=False)
    record["target_features_j"] = None if variety is None else found.present(variety)
    if variety is not None:
        man.checks[f"target_features:{'present' if found.present(variety) else 'absent'}"] += 1
    return man.check(str(record.get("pair_id", "?")), problems, on_problem)


@dataclass(frozen=True)
class BuildResult:
    """What a builder returns: the :class:`~ipcausal.pairs.PairSet` and its manifest (a dict)."""

    pairs: PairSet
    manifest: dict[str, Any]

    def write(self, out: str | os.PathLike[str], manifest: str | os.PathLike[str] | None = None) -> tuple[Path, Path]:
        """Write the pairs (format from the suffix) and the JSON manifest; return both paths."""
        out_p = self.pairs.write(out)
        man_p = Path(manifest) if manifest is not None else manifest_path_for(out_p)
        man = dict(self.manifest)
        man["output"] = {"path": str(out_p), "sha256": sha256_of(out_p), "n_pairs": len(self.pairs)}
        man_p.write_text(json.dumps(man, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
        return out_p, man_p
