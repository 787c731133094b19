"""``safe-queue audit``: the live audit on the command line.

``safe-queue audit [--region R ...] [--all-regions] [--profile P]
[--format text|json|sarif] [--fail-on error|warning|info|never] [--allow-incomplete]
[--progress] [--debug]``

Exit codes: 0 nothing at or above ``--fail-on``; 1 a finding at or above it; 2 a usage
error, no credentials, credentials the account refuses, an unknown profile, an unknown
region, **an incomplete audit**, or an internal error, each with one line on stderr.

An audit is complete, or says it is not. A mapping, queue or function (or a region's
listing) that could not be read because of an AWS error after the retries (access
denied, throttled, not found, a server error, an unreachable endpoint) is reported: one
line on stderr per failed read (the operation, the resource, the AWS error code and
message, what to do), an ``info`` ``safe-queue:unchecked`` finding in the report, then a
one-line summary naming how many mappings could not be read and why, and exit code 2,
whatever ``--fail-on`` says. ``--allow-incomplete`` accepts a partial audit: the same
lines, then the exit code of ``--fail-on`` for what was read.

Any other exception is a bug in safe-queue: one line saying so, exit 2; ``--debug``
prints its traceback.

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
import traceback
from collections import Counter
from typing import TYPE_CHECKING, Any, Final, TextIO

from safe_queue.formats import FAIL_ON, FORMATS

if TYPE_CHECKING:  # imported in run(): `safe-queue check` must not pay for boto3
    import boto3

    from safe_queue.report import Report, Unreadable

__all__ = ["add_parser", "incomplete_summary", "run"]

PROGRESS_EVERY = 100
"""A progress line every this many mappings (and at the end)."""

MAPPINGS_NAMED: Final = 3
"""A failed read's line names this many of the mappings it leaves unchecked, then counts."""

_KINDS: Final = {
    "denied": "access denied",
    "throttled": "throttled after retries",
    "not-found": "not found",
    "unavailable": "server error after retries",
    "unreachable": "endpoint unreachable",
}


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
            " 2 usage error, no credentials, unknown profile or region, an incomplete"
            " audit (something could not be read; see --allow-incomplete) or an internal"
            " error."
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
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="error",
        help="exit 1 if a finding is at or above this level (default: error)",
    )
    parser.add_argument(
        "--allow-incomplete",
        action="store_true",
        help="accept a partial audit: when some mappings could not be read (an AWS error"
        " after retries), still report them, but exit by --fail-on instead of 2",
    )
    parser.add_argument(
        "--progress",
        action="store_true",
        help="progress lines on stderr (the default when stderr is a terminal)",
    )
    parser.add_argument(
        "--debug",
        action="store_true",
        help="on an internal error (a bug in safe-queue), print its traceback",
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


def _failure_line(failure: Unreadable) -> str:
    """Describe one failed read: its sentence, and the mappings it leaves unchecked."""
    if not failure.mappings:
        unchecked = f"every mapping of {failure.resource}"
    else:
        named = ", ".join(failure.mappings[:MAPPINGS_NAMED])
        more = len(failure.mappings) - MAPPINGS_NAMED
        unchecked = f"{named} and {more} more" if more > 0 else named
        noun = "mapping" if len(failure.mappings) == 1 else "mappings"
        unchecked = f"{len(failure.mappings)} {noun} ({unchecked})"
    return f"safe-queue audit: could not read: {failure.sentence()} Unchecked: {unchecked}."


def incomplete_summary(report: Report) -> str:
    """Say in one line how many mappings (and regions) could not be read, and why.

    Examples
    --------
    >>> from safe_queue.report import Report, Unreadable
    >>> report = Report(mappings_checked=40, sources=["eu-west-1"], source_kind="region",
    ...     unreadable=[Unreadable("sqs:GetQueueAttributes", "q", "unavailable", "HTTP 503", "",
    ...     "later", mappings=("a", "b")), Unreadable("lambda:GetFunctionConfiguration", "f",
    ...     "denied", "AccessDeniedException", "", "grant it", mappings=("b", "c"))])
    >>> print(incomplete_summary(report))
    incomplete audit: 3 of 40 mappings could not be read (failed reads: 1 server error after
    retries, 1 access denied); their findings are unknown
    """
    mappings = {uuid for failure in report.unreadable for uuid in failure.mappings}
    regions = [failure.resource for failure in report.unreadable if not failure.mappings]
    parts = [f"{len(mappings)} of {report.mappings_checked} mappings"] if mappings else []
    if regions:
        noun = "region" if len(regions) == 1 else "regions"
        parts.append(f"the mappings of {len(regions)} {noun} ({', '.join(regions)})")
    kinds = Counter(failure.kind for failure in report.unreadable)
    why = ", ".join(f"{count} {_KINDS.get(kind, kind)}" for kind, count in kinds.items())
    return (
        f"incomplete audit: {' and '.join(parts)} could not be read (failed reads: {why});"
        " their findings are unknown"
    )


def _internal_error(error: BaseException, debug: bool) -> int:
    """Report a bug in one line (and its traceback with ``--debug``); return exit code 2."""
    if debug:
        traceback.print_exception(error, file=sys.stderr)
    notes = "".join(f" ({note})" for note in getattr(error, "__notes__", []))
    hint = "" if debug else "; run again with --debug for the traceback"
    print(
        f"safe-queue audit: internal error: {type(error).__name__}: {error}{notes}. This is a"
        f" bug in safe-queue, not a finding about the account: please report it{hint}",
        file=sys.stderr,
    )
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
    except ProfileNotFound as error:
        return _error(f"{error}; pass an existing --profile or fix AWS_PROFILE")
    except UsageError as error:
        return _error(str(error))
    except BotoCoreError as error:
        return _error(f"cannot use the AWS session: {error}")
    progress = _Progress(sys.stderr) if args.progress or sys.stderr.isatty() else None
    try:
        report = audit(
            session, regions, skip_unavailable_regions=args.all_regions, progress=progress
        )
    except AuditError as error:
        return _error(str(error))
    except Exception as error:  # not an AWS error the audit expects: a bug, said out loud
        return _internal_error(error, args.debug)
    skipped = [r for r in regions if r not in report.sources]
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
    if report.complete:
        return exit_code(report, args.fail_on)
    for failure in report.unreadable:
        print(_failure_line(failure), file=sys.stderr)
    summary = incomplete_summary(report)
    if args.allow_incomplete:
        print(
            f"safe-queue audit: warning: {summary}; accepted by --allow-incomplete, so the"
            " exit code is --fail-on's for what was read",
            file=sys.stderr,
        )
        return exit_code(report, args.fail_on)
    return _error(
        f"{summary}. Fix: see the lines above, then audit again; or pass --allow-incomplete"
        " to accept a partial audit"
    )
