"""Every ```python block in README.md and docs/*.md runs (blocks marked ```python no-run are skipped).

The blocks of one file run in order in one shared namespace, like a session reading the page
top to bottom; illustrative blocks that need a server, an API key or a user's file must be
marked ```python no-run.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FILES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_FENCE = re.compile(r"^```(\S*)([^\n]*)\n(.*?)^```\s*$", re.MULTILINE | re.DOTALL)


def _blocks() -> list:
    out = []
    for f in FILES:
        if not f.is_file():
            continue
        text = f.read_text(encoding="utf-8")
        for m in _FENCE.finditer(text):
            lang, rest = m.group(1), m.group(2).strip()
            if lang != "python" or "no-run" in rest.split():
                continue
            line = text.count("\n", 0, m.start()) + 1
            out.append(pytest.param(str(f.relative_to(REPO)), m.group(3), id=f"{f.relative_to(REPO)}:{line}"))
    return out


BLOCKS = _blocks()
_SESSIONS: dict[str, dict] = {}


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    """Where the blocks run: a fresh folder with ``../shared`` beside it, as next to a checkout.

    Blocks write their files here, never into the repository.
    """
    root = tmp_path_factory.mktemp("docs")
    work = root / "checkout"
    work.mkdir()
    shared = REPO.parent / "shared"
    if shared.exists():
        (root / "shared").symlink_to(shared, target_is_directory=True)
    return work


def test_docs_have_code_blocks():
    assert len(BLOCKS) >= 8
    names = {p.id.split(":")[0] for p in BLOCKS}
    assert {"docs/quickstart.md", "docs/statistics.md", "docs/concepts.md"} <= names


@pytest.mark.parametrize(("page", "code"), BLOCKS)
def test_code_block_runs(page, code, monkeypatch, tmp_path, workdir):
    before = sorted(p.name for p in REPO.iterdir())
    monkeypatch.chdir(workdir)  # blocks may name ../shared/data; what they write stays here
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("IPCAUSAL_DOCS_TMP", str(tmp_path))
    namespace = _SESSIONS.setdefault(page, {"__name__": "__docs__"})
    exec(compile(code, "<docs>", "exec"), namespace)  # noqa: S102 - our own documentation
    assert os.getcwd() == str(workdir)
    assert sorted(p.name for p in REPO.iterdir()) == before  # nothing written into the repository


@pytest.fixture(scope="module", autouse=True)
def _close_backends():
    """Close backends the pages created (a llama.cpp model left open complains at interpreter exit)."""
    yield
    for namespace in _SESSIONS.values():
        for value in list(namespace.values()):
            if hasattr(value, "generate") and callable(getattr(value, "close", None)):
                try:
                    value.close()
                except Exception:  # noqa: BLE001 - best effort at teardown
                    pass
        namespace.clear()
