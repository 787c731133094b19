"""The ``safe-queue`` console script: one entry point, one module per subcommand.

A subcommand is a module with ``add_parser(subparsers) -> ArgumentParser`` (which calls
``parser.set_defaults(run=run)``) and ``run(args) -> int``. Adding one is listing the
module's name in :data:`SUBCOMMANDS`. Keep heavy imports (boto3) inside
``run``, so ``safe-queue check`` stays fast.

Exit codes (every subcommand): 0 nothing at or above ``--fail-on``; 1 a finding at or above
it; 2 a usage error, an unreadable input, missing credentials or an unknown region, with a
one-line message on stderr and no traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from types import ModuleType

__all__ = ["SUBCOMMANDS", "build_parser", "main"]

SUBCOMMANDS: tuple[str, ...] = ("safe_queue.template.command", "safe_queue.live.command")
"""Each module registers one subcommand (``add_parser``) and runs it (``run``)."""

_MISSING_EXTRA = (
    "safe-queue: {name} is not installed; the command needs the `cli` extra:"
    " pip install 'safe-queue[cli]'"
)

# ``safe-queue redrive`` has its own parser and exit codes (safe_queue.redrive.main); it is
# listed here for --help and handed its arguments whole.
_REDRIVE = "redrive"


def build_parser() -> argparse.ArgumentParser:
    """Build the ``safe-queue`` parser with every subcommand of :data:`SUBCOMMANDS`."""
    from safe_queue._version import __version__

    parser = argparse.ArgumentParser(
        prog="safe-queue",
        description="Check SQS -> Lambda consumers for settings that lose or duplicate messages.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in SUBCOMMANDS:
        module: ModuleType = importlib.import_module(name)
        module.add_parser(subparsers)
    subparsers.add_parser(
        _REDRIVE,
        add_help=False,
        help="move a dead-letter queue's messages back to their source (see"
        " `safe-queue redrive --help`)",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI and return its exit code (``console_scripts`` passes it to ``sys.exit``).

    Examples
    --------
    >>> main(["check", "no-such-template.yaml"])
    2
    """
    arguments = list(sys.argv[1:] if argv is None else argv)
    if arguments[:1] == [_REDRIVE]:
        from safe_queue import redrive

        return redrive.main(arguments[1:])
    try:
        parser = build_parser()
    except ModuleNotFoundError as missing:  # PyYAML or boto3 without the `cli` extra
        print(_MISSING_EXTRA.format(name=missing.name), file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(arguments)
    except SystemExit as stop:  # argparse: --help/--version (0) or a usage error (2)
        return stop.code if isinstance(stop.code, int) else 2
    try:
        return int(args.run(args))
    except KeyboardInterrupt:
        print(f"safe-queue {args.command}: interrupted", file=sys.stderr)
        return 2
    except Exception as error:  # never a traceback; say what to report
        print(
            f"safe-queue {args.command}: internal error: {type(error).__name__}: {error}"
            " (please report this with the input that caused it)",
            file=sys.stderr,
        )
        return 2


if __name__ == "__main__":
    sys.exit(main())
