"""Pytest fixtures for suites that audit models with ipcausal.

Enable in a ``conftest.py``::

    pytest_plugins = ["ipcausal.testing.plugin"]

Fixtures
--------
``simulated_model``
    A factory: ``simulated_model(effect=0.5, seed=1, ...)`` → :class:`SimulatedModel`.
``ipcausal_cache``
    A path for a response cache inside pytest's temporary directory for the session, so
    that every test of a session shares one cache and each prompt is answered once.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from ipcausal.testing.simulator import SimulatedModel

__all__ = ["simulated_model", "ipcausal_cache"]


@pytest.fixture
def simulated_model() -> Callable[..., SimulatedModel]:
    """A factory of :class:`~ipcausal.testing.SimulatedModel` (same arguments)."""

    def make(*args: Any, **kwargs: Any) -> SimulatedModel:
        return SimulatedModel(*args, **kwargs)

    return make


@pytest.fixture(scope="session")
def ipcausal_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A response-cache path shared by the whole test session."""
    return tmp_path_factory.mktemp("ipcausal-cache") / "responses.sqlite"
