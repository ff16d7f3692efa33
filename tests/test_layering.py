"""The house (DESIGN.md): stats → study → report, arrows one way, no cycles, numba only in the kernels.

Every import in ipcausal/ is read from the source (imports inside functions and the modules named
to ``ipcausal._lazy.lazy_module`` included) and the rules are checked on that graph; a subprocess checks that the statistics load without pandas.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[1] / "ipcausal"


def _module_name(path: Path) -> str:
    rel = path.relative_to(PKG.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _imports() -> dict[str, set[str]]:
    graph: dict[str, set[str]] = {}
    for path in PKG.rglob("*.py"):
        name = _module_name(path)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                if node.level:  # relative import
                    base = name.split(".")[: len(name.split(".")) - node.level + (path.name == "__init__.py")]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                found.add(mod)
                for a in node.names:  # `from ipcausal.report import plots` imports a module
                    found.add(f"{mod}.{a.name}")
            elif (isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", None)) == "lazy_module"
                  and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
                found.add(node.args[0].value)  # `K = lazy_module("ipcausal.stats._kernels")` imports it on first use
        graph[name] = found
    return graph


GRAPH = _imports()
MODULES = set(GRAPH)


def _internal(targets: set[str]) -> set[str]:
    return {t for t in targets if t in MODULES and t != "ipcausal"}


def test_graph_is_read() -> None:
    assert "ipcausal.stats.permutation" in GRAPH and "ipcausal.study.test" in GRAPH
    assert "ipcausal.stats._kernels" in _internal(GRAPH["ipcausal.stats.permutation"])


#: Leaf helpers of the root package that import nothing of ipcausal (checked below), usable by every layer.
LEAVES = {"ipcausal._lazy", "ipcausal._jsonio", "ipcausal._validate", "ipcausal._words"}


def test_leaf_helpers_import_nothing_of_ipcausal() -> None:
    for leaf in LEAVES:
        assert not _internal(GRAPH[leaf]), f"{leaf} imports {_internal(GRAPH[leaf])}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("ipcausal.stats")))
def test_stats_imports_nothing_above_it(module: str) -> None:
    bad = {t for t in _internal(GRAPH[module]) - LEAVES if not t.startswith("ipcausal.stats")}
    assert not bad, f"{module} imports {bad}"
    assert not any(t == "pandas" or t.startswith("pandas.") for t in GRAPH[module]), module


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("ipcausal.study")))
def test_study_knows_nothing_of_rendering_or_the_cli(module: str) -> None:
    bad = {t for t in _internal(GRAPH[module])
           if t.startswith(("ipcausal.report", "ipcausal.commands", "ipcausal.cli"))}
    assert not bad, f"{module} imports {bad}"


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("ipcausal.report")))
def test_report_knows_nothing_of_backends(module: str) -> None:
    bad = {t for t in _internal(GRAPH[module])
           if t.startswith(("ipcausal.backends", "ipcausal.commands", "ipcausal.cli", "ipcausal.scoring",
                            "ipcausal.study.run", "ipcausal.study.cases"))}
    assert not bad, f"{module} imports {bad}"


#: What rendering may read of the layers below it: the Report and its plain text, nothing that tests,
#: the bench's artefact (study.bench.report, the BenchReport of cells' summaries), and the outcome
#: vocabulary (ipcausal.outcomes, a leaf that imports nothing of the package).
REPORT_READS = {"ipcausal.study.results", "ipcausal.study.text", "ipcausal.study.bench.report", "ipcausal.outcomes"}


@pytest.mark.parametrize("module", sorted(m for m in MODULES if m.startswith("ipcausal.report")))
def test_report_reads_only_the_results_and_their_text(module: str) -> None:
    bad = {t for t in _internal(GRAPH[module]) - LEAVES
           if not t.startswith("ipcausal.report") and t not in REPORT_READS}
    assert not bad, f"{module} imports {bad}: rendering reads the Report (study.results, study.text) only"
    assert "ipcausal" not in GRAPH[module], f"{module} imports the top-level package"


def test_commands_holds_only_commands() -> None:
    """Every module of ipcausal/commands/ is a sub-command of the CLI (``_common``: their shared flags)."""
    from ipcausal.cli import COMMANDS

    here = {m.rsplit(".", 1)[1] for m in MODULES if m.startswith("ipcausal.commands.")}
    assert here - {"_common"} == set(COMMANDS), sorted(here.symmetric_difference(COMMANDS))
    for name in COMMANDS:
        tree = ast.parse((PKG / "commands" / f"{name}.py").read_text(encoding="utf-8"))
        defined = {n.name for n in tree.body if isinstance(n, ast.FunctionDef)}
        assert "register" in defined, f"ipcausal/commands/{name}.py has no register(subparsers)"


def _lazy_and_typed(init: Path) -> tuple[dict[str, str], dict[str, str]]:
    """The ``_LAZY`` name -> module map of a package's __init__ and its ``if TYPE_CHECKING:`` imports."""
    tree = ast.parse(init.read_text(encoding="utf-8"))
    lazy: dict[str, str] = {}
    typed: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.AnnAssign) and getattr(node.target, "id", None) == "_LAZY":
            lazy = ast.literal_eval(node.value)
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            for imp in node.body:
                assert isinstance(imp, ast.ImportFrom), ast.dump(imp)
                for a in imp.names:
                    typed[a.asname or a.name] = str(imp.module)
    return lazy, typed


