"""The case registry: the built-in cases plus every :class:`Case` an installed distribution publishes.

A distribution publishes a case under the entry-point group ``ipcausal.cases``; the entry's value
is ``module:attribute`` naming a :class:`~ipcausal.cases.spec.Case` (see ``docs/cases.md``)::

    [project.entry-points."ipcausal.cases"]
    mycase = "mypackage.cases:MY_CASE"

The registry is read once per process, on the first :func:`get_case` / :func:`list_cases` (never
at ``ipcausal --help``).  A plugin that fails to import, or whose attribute is not a Case, is
skipped with a :class:`CasePluginWarning` naming it (:func:`plugin_problems` lists them); a case
name claimed twice is a ``ValueError`` naming both claimants.
"""

from __future__ import annotations

import importlib
import warnings
from dataclasses import replace
from importlib import metadata
from typing import Any

from ipcausal.cases.spec import Case

__all__ = ["ENTRY_POINT_GROUP", "BUILTIN_CASES", "DEMO_CASES", "CasePluginWarning", "get_case", "list_cases", "plugin_problems",
           "reload_cases"]

#: The entry-point group a distribution publishes its cases under.
ENTRY_POINT_GROUP = "ipcausal.cases"
#: The built-in cases: name -> ``module:attribute``.
BUILTIN_CASES: dict[str, str] = {
    "culture": "ipcausal.cases.culture:CASE",
    "education": "ipcausal.cases.education:CASE",
    "echo": "ipcausal.cases.echo:CASE",
    "learner": "ipcausal.cases.learner:CASE",  # the education case with an ordered background (issue 21)
    "age": "ipcausal.cases.age:CASE",  # the first contributed case, built with the public plugin API only
}
#: The built-in cases ``ipcausal demo`` / ``make demo`` runs: the study's three.  ``age`` is left out:
#: the demo already takes about 212 s of its ~3 min budget on 2 CPU cores, and its 40 more requests
#: would push it further over (run it with ``ipcausal case age``).
DEMO_CASES: tuple[str, ...] = ("culture", "education", "echo")
BUILTIN = "built-in"

_CASES: dict[str, Case] | None = None
_PROBLEMS: list[str] = []


class CasePluginWarning(UserWarning):
    """A published case could not be loaded and was skipped."""


def _resolve(value: str) -> Any:
    module, _, attr = value.partition(":")
    obj: Any = importlib.import_module(module)
    for part in attr.split(".") if attr else ():
        obj = getattr(obj, part)
    return obj


def _load() -> dict[str, Case]:
    found: dict[str, Case] = {}
    for name, value in BUILTIN_CASES.items():
        found[name] = _resolve(value)
    problems: list[str] = []
    for ep in metadata.entry_points(group=ENTRY_POINT_GROUP):
        dist = ep.dist.name if ep.dist is not None else "an unknown distribution"
        try:
            case = ep.load()
        except Exception as exc:  # noqa: BLE001 - any failure of a plugin is reported, never raised
            problems.append(f"case plugin {ep.name!r} ({ep.value}, from {dist}) failed to import: "
                            f"{type(exc).__name__}: {exc}; skipped")
            continue
        if not isinstance(case, Case):
            problems.append(f"case plugin {ep.name!r} ({ep.value}, from {dist}) is a {type(case).__name__}, "
                            "not an ipcausal.cases.Case; skipped")
            continue
        if case.name in found:
            other = found[case.name].origin
            other = "ipcausal (built-in)" if other == BUILTIN else other
            raise ValueError(f"case {case.name!r} is claimed twice: by {other} and by {dist} "
                             f"(entry point {ep.name!r} = {ep.value}); uninstall one of them")
        found[case.name] = replace(case, origin=dist)
    for message in problems:
        warnings.warn(message, CasePluginWarning, stacklevel=3)
    _PROBLEMS[:] = problems
    return found


def _cases() -> dict[str, Case]:
    global _CASES
    if _CASES is None:
        _CASES = _load()
    return _CASES


def reload_cases() -> None:
    """Read the installed distributions again (after installing a plugin in this process)."""
    global _CASES
    _CASES = None


def get_case(name: Any) -> Case:
    """The registered case called ``name`` (a :class:`Case` is returned as it is).

    Examples
    --------
    >>> from ipcausal.cases import get_case
    >>> get_case("culture").backgrounds
    ('us', 'uk')
    >>> get_case("farm")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ValueError: `case` must be one of 'culture', 'education', 'echo'..., got 'farm'
    """
    if isinstance(name, Case):
        return name
    cases = _cases()
    if not isinstance(name, str) or name not in cases:
        raise ValueError(f"`case` must be one of {', '.join(map(repr, cases))} (see `ipcausal cases`), "
                         f"got {name!r}")
    return cases[name]


def list_cases() -> tuple[Case, ...]:
    """Every registered case: the built-ins first, then the plugins (each with its ``origin``).

    Examples
    --------
    >>> from ipcausal.cases import list_cases
    >>> [c.name for c in list_cases()][:3]
    ['culture', 'education', 'echo']
    """
    return tuple(_cases().values())


def plugin_problems() -> tuple[str, ...]:
    """Why each published case that was skipped was skipped (empty when all loaded).

    Examples
    --------
    >>> from ipcausal.cases import plugin_problems
    >>> isinstance(plugin_problems(), tuple)
    True
    """
    _cases()
    return tuple(_PROBLEMS)
