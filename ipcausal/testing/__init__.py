"""Tools for test suites about models: a simulated model, hypothesis strategies, assertions.

``import ipcausal.testing`` needs neither pytest nor hypothesis; the hypothesis strategies
live in :mod:`ipcausal.testing.strategies`, which imports hypothesis when it is imported.

Public names
------------
:class:`SimulatedModel`
    A backend whose implicit personalization is known exactly (:mod:`.simulator`).
:func:`assert_ip`, :func:`assert_no_ip`
    Assertions for pytest (or any test runner) whose failure message is the report.
:mod:`ipcausal.testing.strategies`
    Hypothesis strategies for PairSets, culture-marker texts, similarities and differences.
:mod:`ipcausal.testing.plugin`
    Pytest fixtures: ``pytest_plugins = ["ipcausal.testing.plugin"]`` in a ``conftest.py``.

Examples
--------
>>> from ipcausal.testing import SimulatedModel, assert_ip
>>> report = assert_ip(SimulatedModel(effect=1.0).study(n=30, rng=2))
>>> report.ip_detected
True
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ipcausal._lazy import lazy_names

# ``strategies`` is left out of __all__: it needs hypothesis, and ``import *`` must not
__all__ = ["SimulatedModel", "DEFAULT_BACKGROUNDS", "assert_ip", "assert_no_ip", "AMERICAN", "BRITISH"]

_LAZY: dict[str, str] = {
    "SimulatedModel": "ipcausal.testing.simulator",
    "DEFAULT_BACKGROUNDS": "ipcausal.testing.simulator",
    "assert_ip": "ipcausal.testing.assertions",
    "assert_no_ip": "ipcausal.testing.assertions",
    "AMERICAN": "ipcausal.testing._markers",
    "BRITISH": "ipcausal.testing._markers",
}

if TYPE_CHECKING:  # pragma: no cover
    from ipcausal.testing import strategies
    from ipcausal.testing._markers import AMERICAN, BRITISH
    from ipcausal.testing.assertions import assert_ip, assert_no_ip
    from ipcausal.testing.simulator import DEFAULT_BACKGROUNDS, SimulatedModel


__getattr__, __dir__ = lazy_names("ipcausal.testing", {**_LAZY, "strategies": "module"})
