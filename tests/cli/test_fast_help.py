"""``ipcausal --help`` / ``--version`` register no command in full and import nothing heavy (issue 24 item 6)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ipcausal.cli import COMMANDS, build_parser, command_name, main

HEAVY = ("scipy", "numba", "pandas", "numpy")


def _loaded_after(argv: list[str]) -> list[str]:
    code = (f"import sys; from ipcausal.cli import main; rc = main({argv!r}); "
            f"print(rc, sorted(m for m in {HEAVY!r} if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    return out.stdout.strip().splitlines()[-1].split(" ", 1)


@pytest.mark.parametrize("argv", [["--help"], ["--version"], []])
def test_help_and_version_import_neither_scipy_nor_numba(argv: list[str]) -> None:
    rc, loaded = _loaded_after(argv)
    assert rc == ("0" if argv else "2")
    assert loaded == "[]", loaded  # not scipy, numba, pandas, nor even numpy


def test_one_command_help_registers_only_that_command() -> None:
    rc, loaded = _loaded_after(["failures", "--help"])
    assert rc == "0" and loaded == "[]", loaded


def test_help_lists_every_command_with_its_line(capsys: pytest.CaptureFixture[str]) -> None:
    import importlib

    assert main(["--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    for name in COMMANDS:
        module = importlib.import_module(f"ipcausal.commands.{name}")
        assert command_name(name) in out
        assert " ".join(module.HELP.split())[:40] in out, name


def test_the_running_command_is_registered_in_full(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["test", "--help"]) == 0
    assert "--correction" in capsys.readouterr().out
    lazy = next(a for a in build_parser("test")._actions if a.dest == "command").choices
    assert any(a.dest == "correction" for a in lazy["test"]._actions)
    assert not lazy["run"]._actions  # a stub: no options until `ipcausal run` itself runs
    full = next(a for a in build_parser()._actions if a.dest == "command").choices
    assert any(a.dest == "max_tokens" for a in full["run"]._actions)


def test_a_stub_command_still_runs_its_own_parser(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "/no/such/report.json", "-o", "r.html"]) == 2
    err = capsys.readouterr().err
    assert "ipcausal report: error: /no/such/report.json does not exist" in err
