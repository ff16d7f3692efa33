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

from ipcausal.pairs import PairSet

__all__ = ["Manifest", "BuildResult", "sha256_of", "manifest_path_for"]

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
            "n_failures": self.n_failures,
            "failures": self.failures,
        }


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
