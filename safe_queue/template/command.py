"""``safe-queue check``: the template checker's subcommand (registered by :mod:`safe_queue.cli`).

Exit codes: 0 no finding at or above ``--fail-on``; 1 one at or above it; 2 a usage error or
a file that is missing, unreadable, unparseable or hostile (one line on stderr naming the
file). A stack over CloudFormation's 500 resources is a warning on stderr, not an error.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from pathlib import Path
from typing import Any

from safe_queue.formats import FAIL_ON, FORMATS, exit_code, render

__all__ = ["add_parser", "run"]

_DESCRIPTION = """\
Check the SQS -> Lambda event source mappings of CloudFormation templates (JSON or YAML),
SAM templates and cdk.out cloud assemblies, read as one deployment, and of Terraform plans
and states (the JSON of `terraform show -json`). No AWS account needed.

exit codes:
  0  no finding at or above --fail-on
  1  a finding at or above --fail-on
  2  usage error, or a file that is missing, unreadable, unparseable, not a template,
     or hostile (over 1 MB, not UTF-8, a key twice, nested too deep, a YAML alias bomb,
     a symbolic-link loop); a stack over 500 resources is only a warning
"""


def _parameter(text: str) -> tuple[str, str]:
    name, sep, value = text.partition("=")
    if not sep or not name.strip():
        raise argparse.ArgumentTypeError(
            f"{text!r} is not NAME=VALUE. Fix: write e.g. --parameter RenderTimeout=180"
        )
    return name.strip(), value


def add_parser(subparsers: Any) -> argparse.ArgumentParser:
    """Register ``check`` on the CLI's subparsers."""
    parser: argparse.ArgumentParser = subparsers.add_parser(
        "check",
        help="check CloudFormation/SAM templates and cdk.out directories",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "paths",
        metavar="PATH",
        nargs="+",
        help="template file (JSON/YAML, SAM), cdk.out directory, or Terraform plan/state JSON",
    )
    parser.add_argument(
        "--format", choices=FORMATS, default="text", help="output format (default: text)"
    )
    parser.add_argument(
        "--fail-on",
        choices=FAIL_ON,
        default="error",
        help="exit 1 when a finding is at or above this level (default: error)",
    )
    parser.add_argument(
        "--parameter",
        metavar="NAME=VALUE",
        action="append",
        type=_parameter,
        default=[],
        help="a template parameter's value (repeatable); others take their Default",
    )
    parser.add_argument(
        "--output",
        "-o",
        metavar="FILE",
        help="write the report to FILE instead of stdout",
    )
    parser.set_defaults(run=run)
    return parser


def run(args: argparse.Namespace) -> int:
    """Run ``check`` with parsed arguments; returns the exit code."""
    from safe_queue.template import (
        ParameterError,
        TemplateError,
        TemplateLimitWarning,
        check_paths,
    )
    from safe_queue.terraform import TerraformError, is_terraform_json
    from safe_queue.terraform import check_paths as check_terraform

    terraform = [path for path in args.paths if is_terraform_json(path)]
    try:
        templates = [Path(path) for path in args.paths if path not in terraform]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", TemplateLimitWarning)
            report = check_paths(templates, dict(args.parameter))
        report = check_terraform(terraform, report) if terraform else report
    except (TemplateError, ParameterError, TerraformError) as error:
        print(f"safe-queue check: error: {error}", file=sys.stderr)
        return 2
    for warning in caught:
        if issubclass(warning.category, TemplateLimitWarning):
            print(f"safe-queue check: warning: {warning.message}", file=sys.stderr)
        else:
            warnings.warn_explicit(
                warning.message, warning.category, warning.filename, warning.lineno
            )
    output = render(report, args.format)
    if args.output:
        try:
            Path(args.output).write_text(output + "\n", encoding="utf-8")
        except OSError as error:
            print(
                f"safe-queue check: error: {args.output}: could not write: {error.strerror}",
                file=sys.stderr,
            )
            return 2
    else:
        sys.stdout.write(output + "\n")
    return exit_code(report, args.fail_on)
