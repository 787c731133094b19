"""``safe-queue audit``: the live audit on the command line.

``safe-queue audit [--region R ...] [--all-regions] [--profile P]
[--format text|json|sarif] [--fail-on error|warning|never] [--progress]``

Exit codes: 0 nothing at or above ``--fail-on``; 1 a finding at or above it; 2 a usage
error, no credentials, credentials the account refuses, an unknown profile, an unknown
region or an unreachable endpoint, each with one line on stderr.

Regions: ``--region`` (repeatable), else the profile's or ``AWS_REGION``'s region;
``--all-regions`` takes every Lambda region of the session's partition from botocore's
own data (offline), and leaves out the regions that refuse the credentials (opt-in
regions that are not enabled), naming them on stderr. A region name must be one that
the installed botocore knows, even with ``AWS_ENDPOINT_URL`` (emulators such as moto and
LocalStack serve the same names): a typo would otherwise audit an empty region and pass.
A region newer than botocore needs a newer boto3.
"""

from __future__ import annotations

import argparse
import difflib
import sys
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:  # imported in run(): `safe-queue check` must not pay for boto3
    import boto3

__all__ = ["add_parser", "run"]

PROGRESS_EVERY = 100
"""A progress line every this many mappings (and at the end)."""


class UsageError(Exception):
    """Arguments the audit cannot run with; exit code 2."""


def add_parser(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``audit`` subcommand to ``safe-queue``'s subparsers; it runs :func:`run`."""
    parser = subparsers.add_parser(
        "audit",
        help="audit the SQS -> Lambda event source mappings of a live AWS account",
        description=(
            "Read every Lambda event source mapping of the regions (read-only: see the"
            " IAM policy in the README) and apply the same rules as 'safe-queue check'."
            " Exit codes: 0 nothing at or above --fail-on, 1 a finding at or above it,"
            " 2 usage error, no credentials, unknown profile or region."
        ),
    )
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--region",
        action="append",
        metavar="R",
        help="a region to audit (repeatable); default: the profile's or AWS_REGION's region",
    )
    where.add_argument(
        "--all-regions",
        action="store_true",
        help="every Lambda region of the session's partition (from botocore's data)",
    )
    parser.add_argument("--profile", metavar="P", help="AWS profile (default: AWS_PROFILE)")
    parser.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    parser.add_argument(
        "--fail-on",
        choices=("error", "warning", "never"),
        default="error",
        help="exit 1 if a finding is at or above this level (default: error)",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="progress lines on stderr (the default when stderr is a terminal)",
    )
    parser.set_defaults(run=run)


def _known_regions(session: boto3.Session) -> list[str]:
    return sorted(
        {
            region
            for partition in session.get_available_partitions()
            for region in session.get_available_regions("lambda", partition)
        }
    )


def regions_to_audit(
    session: boto3.Session, region: list[str] | None, all_regions: bool
) -> list[str]:
    """Return the regions the arguments name, checked against botocore's list.

    Raises
    ------
    UsageError
        No region given or configured, or a region botocore does not know.
    """
    if all_regions:
        partition = "aws"
        if session.region_name:
            partition = session.get_partition_for_region(session.region_name)
        return session.get_available_regions("lambda", partition)
    regions = region or ([session.region_name] if session.region_name else [])
    if not regions:
        raise UsageError(
            "no region to audit; pass --region R (repeatable) or --all-regions, or set"
            " AWS_REGION or the profile's region"
        )
    known = _known_regions(session)
    for name in regions:
        if name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            hint = f"did you mean {close[0]!r}? " if close else ""
            raise UsageError(
                f"unknown region {name!r} (not a Lambda region in botocore's data); {hint}"
                "use a region name such as 'eu-west-1', or upgrade boto3 for a new region"
            )
    return list(dict.fromkeys(regions))


class _Progress:
    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def __call__(self, done: int, total: int) -> None:
        if done % PROGRESS_EVERY == 0 or done == total:
            print(f"audited {done}/{total} mappings", file=self._stream, flush=True)


def _error(message: str) -> int:
    print(f"safe-queue audit: error: {message}", file=sys.stderr)
    return 2


def run(args: Any) -> int:
    """Run ``safe-queue audit`` with parsed arguments; print the report; return the exit code."""
    import boto3
    from botocore.exceptions import BotoCoreError, ProfileNotFound

    from safe_queue.formats import exit_code, render
    from safe_queue.live.account import AuditError, audit

    try:
        session = boto3.Session(profile_name=args.profile)
        regions = regions_to_audit(session, args.region, args.all_regions)
        progress = _Progress(sys.stderr) if args.progress or sys.stderr.isatty() else None
        report = audit(
            session, regions, skip_unavailable_regions=args.all_regions, progress=progress
        )
    except ProfileNotFound as error:
        return _error(f"{error}; pass an existing --profile or fix AWS_PROFILE")
    except (UsageError, AuditError) as error:
        return _error(str(error))
    except BotoCoreError as error:
        return _error(f"cannot use the AWS session: {error}")
    skipped = [r for r in regions if r not in report.sources and r not in _failed(report)]
    if args.all_regions and skipped:
        if len(skipped) == len(regions):
            return _error(
                "every region refused the credentials; refresh them (aws sso login,"
                " new keys) and check that they belong to the account"
            )
        print(
            f"safe-queue audit: skipped {len(skipped)} regions that refuse the credentials"
            f" (not enabled for the account?): {', '.join(skipped)}",
            file=sys.stderr,
        )
    print(render(report, args.format))
    return exit_code(report, args.fail_on)


def _failed(report: Any) -> set[str]:
    return {f.extra.get("region", "") for f in report.findings}
