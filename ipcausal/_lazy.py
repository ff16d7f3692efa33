"""Lazy public names for a package, and the names and modules that moved (served for one release, with a warning).

:func:`lazy_names` makes a package's ``__getattr__``/``__dir__``: a public name's module is
imported on first use; a *moved* name (``ipcausal.e_holm``, now ``ipcausal.stats.e_holm``) is
served from its new place with a ``DeprecationWarning`` that names it.  :func:`alias_modules`
lets a moved module be imported under its old name (``import ipcausal.study.benchreport`` gives
``ipcausal.study.bench.report``, with the warning), without a file under the old name.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import warnings
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_names", "alias_modules", "moved_warning", "lazy_module"]

#: The release in which a moved name or module stops being served from its old place.
REMOVED_IN = "0.3"


def moved_warning(old: str, new: str, *, since: str, stacklevel: int = 3) -> None:
    """Warn (``DeprecationWarning``) that ``old`` moved to ``new`` in release ``since``."""
    warnings.warn(f"`{old}` moved to `{new}` in ipcausal {since}; the old name goes in {REMOVED_IN}",
                  DeprecationWarning, stacklevel=stacklevel)


def _resolve(dotted: str) -> Any:
    """The object at ``dotted`` (``"ipcausal.stats.e_holm"``): the longest importable module, then attributes."""
    parts = dotted.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:k]))
        except ModuleNotFoundError:
            continue
        for attr in parts[k:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def lazy_names(package: str, names: Mapping[str, str], moved: Mapping[str, tuple[str, str]] | None = None,
               ) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``package``: ``names`` maps a public name to the module defining it.

    A name's module is imported the first time the name is asked for, and the value is then kept
    in the package's namespace.  A value ``"module"`` stands for the module itself (a submodule
    offered as a name, e.g. ``ipcausal.testing.strategies``).  ``moved`` maps an old name to
    ``(its new place, the release that moved it)``: it is served from there with a
    ``DeprecationWarning`` on every use, and is not listed by ``dir()``.
    """
    moved = dict(moved or {})

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            if name in moved:
                new, since = moved[name]
                moved_warning(f"{package}.{name}", new, since=since)
                return _resolve(new)
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = importlib.import_module(f"{package}.{name}") if module == "module" else \
            getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return __getattr__, __dir__


class _AliasLoader(importlib.abc.Loader):
    """Loads an old module name as the module that replaced it (warning once per import)."""

    def __init__(self, old: str, new: str, since: str) -> None:
        self.old, self.new, self.since = old, new, since
        self._spec: Any = None

    def create_module(self, spec: Any) -> Any:
        moved_warning(self.old, self.new, since=self.since, stacklevel=3)  # importlib's own frames are skipped
        module = importlib.import_module(self.new)
        self._spec = module.__spec__
        return module

    def exec_module(self, module: Any) -> None:
        module.__spec__ = self._spec  # the import system set the alias's spec on the real module: restore it


class _AliasFinder(importlib.abc.MetaPathFinder):
    """Finds the old names of moved modules (one finder for the package, on ``sys.meta_path``)."""

    def __init__(self) -> None:
        self.moved: dict[str, tuple[str, str]] = {}

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname not in self.moved:
            return None
        new, since = self.moved[fullname]
        return importlib.util.spec_from_loader(fullname, _AliasLoader(fullname, new, since))


def _finder() -> _AliasFinder:
    for f in sys.meta_path:
        if isinstance(f, _AliasFinder):
            return f
    f = _AliasFinder()
    sys.meta_path.append(f)  # after the real finders: an existing module is always found first
    return f


def alias_modules(package: str, moved: Mapping[str, tuple[str, str]]) -> Callable[[str], Any]:
    """Serve ``package``'s moved modules under their old names; returns the package's ``__getattr__``.

    ``moved`` maps an old submodule name (``"benchreport"``) to ``(the module's new name, the
    release that moved it)``.  ``import package.old`` and ``from package import old`` both give
    the new module, with a ``DeprecationWarning`` naming it; no file is kept under the old name.
    """
    finder = _finder()
    finder.moved.update({f"{package}.{old}": spec for old, spec in moved.items()})

    def __getattr__(name: str) -> Any:
        if name in moved:
            new, since = moved[name]
            moved_warning(f"{package}.{name}", new, since=since)  # here, where the caller asked
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", DeprecationWarning)
                return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__


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
