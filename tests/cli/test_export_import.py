"""The export/import commands: registered, light at --help time, choices that stay the library's."""

from __future__ import annotations

import subprocess
import sys

import pytest

from ipcausal.cli import build_parser, main


def _sub(command: str, name: str) -> dict:
    top = next(a for a in build_parser()._actions if a.dest == "command").choices[command]
    sub = next(a for a in top._actions if a.dest in ("target", "source")).choices[name]
    return {a.dest: a for a in sub._actions}


def test_commands_are_registered_with_the_house_flags() -> None:
    for command, names in (("export", ("validation", "inspect", "lm-eval")), ("import", ("validation", "inspect",
                                                                                       "lm-eval"))):
        for name in names:
            opts = _sub(command, name)
            assert opts["out"].option_strings == ["-o", "--out"] and opts["out"].required


def test_text_choices_are_the_library_names() -> None:
    from ipcausal.interop.lm_eval import TEXT_FIELDS

    assert tuple(_sub("import", "lm-eval")["text"].choices) == TEXT_FIELDS


def test_help_imports_neither_inspect_nor_pandas() -> None:
    code = ("import sys; from ipcausal.cli import build_parser; build_parser(); "
            "print(sorted(m for m in ('inspect_ai', 'pandas', 'lm_eval') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"


def test_no_format_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export"]) == 2
    assert "choose what to export: validation, inspect or lm-eval" in capsys.readouterr().err
    assert main(["import"]) == 2
    assert "ipcausal import: error: choose what to import" in capsys.readouterr().err


def test_importing_interop_is_light() -> None:
    code = ("import sys, ipcausal.interop as m; m.__all__; "
            "print(sorted(x for x in ('inspect_ai', 'pandas', 'lm_eval') if x in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]"
