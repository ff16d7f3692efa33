"""Reading JSON Lines files with errors that name the file, the line and what was expected."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

__all__ = ["iter_objects"]


def iter_objects(path: Path, expected: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for every non-blank line of a JSONL file.

    A line that is not JSON, or not a JSON object, raises ``ValueError`` naming
    ``path:line`` and ``expected`` (what a line should hold).
    """
    with Path(path).open(encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{path}:{lineno}: not valid JSON ({exc.msg}); expected {expected}") from None
            if not isinstance(obj, dict):
                raise ValueError(f"{path}:{lineno}: expected {expected}")
            yield lineno, obj
