"""The ``ipcausal`` command line: one sub-command per pipeline stage.

Each sub-command lives in ``ipcausal/commands/<name>.py`` and exposes
``register(subparsers)``, which adds its parser and sets ``func(args) -> int``.
Command modules import nothing heavy at module level, so ``ipcausal --help`` is fast.
Errors a user can fix print as one line (exit status 2); set ``IPCAUSAL_DEBUG=1`` for the traceback.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence

__all__ = ["main", "build_parser", "CliError"]

# order = order in --help
COMMANDS: tuple[str, ...] = (
    "build",
    "run",
    "score",
    "test",
    "report",
    "case",
    "cases",
    "bench",
    "audit",
    "demo",
    "reproduce",
    "power",
    "export",
    "import_",  # the `import` command (a Python keyword as a module name)
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


def build_parser() -> argparse.ArgumentParser:
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
        module.register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``ipcausal`` console script; returns the exit status."""
    parser = build_parser()
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
