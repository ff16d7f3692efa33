"""Names that moved stay usable from their old places for one release, with a DeprecationWarning naming the
new place (CHANGELOG.md lists them); each is checked here to warn and to give the very object of the new place."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import ipcausal
import ipcausal.study as study
from ipcausal._lazy import _resolve


@pytest.mark.parametrize("name", sorted(ipcausal.MOVED))
def test_a_name_that_left_the_top_level_warns_and_works(name: str) -> None:
    new, since = ipcausal.MOVED[name]
    with pytest.warns(DeprecationWarning, match=rf"`ipcausal\.{name}` moved to `{new}` in ipcausal {since}"):
        got = getattr(ipcausal, name)
    assert got is _resolve(new)
    assert name not in ipcausal.__all__ and name not in dir(ipcausal)


def test_an_unknown_top_level_name_is_still_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="has no attribute 'e_hol'"):
        ipcausal.e_hol  # noqa: B018


@pytest.mark.parametrize("old", sorted(study.MOVED_MODULES))
def test_a_moved_study_module_imports_under_its_old_name(old: str) -> None:
    new, since = study.MOVED_MODULES[old]
    sys.modules.pop(f"ipcausal.study.{old}", None)
    vars(study).pop(old, None)
    with pytest.warns(DeprecationWarning, match=rf"`ipcausal\.study\.{old}` moved to `{new}` in ipcausal {since}"):
        mod = importlib.import_module(f"ipcausal.study.{old}")
    assert mod is importlib.import_module(new) and mod.__spec__.name == new
    vars(study).pop(old, None)
    with pytest.warns(DeprecationWarning, match=rf"moved to `{new}`"):
        assert getattr(study, old) is mod  # `from ipcausal.study import benchreport`


def test_an_old_import_statement_works_in_a_fresh_interpreter() -> None:
    code = ("import warnings; warnings.simplefilter('error', DeprecationWarning)\n"
            "try:\n    import ipcausal.study.benchreport\nexcept DeprecationWarning as w:\n    print(w)\n"
            "warnings.simplefilter('ignore')\n"
            "from ipcausal.study.benchspec import read_spec\n"
            "from ipcausal.study.bench.spec import read_spec as new\n"
            "print(read_spec is new)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == ["`ipcausal.study.benchreport` moved to `ipcausal.study.bench.report` in "
                                       "ipcausal 0.2; the old name goes in 0.3", "True"]


def test_run_audit_is_audit_with_its_old_keywords() -> None:
    from ipcausal.scoring import get_scorer
    from ipcausal.study.options import AuditSettings
    from ipcausal.testing import SimulatedModel

    sim = SimulatedModel(effect=2.0, levels=5, seed=1)
    ps = sim.study(n=120, rng=0).drop_columns("y_i", "y_j", "score_i", "score_j", "model")
    with pytest.warns(DeprecationWarning, match=r"`ipcausal\.study\.audit\.run_audit` moved to `ipcausal\.audit"):
        from ipcausal.study.audit import run_audit
    old = run_audit(ps, backend=sim, scorer="essay", rater=sim.score, bound=4, rng=0, batch_size=16)
    new = ipcausal.audit(ps, backend=sim, scorer=get_scorer("essay", rater=sim.score, bound=4), rng=0,
                         settings=AuditSettings(batch_size=16))
    assert old.report.to_dict() == new.report.to_dict() and old.counts == new.counts
    with pytest.raises(TypeError, match=r"run_audit\(\) got unexpected keyword\(s\) \['colour'\]"):
        run_audit(ps, backend=sim, scorer="essay", rater=sim.score, bound=4, colour="red")


def test_marker_swap_changes_is_swaps() -> None:
    from ipcausal.interventions import swap_markers

    r = swap_markers("We rent an apartment.", to="uk")
    with pytest.warns(DeprecationWarning, match=r"`MarkerSwap\.changes` was renamed `MarkerSwap\.swaps`"):
        assert r.changes == r.swaps


def test_the_version_is_the_changelog_s() -> None:
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    changelog = (root / "CHANGELOG.md").read_text(encoding="utf-8")
    assert f"## [{ipcausal.__version__}]" in changelog
    assert f'version = "{ipcausal.__version__}"' in (root / "pyproject.toml").read_text(encoding="utf-8")
