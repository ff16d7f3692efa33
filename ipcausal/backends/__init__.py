"""Model backends: one protocol (:class:`Backend`), several implementations, and the SQLite cache."""

from __future__ import annotations

from ipcausal.backends.base import (
    Backend,
    BackendError,
    Choice,
    GenerationConfig,
    Request,
    Response,
    chat,
    messages_of,
)

__all__ = ["Backend", "BackendError", "Choice", "GenerationConfig", "Request", "Response", "chat", "messages_of"]
