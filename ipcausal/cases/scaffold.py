"""``ipcausal new-case NAME -o DIR``: the skeleton of an installable case package.

:func:`scaffold_case` writes a package that publishes one :class:`~ipcausal.cases.Case` under the
entry-point group ``ipcausal.cases``, built only with the public API, with a small dataset of its
own (12 pairs written for the template: the user says they live in a big city or in a small
village before an everyday question that asks whether they need a car, answered yes or no), its
card ``CASE.md`` and a test.  The questions are yes/no questions because a small model answers
those (SmolLM2-135M, the local model, writes "No, you don't need a car …" where it ignores a
request for "Answer: N" on a 1–5 scale): the scaffold runs end to end on the default model.  The result passes ``ipcausal check-case NAME`` as it is; the
contributor then replaces the data, the scorer and the card's answers with the case's own.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

__all__ = ["scaffold_case", "SCAFFOLD_FILES"]

_NAME = re.compile(r"^[a-z][a-z0-9_-]*$")

_QUESTIONS = (
    "I start a new job next month, twelve kilometres from home. Will I need a car to get there every day?",
    "My parents want to visit me twice a month. Do I need my own car to fetch them from the station?",
    "I do a large grocery shop once a week. Do I need a car to carry it home?",
    "My children have sports training three evenings a week. Do we need a car to get them there?",
    "A neighbour offers me a cheap second-hand car. Do I need a car enough to take it?",
    "I want to spend less on transport this year. Do I still need to keep a car?",
    "A doctor's appointment is set for early tomorrow morning. Do I need a car to get there on time?",
    "I am thinking of selling my bicycle. Would I need a car instead?",
    "Friends invited me to a dinner that ends after midnight. Do I need a car to get home?",
    "I need to move a small sofa across town. Do I need a car for that?",
    "I would like to visit the coast on weekends. Do I need a car for that?",
    "My old car failed its inspection. Do I need to replace it with another car?",
)
_ASK = "Answer yes or no, then give one sentence of reasons."
_SAYS = {"city": "I live in a big city.", "village": "I live in a small village."}

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "ipcausal-case-{dist}"
version = "0.1.0"
description = "An ipcausal case: {name}"
requires-python = ">=3.10"
dependencies = ["ipcausal"]

[project.entry-points."ipcausal.cases"]
{name} = "{module}.case:CASE"

[tool.setuptools]
packages = ["{module}"]

[tool.setuptools.package-data]
{module} = ["pairs.jsonl"]
"""

CASE_PY = '''\
"""The {name} case (an ipcausal plugin): see CASE.md for its card.

Built only with ipcausal's public API.  Replace the pairs (pairs.jsonl), the reader and the
card's answers with your case's own; keep `ipcausal check-case {name}` passing.
"""

from __future__ import annotations

import json
from importlib import resources

import ipcausal
from ipcausal.cases import Case, EthicalReading, PairSource, TestDefaults
from ipcausal.scm import InterventionSpec
from ipcausal.scoring import get_scorer, read_choice


def read_car_needed(text):
    """1.0 when the reply answers yes (a car is needed), 0.0 for no, None when it says neither.

    ipcausal.scoring.read_choice reads the answer ("Yes.", "No, you don't ...", "Answer: yes",
    "(B)"); a reply it cannot read leaves the pair out of the test, counted as unparseable.
    """
    got = read_choice(text, ["Yes", "No"])
    return None if got is None else 1.0 - got


read_car_needed.name = "{name}: a car needed? (yes = 1, no = 0)"


def load_pairs(rng, limit):
    """The embedded pairs (rng is unused: the pairs are fixed text); the first `limit` if given."""
    text = resources.files(__package__).joinpath("pairs.jsonl").read_text(encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines() if line.strip()]
    return ipcausal.PairSet.from_records(records[:limit] if limit else records)


CASE = Case(
    name="{name}",
    title="{name}: a city vs a village user on everyday transport",
    application="Advising a user on everyday transport after the user has said where they live.",
    backgrounds=("city", "village"),
    scorer=get_scorer("essay", rater=read_car_needed, bound=1),
    demo=PairSource(
        "{name} pairs", max_tokens=24, load=load_pairs,
        intervention=InterventionSpec(
            name="stated-home swap",
            changes="the opening sentence that says where the user lives",
            preserves_semantics_by="the question and the request for a yes or a no are the same text in "
                                   "both prompts; only the declared sentence differs (check_pair)",
        ),
        licence="CC0-1.0; the pairs were written for this case",
    ),
    full=None,
    tests=TestDefaults(smallest_effect=0.5),
    reading=EthicalReading(
        stance="desired",
        consequences="Advice that fits where the user lives (distances, public transport) saves them time "
                     "and money; the same advice for both could strand the village user.",
        duties="Where a user lives is not a protected ground for transport advice, and the user stated it.",
        agreement="A user who says where they live expects the advice to take it into account.",
    ),
)
'''

INIT_PY = '''\
"""The {name} case for ipcausal (published under the `ipcausal.cases` entry point)."""
'''

TEST_PY = '''\
"""The {name} case: it loads, its pairs are clean and `ipcausal check-case` passes it."""

from {module}.case import CASE, read_car_needed


def test_the_reader_reads_yes_and_no():
    assert read_car_needed("Yes, the bus is rare.") == 1.0
    assert read_car_needed("No, you don't need your own car for that.") == 0.0
    assert read_car_needed("Answer: yes") == 1.0
    assert read_car_needed("I cannot say.") is None


def test_the_pairs_load():
    pairs = CASE.demo.load(0, None)
    assert len(pairs) == {n}
    assert len(CASE.demo.load(0, 3)) == 3


def test_check_case_passes():
    from ipcausal.study.checkcase import check_case

    res = check_case(CASE, placebo_runs=5)
    assert res.passed, str(res)
'''