@pytest.mark.parametrize("package", ["ipcausal", "ipcausal.stats"])
def test_type_checking_names_are_the_lazy_names(package: str) -> None:
    """IDEs and type checkers see exactly the names ``__getattr__`` serves, from the same modules."""
    init = PKG.parent.joinpath(*package.split("."), "__init__.py")
    lazy, typed = _lazy_and_typed(init)
    typed = {n: m for n, m in typed.items() if not (m == package and n in {"stats"})}  # submodules offered
    assert lazy and set(typed) == set(lazy), sorted(set(typed).symmetric_difference(lazy))
    assert typed == lazy
    mod = __import__(package, fromlist=["__all__"])
    assert set(mod.__all__) - {"__version__"} == set(lazy)


def test_the_top_level_is_the_study_and_four_statistics() -> None:
    import ipcausal

    stats = {n for n in ipcausal.__all__ if ipcausal._LAZY.get(n, "").startswith("ipcausal.stats")}
    assert stats == {"permutation_test", "sign_test", "adjust_pvalues", "personalization_bias"}
    for name in ("e_holm", "sequential_update", "SignFlipResult", "westfall_young", "sign_tests"):
        assert name not in ipcausal.__all__ and hasattr(ipcausal.stats, name)
        with pytest.warns(DeprecationWarning, match=f"`ipcausal.{name}` moved to `ipcausal.stats.{name}`"):
            getattr(ipcausal, name)  # served from its new place until 0.3 (tests/test_deprecations.py)


def test_numba_only_in_the_kernels() -> None:
    users = {m for m, t in GRAPH.items() if any(x == "numba" or x.startswith("numba.") for x in t)}
    outside = {m for m in users if not m.startswith("ipcausal.stats._kernels")}
    # stats/_threads.py asks numba for the thread count only (numba.get_num_threads), no jit
    assert outside <= {"ipcausal.stats._threads"}, outside
    for path in PKG.rglob("*.py"):
        if "_kernels" not in path.parts:
            assert "@njit" not in path.read_text(encoding="utf-8") and "@jit" not in path.read_text(encoding="utf-8")


def test_no_import_cycles() -> None:
    edges = {m: _internal(t) - {m} for m, t in GRAPH.items()}
    # a package's __init__ is imported by its submodules implicitly; that is not a cycle
    for m in edges:
        edges[m] = {t for t in edges[m] if not m.startswith(t + ".")}
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            if state.get(nxt) == 1:
                cycle = stack[stack.index(nxt):] + [nxt]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for m in sorted(edges):
        if m not in state:
            visit(m)


