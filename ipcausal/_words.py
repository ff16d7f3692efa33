"""Counts in words: ``count(1, "request")`` is ``"1 request"``, ``count(2, "request")`` is ``"2 requests"``.

A leaf helper of the root package (it imports nothing of ipcausal), usable by every layer's messages.
"""

from __future__ import annotations

__all__ = ["count"]


def count(n: int, word: str, plural: str | None = None) -> str:
    """``n`` and ``word``, with the plural (``plural``, else ``word + "s"``) unless ``n`` is 1.

    Examples
    --------
    >>> count(1, "new request"), count(3, "pair"), count(0, "sample"), count(2, "match", "matches")
    ('1 new request', '3 pairs', '0 samples', '2 matches')
    """
    return f"{n} {word if n == 1 else (plural or word + 's')}"
