"""The ``ipcausal`` command line: one sub-command per pipeline stage.

Each sub-command lives in ``ipcausal/commands/<name>.py``.  **Adding a command** (the lazy pattern):

1. write ``ipcausal/commands/<name>.py`` with a module-level ``HELP`` (its one-line help) and
   ``register(subparsers)``, which adds its parser and sets ``func(args) -> int``;
2. import only the standard library and :mod:`ipcausal.commands._common` at module level: every
   other import (numpy, pandas, the study layer, the choices of an option) goes *inside*
   ``register`` or the command's function;
3. add ``"<name>"`` to :data:`COMMANDS` (``import_`` is the ``import`` command: a trailing ``_``
   is dropped).

:func:`main` then registers only the command that runs: ``ipcausal --help`` and ``--version``
import each module for its ``HELP`` and call no ``register`` at all, so they load neither numpy
nor scipy nor numba (``tests/cli/test_fast_help.py`` checks it; ``benchmarks/bench_cli.py``
times it).  A module without ``HELP`` is registered in full even for ``--help`` (slower, but
correct).  :func:`build_parser` with no argument registers every command in full (for tests and
tools that inspect the parser).
Errors a user can fix print as one line (exit status 2); set ``IPCAUSAL_DEBUG=1`` for the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

__all__ = ["main", "build_parser", "command_name", "CliError", "suggestion"]

# order = order in --help
COMMANDS: tuple[str, ...] = (
    "build",
    "run",
    "score",
    "test",
    "report",
    "case",
    "mitigate",
    "cases",
    "bench",
    "new_case",  # the `new-case` command
    "check_case",  # the `check-case` command
    "validate",
    "audit",
    "demo",
    "reproduce",
    "power",
    "probe",
    "export",
    "import_",  # the `import` command (a Python keyword as a module name)
    "compare",
    "failures",
)

EXIT_OK, EXIT_ERROR, EXIT_INCOMPLETE = 0, 2, 3


class CliError(Exception):
    """An error to print as one line (no traceback) with exit status 2."""


class _HelpFormatter(argparse.HelpFormatter):
    """Help text wrapped at spaces only: a flag such as ``--essay-rater`` is never split at its hyphen."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        import textwrap

        return textwrap.wrap(" ".join(text.split()), width, break_on_hyphens=False, break_long_words=False)


def _option_strings(parser: argparse.ArgumentParser) -> list[str]:
    """Every ``--flag`` of ``parser`` and of the sub-commands registered under it."""
    out: list[str] = []
    for action in parser._actions:  # argparse keeps no public list of a parser's actions
        out += [o for o in action.option_strings if o.startswith("--")]
        if isinstance(action, argparse._SubParsersAction):
            for sub in dict.fromkeys(action.choices.values()):
                out += _option_strings(sub)
    return list(dict.fromkeys(out))


def suggestion(parser: argparse.ArgumentParser, message: str) -> str:
    """``"; did you mean --correction?"`` for a misspelt option or choice in an argparse ``message``.

    argparse (Python ≥ 3.14 with ``suggest_on_error``) suggests close choices itself; options it
    only calls "unrecognized", so difflib finds the closest ``--flag`` of the command.
    """
    import difflib
    import re

    hints = []
    found = re.match(r"unrecognized arguments: (.*)", message)
    if found:
        flags = _option_strings(parser)
        for token in found.group(1).split():
            if token.startswith("--"):
                close = difflib.get_close_matches(token.split("=", 1)[0], flags, n=1, cutoff=0.6)
                if close:
                    hints.append(f"{token.split('=', 1)[0]}: did you mean {close[0]}?")
    found = re.search(r"invalid choice: '([^']*)' \(choose from (.*)\)", message)
    if found and "maybe you meant" not in message:
        options = re.findall(r"'([^']*)'", found.group(2))
        close = difflib.get_close_matches(found.group(1), options, n=1, cutoff=0.6)
        if close:
            hints.append(f"did you mean '{close[0]}'?")
    return "; " + "; ".join(hints) if hints else ""


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``ipcausal CMD: error: …``, exit 2), like every other CLI error,
    and a close match suggested for a misspelt option or choice (:func:`suggestion`)."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        if sys.version_info >= (3, 14):  # argparse's own suggestions for choices and sub-commands
            kwargs.setdefault("suggest_on_error", True)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message}{suggestion(self, message)} (see {self.prog} --help)\n")


def _one_line(command: str):  # type: ignore[no-untyped-def]
    """A ``warnings.formatwarning`` that prints ``ipcausal CMD: warning: message (Category)`` on one line."""

    def fmt(message: Warning | str, category: type[Warning], filename: str, lineno: int,
            line: str | None = None) -> str:
        return f"ipcausal {command}: warning: {' '.join(str(message).split())} ({category.__name__})\n"

    return fmt


def command_name(module: str) -> str:
    """The command a module of :data:`COMMANDS` defines: its name without a trailing ``_``, with
    ``-`` for ``_`` (``new_case`` is ``new-case``)."""
    return module.rstrip("_").replace("_", "-")


def _command_of(argv: Sequence[str]) -> str:
    """The command ``argv`` runs (its first argument when that names a command), else ``""``."""
    names = {command_name(m) for m in COMMANDS}
    return argv[0] if argv and argv[0] in names else ""


def build_parser(full: str | None = None) -> argparse.ArgumentParser:
    """The ``ipcausal`` parser.

    Parameters
    ----------
    full : str or None
        ``None`` (default): every command registered in full.  A command name: only that one in
        full, the others as their one-line ``HELP`` (what :func:`main` does); ``""``: none in full
        (``ipcausal --help``).
    """
    from ipcausal import __version__

    parser = _Parser(
        prog="ipcausal",
        description="Does a language model implicitly personalize? Build paired prompts, run a model, "
        "score the responses and test for an effect of the implied user background.",
    )
    parser.add_argument("--version", action="version", version=f"ipcausal {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"ipcausal.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name == f"ipcausal.commands.{name}":
                continue
            raise
        lazy = full is not None and full != command_name(name) and isinstance(getattr(module, "HELP", None), str)
        if lazy:  # listed in --help with its one line; registered in full only when it runs
            sub.add_parser(command_name(name), help=module.HELP, add_help=False)
        else:
            module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ipcausal`` console script; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(_command_of(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, --version, or a bad value (argparse has printed the message)
        return int(exc.code or 0) if isinstance(exc.code, int) or exc.code is None else EXIT_ERROR
    if not getattr(args, "func", None):
        parser.print_help(sys.stderr)
        return EXIT_ERROR
    from ipcausal.backends.base import BackendError

    import warnings

    shown = warnings.formatwarning
    warnings.formatwarning = _one_line(args.command)  # warnings as one line, never the source line
    try:
        return int(args.func(args) or 0)
    except (CliError, ValueError, TypeError, FileNotFoundError, ImportError, BackendError) as exc:
        if os.environ.get("IPCAUSAL_DEBUG"):
            raise
        print(f"ipcausal {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except MemoryError as exc:  # what no check foresaw: still one line
        if os.environ.get("IPCAUSAL_DEBUG"):
            raise
        print(f"ipcausal {args.command}: error: out of memory ({exc or 'an allocation failed'}); lower --resamples "
              "or split the data", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as exc:  # study.run.RunInterrupted says what is kept and how to resume
        print(f"ipcausal {args.command}: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130
    finally:
        warnings.formatwarning = shown


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
