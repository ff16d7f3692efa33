"""The builders' option values, in a module light enough for the CLI to read at ``--help`` time."""

from __future__ import annotations

__all__ = ["ON_PROBLEM"]

#: What a builder does with a pair that fails the pair checks: drop it, or keep it flagged.
ON_PROBLEM: tuple[str, ...] = ("drop", "flag")
