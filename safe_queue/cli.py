"""The ``safe-queue`` command (MINIMAL stand-in with the ``audit`` subcommand only).

The template/CLI branch owns the real module; the lead merges the subcommands.

Exit codes: 0 nothing at or above ``--fail-on``; 1 a finding at or above it; 2 a usage
error, no credentials, an unknown region or profile.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from safe_queue.live import command as audit_command

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``safe-queue`` with ``argv`` (default: the process's arguments); return the exit code."""
    parser = argparse.ArgumentParser(
        prog="safe-queue",
        description="Check SQS -> Lambda mappings for duplicated or lost messages.",
    )
    subparsers = parser.add_subparsers(dest="command", required=True)
    audit_command.add_parser(subparsers)
    args = parser.parse_args(argv)
    code: int = args.run(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