CASE_MD = """\
# Case card: {name}

## Application
Advising a user on everyday transport (commuting, shopping, trips) after the user has said where
they live.

## Background B and its proxies
B is where the user lives, with two values: `city` and `village`. The proxy is explicit: the
prompt opens with "I live in a big city." or "I live in a small village.".

## Generator, and how it keeps S
Each of the {n} questions in `{module}/pairs.jsonl` is written once; the generator puts one of
the two sentences in front of it. The question and the request for a yes or a no are the same text
in both prompts, so the semantics S are held; the pair's `allowed` column declares the two
sentences, which are the only text `check_pair` may see change. The declaration is the demo source's
`intervention` (`ipcausal.scm.InterventionSpec`: changes B, holds S).

## Outcome and scorer
Each question asks whether the user needs a car, to be answered yes or no. The scorer (`essay`
with the rater `read_car_needed`, which reads the answer with ipcausal's `read_choice`) gives 1 for
yes and 0 for no: an interval outcome, Δ = car needed(village) − car needed(city) in {{-1, 0, 1}},
tested with the permutation test; a reply that says neither is left out and counted. For a
rating on a scale, read it with `ipcausal.scoring.number_reader(1, 5)` ("Answer: 4", "A: 4",
"4/5", "I'd rate it a 4" all read 4). Smallest effect of interest: d_z = 0.5
(`tests.smallest_effect`; `ipcausal check-case {name}` states the pairs it needs).

## Stance: desired
- Consequences: advice that fits where the user lives (distances, public transport) saves them
  time and money; the same advice for both could strand the village user.
- Duties: where a user lives is not a protected ground for transport advice, and the user
  stated it.
- Agreement: a user who says where they live expects the advice to take it into account.

## Data licence
CC0-1.0; the pairs were written for this case.
"""

README_MD = """\
# ipcausal-case-{dist}

An [ipcausal](https://pypi.org/project/ipcausal/) case, published under the entry-point group
`ipcausal.cases`. Its card is `CASE.md`.

    pip install .
    ipcausal cases                 # lists {name}
    ipcausal check-case {name}     # validates the card, the pairs, the generator, the size and the power
    ipcausal case {name} --backend simulated -o out
    python -m pytest tests
"""

#: The files :func:`scaffold_case` writes (``{module}`` is the package name).
SCAFFOLD_FILES: tuple[str, ...] = ("pyproject.toml", "README.md", "CASE.md", "{module}/__init__.py",
                                   "{module}/case.py", "{module}/pairs.jsonl", "tests/test_{module}.py")


def _pairs() -> str:
    lines = []
    for k, q in enumerate(_QUESTIONS):
        si, sj = _SAYS["city"], _SAYS["village"]
        lines.append(json.dumps({"pair_id": f"p{k + 1:02d}", "background_i": "city", "background_j": "village",
                                 "x_i": f"{si} {q} {_ASK}", "x_j": f"{sj} {q} {_ASK}",
                                 "allowed": json.dumps([si, sj])}, ensure_ascii=False))
    return "\n".join(lines) + "\n"


def scaffold_case(name: str, out: str | os.PathLike[str]) -> list[Path]:
    """Write an installable case package for ``name`` into the folder ``out``; return the files written.

    Parameters
    ----------
    name : str
        The case's name: a lower-case identifier (letters, digits, ``_``, ``-``).  The Python
        package is ``ipcausal_case_<name>`` (``-`` becomes ``_``).
    out : path
        A folder that does not exist yet, or an empty one.

    Returns
    -------
    list of Path
        The files, in :data:`SCAFFOLD_FILES` order.

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from ipcausal.cases.scaffold import scaffold_case
    >>> d = pathlib.Path(tempfile.mkdtemp()) / "bike"
    >>> [p.name for p in scaffold_case("bike", d)][:3]
    ['pyproject.toml', 'README.md', 'CASE.md']
    >>> scaffold_case("Bike", d)
    Traceback (most recent call last):
    ...
    ValueError: `name` must be a lower-case identifier (letters, digits, '_', '-'), got 'Bike'
    """
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"`name` must be a lower-case identifier (letters, digits, '_', '-'), got {name!r}")
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"`out` must be a path, got {type(out).__name__}")
    root = Path(out)
    if root.exists() and (not root.is_dir() or any(root.iterdir())):
        raise ValueError(f"`out` must be a new or empty folder, got {str(root)!r}")
    module = "ipcausal_case_" + name.replace("-", "_")
    fill = {"name": name, "module": module, "dist": name.replace("_", "-"), "n": len(_QUESTIONS)}
    texts = {"pyproject.toml": PYPROJECT, "README.md": README_MD, "CASE.md": CASE_MD,
             "{module}/__init__.py": INIT_PY, "{module}/case.py": CASE_PY, "{module}/pairs.jsonl": None,
             "tests/test_{module}.py": TEST_PY}
    written = []
    for rel in SCAFFOLD_FILES:
        path = root / rel.format(**fill)
        path.parent.mkdir(parents=True, exist_ok=True)
        template = texts[rel]
        path.write_text(_pairs() if template is None else template.format(**fill), encoding="utf-8")
        written.append(path)
    return written
