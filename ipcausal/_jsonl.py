"""Reading JSON Lines files with errors that name the file, the line and what was expected."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["iter_objects", "not_utf8"]


def not_utf8(path: Path | str, lineno: int, exc: UnicodeDecodeError, line: bytes) -> ValueError:
    """The error for a line that is not UTF-8 (a Latin-1 or Windows-1252 file, say)."""
    bad = line[exc.start : exc.start + 1]
    return ValueError(f"{path}:{lineno}: not UTF-8 text (byte 0x{bad.hex()} at column {exc.start + 1}); "
                      f"save the file as UTF-8")


def iter_objects(path: Path, expected: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for every non-blank line of a JSONL file.

    A line that is not UTF-8, not JSON, or not a JSON object raises ``ValueError`` naming
    ``path:line`` and ``expected`` (what a line should hold).
    """
    with Path(path).open("rb") as fh:
        for lineno, raw in enumerate(fh, 1):
            try:
                line = raw.decode("utf-8-sig" if lineno == 1 else "utf-8")
            except UnicodeDecodeError as exc:
                raise not_utf8(path, lineno, exc, raw) from None
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc.msg}); expected {expected}") from None
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{lineno}: expected {expected}")
            yield lineno, obj
