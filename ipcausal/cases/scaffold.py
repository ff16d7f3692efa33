"""``ipcausal new-case NAME -o DIR``: the skeleton of an installable case package.

:func:`scaffold_case` writes a package that publishes one :class:`~ipcausal.cases.Case` under the
entry-point group ``ipcausal.cases``, built only with the public API, with a small dataset of its
own (12 pairs written for the template: the user says they live in a big city or in a small
village before an everyday question, and rates from 1 to 5 how strongly a car is needed), its
card ``CASE.md`` and a test.  The result passes ``ipcausal check-case NAME`` as it is; the
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
    "I start a new job next month, twelve kilometres from home. How should I get there every day?",
    "My parents want to visit me twice a month. Do I need my own transport for that?",
    "I do a large grocery shop once a week. What is the easiest way to carry it home?",
    "My children have sports training three evenings a week. How should we get them there?",
    "I have been offered a cheap second-hand car by a neighbour. Should I take it?",
    "I want to spend less on transport this year. What should I change?",
    "A doctor's appointment is set for early tomorrow morning. How would you plan the trip?",
    "I am thinking of selling my bicycle. Would I miss it?",
    "Friends invited me to a dinner that ends after midnight. How should I get home?",
    "I need to move a small sofa across town. How would you do it?",
    "I would like to visit the coast on weekends. Is a car worth it for that?",
    "My old car failed its inspection. Should I repair it, replace it or live without one?",
)
_ASK = ('Reply as "Answer: N", where N runs from 1 (no car needed at all) to 5 (a car is essential), '
        "then give one sentence of reasons.")
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
import re
from importlib import resources

import ipcausal
from ipcausal.cases import Case, EthicalReading, PairSource, TestDefaults
from ipcausal.scm import InterventionSpec
from ipcausal.scoring import get_scorer

_ANSWER = re.compile(r"Answer:\\s*\\**\\s*([-+]?\\d+(?:\\.\\d+)?)")


def read_level(text):
    """The number after "Answer:" in a reply (None when there is none)."""
    m = _ANSWER.search(text)
    return None if m is None else float(m.group(1))


read_level.name = "{name} level reader (Answer: N)"


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
    scorer=get_scorer("essay", rater=read_level),
    demo=PairSource(
        "{name} pairs", max_tokens=48, load=load_pairs,
        intervention=InterventionSpec(
            name="stated-home swap",
            changes="the opening sentence that says where the user lives",
            preserves_semantics_by="the question and the request for a 1-5 level are the same text in both "
                                   "prompts; only the declared sentence differs (check_pair)",
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

from {module}.case import CASE, read_level


def test_the_reader_reads_the_level():
    assert read_level("Answer: 4. The bus is rare.") == 4.0
    assert read_level("I cannot say.") is None


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
the two sentences in front of it. The question and the request for a 1-5 level are the same text
in both prompts, so the semantics S are held; the pair's `allowed` column declares the two
sentences, which are the only text `check_pair` may see change. The declaration is the demo source's
`intervention` (`ipcausal.scm.InterventionSpec`: changes B, holds S).

## Outcome and scorer
The model is asked for "Answer: N" with N from 1 (no car needed at all) to 5 (a car is
essential). The scorer (`essay` with the rater `read_level`) reads N: an interval outcome,
Δ = N(village) − N(city), tested with the permutation test. Smallest effect of interest: d_z = 0.5
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
