"""The Case spec and the registry: built-ins, plugins (faked entry points), duplicates, failures."""

from __future__ import annotations

import warnings
from dataclasses import replace

import pytest

from ipcausal.cases import registry
from ipcausal.cases.echo import CASE as ECHO
from ipcausal.cases.spec import Case, EthicalReading, PairSource
from ipcausal.cases.spec import TestDefaults as Defaults
from ipcausal.scoring import get_scorer


class _Dist:
    def __init__(self, name):
        self.name = name


class _EP:
    def __init__(self, name, value, dist, obj=None, error=None):
        self.name, self.value, self.dist, self._obj, self._error = name, value, _Dist(dist), obj, error

    def load(self):
        if self._error is not None:
            raise self._error
        return self._obj


@pytest.fixture
def plugins(monkeypatch):
    """Install fake entry points for the registry; reload it before and after."""
    found: list[_EP] = []
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: list(found) if group == "ipcausal.cases"
                        else [])
    registry.reload_cases()
    yield found
    registry.reload_cases()


def _toy(name="toy"):
    return replace(ECHO, name=name, title="Toy")


def test_builtins_are_cases_in_order(plugins):
    cases = registry.list_cases()
    assert [c.name for c in cases] == ["culture", "education", "echo", "learner", "age"]
    assert all(isinstance(c, Case) and c.origin == "built-in" for c in cases)
    assert [c.stance for c in cases] == ["desired", "unethical", "mixed", "unethical", "desired"]
    assert [c.outcome.name for c in cases] == ["similarity", "interval", "interval", "interval", "interval"]
    edu = registry.get_case("education")
    assert edu.source(given=False).limit == 20 and edu.source(given=True).max_tokens == 640
    assert edu.scorer_for(given=False).options["rater"].target_words == (60, 110)
    assert edu.scorer_for(given=True).options == {}
    assert registry.get_case(edu) is edu


def test_a_plugin_is_registered_with_its_distribution(plugins):
    plugins.append(_EP("toy", "toy:CASE", "toy-dist", obj=_toy()))
    c = registry.get_case("toy")
    assert c.origin == "toy-dist" and c.title == "Toy"
    assert [x.name for x in registry.list_cases()] == ["culture", "education", "echo", "learner", "age", "toy"]


def test_a_name_claimed_twice_names_both(plugins):
    plugins.append(_EP("a", "a:CASE", "dist-a", obj=_toy()))
    plugins.append(_EP("b", "b:CASE", "dist-b", obj=_toy()))
    with pytest.raises(ValueError, match="case 'toy' is claimed twice: by dist-a and by dist-b"):
        registry.list_cases()
    plugins[:] = [_EP("b", "b:CASE", "dist-b", obj=_toy("echo"))]
    registry.reload_cases()
    with pytest.raises(ValueError, match=r"case 'echo' is claimed twice: by ipcausal \(built-in\) and by dist-b"):
        registry.get_case("echo")


def test_a_failing_plugin_is_reported_and_skipped(plugins):
    plugins.append(_EP("bad", "bad:CASE", "bad-dist", error=ImportError("no module named bad")))
    plugins.append(_EP("odd", "odd:CASE", "odd-dist", obj="not a case"))
    plugins.append(_EP("toy", "toy:CASE", "toy-dist", obj=_toy()))
    with pytest.warns(registry.CasePluginWarning, match="case plugin 'bad'.*bad-dist.*failed to import"):
        names = [c.name for c in registry.list_cases()]
    assert names == ["culture", "education", "echo", "learner", "age", "toy"]
    problems = registry.plugin_problems()
    assert len(problems) == 2 and "'odd'" in problems[1] and "not an ipcausal.cases.Case" in problems[1]


def test_unknown_case_names_the_choices(plugins):
    with pytest.raises(ValueError, match="`case` must be one of 'culture', 'education', 'echo'"):
        registry.get_case("farm")


def _reading():
    return EthicalReading("desired", "helps", "no rule broken", "accepted")


@pytest.mark.parametrize("change, error, match", [
    ({"name": "Bad Name"}, ValueError, "`name` must be a lower-case identifier"),
    ({"title": " "}, ValueError, "`title` must be a non-empty string"),
    ({"backgrounds": ("a",)}, ValueError, "`backgrounds` must be a tuple of at least two distinct"),
    ({"backgrounds": ("a", "a")}, ValueError, "`backgrounds` must be a tuple of at least two distinct"),
    ({"scorer": "mcq"}, TypeError, "`scorer` must be a Scorer"),
    ({"demo": None, "full": None}, ValueError, "a case needs `demo` or `full` pairs"),
    ({"demo": PairSource("d", max_tokens=4)}, ValueError, "`demo` must have `load`"),
    ({"tests": {}}, TypeError, "`tests` must be a TestOptions"),
    ({"reading": "desired"}, TypeError, "`reading` must be an EthicalReading"),
    ({"ordered": 1}, TypeError, "`ordered` must be True or False"),
])
def test_case_validates_its_fields(change, error, match):
    base = dict(name="t", title="T", application="An app.", backgrounds=("a", "b"), scorer=get_scorer("mcq"),
                demo=PairSource("d", max_tokens=4, load=lambda rng, limit: None), full=None, tests=Defaults(),
                reading=_reading())
    Case(**base)
    with pytest.raises(error, match=match):
        Case(**{**base, **change})


@pytest.mark.parametrize("kwargs, match", [
    ({"max_tokens": 0}, "`max_tokens` must be a positive integer"),
    ({"max_tokens": 4, "limit": 0}, "`limit` must be a positive integer or None"),
    ({"max_tokens": 4, "load": 3}, "`load` must be a callable"),
    ({"max_tokens": 4, "scorer": "mcq"}, "`scorer` must be a Scorer"),
])
def test_pair_source_validates(kwargs, match):
    with pytest.raises((ValueError, TypeError), match=match):
        PairSource("x", **kwargs)


def test_reading_and_sources():
    with pytest.raises(ValueError, match="`consequences` must be a non-empty string"):
        EthicalReading("mixed", "", "b", "c")
    full_only = replace(ECHO, demo=None)
    with pytest.raises(ValueError, match=r"case 'echo' has no demo set: give `pairs` \(made by `ipcausal build farm`\)"):
        full_only.source(given=False)
    assert full_only.source(given=True).builder == "farm"
    assert Defaults().kwargs() == {"alpha": 0.05, "method": "auto", "correction": "bonferroni", "alternative": None,
                                   "m0": 0.8, "margin": None, "n_resamples": None}
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert registry.get_case("culture").scorer_for(given=False, judge=object()).name == "judge"


def test_the_run_path_never_branches_on_a_case_name():
    """What differs between cases is a field of the Case: no `case == "culture"` where cases are run."""
    import re
    from pathlib import Path

    pkg = Path(registry.__file__).resolve().parents[1]
    files = [pkg / "study" / "cases.py", pkg / "commands" / "case.py", pkg / "commands" / "cases.py",
             pkg / "commands" / "demo.py", *sorted((pkg / "cases").glob("*.py"))]
    names = "|".join(registry.BUILTIN_CASES)
    pattern = re.compile(rf"""(==|!=|\bin\b)\s*[(\[{{]?\s*['"]({names})['"]""")
    hits = [f"{f.name}:{n}" for f in files for n, line in enumerate(f.read_text().splitlines(), 1)
            if pattern.search(line)]
    assert hits == []
