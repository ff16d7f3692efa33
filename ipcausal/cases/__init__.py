"""Cases: the units of the benchmark (SPEC §10), each a frozen :class:`Case`.

The built-in cases are the study's three, :mod:`ipcausal.cases.culture`, :mod:`~ipcausal.cases.education`
and :mod:`~ipcausal.cases.echo`, and the first contributed one, :mod:`~ipcausal.cases.age` (built with
the public plugin API only); any installed distribution can add more under the entry-point group
``ipcausal.cases`` (:mod:`ipcausal.cases.registry`, ``docs/cases.md``).  :func:`get_case` and
:func:`list_cases` read the registry; :func:`ipcausal.run_case` runs any case on any backend.
"""

from __future__ import annotations

from ipcausal._lazy import lazy_names

_LAZY: dict[str, str] = {
    "Case": "ipcausal.cases.spec",
    "PairSource": "ipcausal.cases.spec",
    "TestDefaults": "ipcausal.cases.spec",
    "TestOptions": "ipcausal.study.options",
    "Design": "ipcausal.study.options",
    "EthicalReading": "ipcausal.cases.spec",
    "STANCES": "ipcausal.cases.spec",
    "Stance": "ipcausal.cases.spec",
    "get_case": "ipcausal.cases.registry",
    "list_cases": "ipcausal.cases.registry",
    "plugin_problems": "ipcausal.cases.registry",
    "reload_cases": "ipcausal.cases.registry",
    "CasePluginWarning": "ipcausal.cases.registry",
    "ENTRY_POINT_GROUP": "ipcausal.cases.registry",
    "BUILTIN_CASES": "ipcausal.cases.registry",
    "DEMO_CASES": "ipcausal.cases.registry",
    "scaffold_case": "ipcausal.cases.scaffold",
}

__all__ = list(_LAZY)

__getattr__, __dir__ = lazy_names("ipcausal.cases", _LAZY)
