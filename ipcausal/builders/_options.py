"""The builders' option values, in a module light enough for the CLI to read at ``--help`` time."""

from __future__ import annotations

__all__ = ["ON_PROBLEM", "QUESTION_GENERATORS", "QUESTION_DIRECTIONS"]

#: What a builder does with a pair that fails the pair checks: drop it, or keep it flagged.
ON_PROBLEM: tuple[str, ...] = ("drop", "flag")

#: ``build_questions``' generators and marker directions (here, light, for the CLI's choices).
QUESTION_GENERATORS: tuple[str, ...] = ("markers", "aae", "esl", "belief")
QUESTION_DIRECTIONS: tuple[str, ...] = ("us-uk", "uk-us")