def test_statistics_load_without_pandas() -> None:
    code = ("import sys, ipcausal.stats\n"
            "from ipcausal import permutation_test, sign_test, adjust_pvalues\n"
            "from ipcausal.stats import e_holm, sign_tests\n"
            "permutation_test([1.0, 2.0, -0.5], method='exact'); sign_test([0.1, 0.9, 0.4], m0=0.5)\n"
            "adjust_pvalues([0.01, 0.2], 'holm')\n"
            "print('pandas' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "False"


def _cleans_floats_recursively(fn: ast.FunctionDef) -> bool:
    """A function that calls itself and asks math whether a float is NaN/inf: a JSON cleaner of its own."""
    calls = [n for n in ast.walk(fn) if isinstance(n, ast.Call)]
    recursive = any(isinstance(c.func, ast.Name) and c.func.id == fn.name for c in calls)
    asks = any(isinstance(c.func, ast.Attribute) and c.func.attr in ("isnan", "isfinite", "isinf") for c in calls)
    return recursive and asks


def test_one_json_path() -> None:
    """NaN/inf cleaning and atomic writes live in ipcausal/_jsonio.py alone (DESIGN.md: one JSON writer)."""
    for path in PKG.rglob("*.py"):
        if path.name == "_jsonio.py" and path.parent == PKG:
            continue
        text = path.read_text(encoding="utf-8")
        rel = path.relative_to(PKG.parent)
        for needle in ("os.replace(", "mkstemp(", "allow_nan="):
            if "testing/strategies.py" in str(rel) and needle == "allow_nan=":
                continue  # hypothesis' float strategies, not JSON
            assert needle not in text, f"{rel} has {needle!r}: write through ipcausal._jsonio (atomic, write_json)"
        cleaners = [f.name for f in ast.walk(ast.parse(text)) if isinstance(f, ast.FunctionDef)
                    and _cleans_floats_recursively(f)]
        assert not cleaners, f"{rel} cleans NaN/inf itself ({cleaners}): use ipcausal._jsonio.json_ready"


def test_the_json_check_would_catch_a_cleaner() -> None:
    src = ("import math\ndef clean(v):\n    if isinstance(v, dict):\n"
           "        return {k: clean(x) for k, x in v.items()}\n"
           "    return None if isinstance(v, float) and math.isnan(v) else v\n")
    (fn,) = [n for n in ast.walk(ast.parse(src)) if isinstance(n, ast.FunctionDef)]
    assert _cleans_floats_recursively(fn)


# -- faces and private names (DESIGN.md: "a wing is a package with a face") ---------------------------------
#
# The rules, checked on every import of ipcausal/ (imports inside functions included):
#
# * A *wing* (a subpackage of the study layer grown from one prefix: WINGS) is used from outside
#   only through its face, ``ipcausal.study.bench`` / ``ipcausal.study.mitigation`` (their
#   ``__init__`` names what the rest may use, lazily); a module of a wing is imported from outside
#   it only where WING_DOORS says why.
# * Every other package (stats, study, backends, scoring, …) offers its public modules (no ``_``
#   in the path below the package): ``from ipcausal.stats.permutation import permutation_test``
#   is fine.  A private module (``ipcausal.stats._kernels``, ``ipcausal.builders._options``) is
#   imported only by modules inside the package that holds it (the root's private leaves,
#   ``ipcausal._lazy`` …, by the whole package).
# * A private name (``_cluster_column``, ``_dir``) is imported only by modules of the same package
#   (the stats kernels share theirs); never across a package boundary.
# * ``ipcausal/study/`` holds no file named with a wing's prefix (``bench*``, ``mitigation*``):
#   the old module names live on as aliases in ``ipcausal/study/__init__.py`` for one release.

#: The wings of the study layer.
WINGS = ("ipcausal.study.bench", "ipcausal.study.mitigation")
#: Modules of a wing that modules outside it may import directly, and why.
WING_DOORS = {
    "ipcausal.study.bench.report": "the renderers (ipcausal.report) read the BenchReport, a module of the standard "
                                   "library only, without loading the bench",
}


def _import_statements() -> list[tuple[str, str, tuple[str, ...]]]:
    """(importer, imported module, names taken from it) for every absolute import of ipcausal/."""
    out = []
    for path in PKG.rglob("*.py"):
        name = _module_name(path)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                out += [(name, a.name, ()) for a in node.names if a.name.startswith("ipcausal")]
            elif isinstance(node, ast.ImportFrom) and not node.level and (node.module or "").startswith("ipcausal"):
                out.append((name, str(node.module), tuple(a.name for a in node.names)))
    return out


IMPORTS = _import_statements()
PACKAGES = {_module_name(p) for p in PKG.rglob("__init__.py")}


def _is_private(part: str) -> bool:
    return part.startswith("_") and not part.startswith("__")


def _private_owner(module: str) -> str | None:
    """The package holding the first private component of ``module`` (None: a public path)."""
    parts = module.split(".")
    for k, part in enumerate(parts[1:], start=1):
        if _is_private(part):
            return ".".join(parts[:k])
    return None


def _inside(module: str, package: str) -> bool:
    return module == package or module.startswith(package + ".")


def test_a_wing_is_used_through_its_face() -> None:
    bad = set()
    for importer, module, names in IMPORTS:
        targets = {module} | {f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES}
        for wing in WINGS:
            if _inside(importer, wing):
                continue
            bad |= {(importer, t) for t in targets if t.startswith(wing + ".") and t not in WING_DOORS}
    assert not bad, f"modules of a wing imported from outside it, not through its face: {sorted(bad)}"


def test_a_private_module_is_used_only_inside_its_package() -> None:
    bad = set()
    for importer, module, names in IMPORTS:
        targets = {module} | {f"{module}.{n}" for n in names if f"{module}.{n}" in MODULES}
        for t in targets:
            owner = _private_owner(t)
            if owner is not None and not _inside(importer, owner):
                bad.add((importer, t))
    assert not bad, f"private modules imported from outside their package: {sorted(bad)}"


def _package(module: str) -> str:
    return module if module in PACKAGES else module.rsplit(".", 1)[0]


def test_no_private_name_is_imported_across_a_package_boundary() -> None:
    bad = {(importer, module, n) for importer, module, names in IMPORTS for n in names
           if _is_private(n) and f"{module}.{n}" not in MODULES and _package(importer) != _package(module)}
    assert not bad, f"private names imported from another package: {sorted(bad)}"


def test_the_face_checks_would_catch_a_back_door() -> None:
    assert _private_owner("ipcausal.study.reproduce") is None
    assert _private_owner("ipcausal.stats._kernels.labels") == "ipcausal.stats"
    assert _inside("ipcausal.stats.betting", "ipcausal.stats") and not _inside("ipcausal.study.test", "ipcausal.stats")
    assert set(WINGS) <= PACKAGES and set(WING_DOORS) <= MODULES
    assert _package("ipcausal.study.cases") == "ipcausal.study" != _package("ipcausal.study.bench.runner")


def test_study_has_no_file_named_with_a_wing_prefix() -> None:
    prefixes = tuple(w.rsplit(".", 1)[1] for w in WINGS)
    flat = sorted(p.name for p in (PKG / "study").glob("*.py") if p.name.startswith(prefixes))
    assert not flat, f"ipcausal/study/ has {flat}: a wing's modules live in its package"
    assert {"leaderboard.py", "casemitigation.py"}.isdisjoint(p.name for p in (PKG / "study").glob("*.py"))
