"""Lazy public names for a package: ``__getattr__``/``__dir__`` that import a name's module on first use."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names", "lazy_module"]


def lazy_names(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps a public name to the module defining it.

    A name's module is imported the first time the name is asked for, and the value is then kept
    in the package's namespace.  A value ``"module"`` stands for the module itself (a submodule
    offered as a name, e.g. ``ipcausal.testing.strategies``).
    """

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = importlib.import_module(f"{package}.{name}") if module == "module" else \
            getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__


class _LazyModule:
    """Stands for a module that is imported the first time one of its attributes is read."""

    __slots__ = ("_name", "_module")

    def __init__(self, name: str) -> None:
        self._name = name
        self._module: Any = None

    def __getattr__(self, attr: str) -> Any:
        if self._module is None:
            self._module = importlib.import_module(self._name)
        return getattr(self._module, attr)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}{' (imported)' if self._module is not None else ''}>"


def lazy_module(name: str) -> Any:
    """A stand-in for module ``name`` that imports it on first attribute access (``scipy.special``
    costs a few hundred ms to import; most runs of ``ipcausal test`` never call it).

    Examples
    --------
    >>> special = lazy_module("math")
    >>> special.sqrt(4.0)
    2.0
    """
    return _LazyModule(name)
