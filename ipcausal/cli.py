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

__all__ = ["main", "build_parser", "command_name", "CliError"]

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


class _Parser(argparse.ArgumentParser):
    """argparse with one-line errors (``ipcausal CMD: error: …``, exit 2), like every other CLI error."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        kwargs.setdefault("formatter_class", _HelpFormatter)
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]

    def error(self, message: str) -> None:  # type: ignore[override]
        self.exit(EXIT_ERROR, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


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

    try:
        return int(args.func(args) or 0)
    except (CliError, ValueError, TypeError, FileNotFoundError, ImportError, BackendError) as exc:
        if os.environ.get("IPCAUSAL_DEBUG"):
            raise
        print(f"ipcausal {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt as exc:  # study.run.RunInterrupted says what is kept and how to resume
        print(f"ipcausal {args.command}: {str(exc) or 'interrupted'}", file=sys.stderr)
        return 130


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
