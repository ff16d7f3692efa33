"""The breaker that tells a remote backend when its server has stopped answering."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable

__all__ = ["Breaker"]


class Breaker:
    """Decides when a server has stopped answering, so that the rest of a run is skipped.

    A remote backend reports what it sees: :meth:`answered` when the server sent any HTTP
    answer (even an error status), :meth:`down` for each attempt that could not reach it or
    got no answer in time, and :meth:`gave_up` for each request that ended that way after all
    its retries.  The breaker trips when ``streak`` requests in a row gave up on an
    unreachable or silent server, or when two attempts in a row found it down and nothing has
    been heard from it for ``quiet_s`` seconds.  Refused connections fail in milliseconds and
    trip it by count; a hung server (it accepts connections and never answers) trips it by
    time, after about ``quiet_s`` seconds rather than timeout x retries x requests.

    Parameters
    ----------
    streak : int
        Requests in a row that gave up on the server before the breaker trips.
    quiet_s : float
        Seconds without any answer after which two failed attempts in a row are enough.
    clock : callable, optional
        Returns the time in seconds (default :func:`time.monotonic`); tests pass their own.

    Examples
    --------
    >>> now = [0.0]
    >>> b = Breaker(streak=2, quiet_s=100.0, clock=lambda: now[0])
    >>> b.gave_up("refused"); b.tripped
    False
    >>> b.gave_up("refused"); b.tripped, b.reason
    (True, 'refused')
    >>> b.answered(); b.tripped
    False
    >>> now[0] = 150.0; b.down("timed out"); b.down("timed out"); b.tripped
    True
    """

    def __init__(self, streak: int = 8, quiet_s: float = 120.0, *, clock: Callable[[], float] | None = None) -> None:
        if not isinstance(streak, int) or isinstance(streak, bool) or streak < 1:
            raise ValueError(f"`streak` must be a positive integer, got {streak!r}")
        if not isinstance(quiet_s, (int, float)) or isinstance(quiet_s, bool) or not quiet_s > 0:
            raise ValueError(f"`quiet_s` must be a positive number of seconds, got {quiet_s!r}")
        if clock is not None and not callable(clock):
            raise TypeError("`clock` must be callable")
        self.streak, self.quiet_s = streak, float(quiet_s)
        self._clock = clock or time.monotonic
        self._lock = threading.Lock()
        self.reset()

    def reset(self) -> None:
        """Forget what was seen: the server is presumed up, heard from just now."""
        with self._lock:
            self._attempts = self._requests = 0
            self._heard = self._clock()
            self._tripped_at: float | None = None
            self.reason = ""

    def answered(self) -> None:
        """The server sent an HTTP answer (any status): it is up."""
        with self._lock:
            self._attempts = self._requests = 0
            self._heard = self._clock()
            self._tripped_at = None

    def down(self, reason: str) -> None:
        """An attempt found the server unreachable or silent (``reason`` says how)."""
        with self._lock:
            self._attempts += 1
            self.reason = reason
            if self._attempts >= 2 and self._clock() - self._heard >= self.quiet_s:
                self._trip()

    def gave_up(self, reason: str) -> None:
        """A request ended, after all its retries, with the server unreachable or silent."""
        with self._lock:
            self._requests += 1
            self.reason = reason
            if self._requests >= self.streak:
                self._trip()

    def _trip(self) -> None:
        if self._tripped_at is None:
            self._tripped_at = self._clock()

    @property
    def tripped(self) -> bool:
        """True once the server is taken to have stopped answering."""
        with self._lock:
            return self._tripped_at is not None

    def since_trip(self) -> float:
        """Seconds since the breaker tripped (0 when it has not)."""
        with self._lock:
            return 0.0 if self._tripped_at is None else self._clock() - self._tripped_at

    def retrip(self, reason: str) -> None:
        """A probe of a tripped breaker failed: stay tripped, counting from now."""
        with self._lock:
            self.reason = reason
            self._tripped_at = self._clock()
