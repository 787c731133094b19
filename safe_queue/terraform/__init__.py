"""Check Terraform plans and states: the adapter behind ``safe-queue check plan.json``.

It reads the JSON that ``terraform show -json plan.out`` (a saved plan) and
``terraform show -json`` (the state) print: no terraform binary, provider or credentials.
Each SQS ``aws_lambda_event_source_mapping`` becomes :class:`~safe_queue.engine.MappingFacts`
with its ``aws_sqs_queue`` (the ``redrive_policy``, or an ``aws_sqs_queue_redrive_policy``,
followed to the dead-letter queue) and its ``aws_lambda_function`` (through an
``aws_lambda_alias``), and the engine evaluates it like every other surface's. The
mapping's id in every output is its resource address.

Links are made by ARN or name where the value is known (a state, or resources that already
exist), and in a first plan through the ``configuration``'s references (see
:mod:`safe_queue.terraform._links`). A value Terraform knows only after apply, or a link
that cannot be made to exactly one resource, is an :class:`~safe_queue.engine.Unknown`:
the rules that need it are reported as ``safe-queue:unchecked``, never guessed.

Acknowledgements are tags on the mapping, its function or its queue:
``"safe-queue:acknowledge:<rule>" = "<reason>"``; acknowledged findings are reported,
marked, and never fail a run.

Examples
--------
>>> import json, pathlib, tempfile
>>> state = {"format_version": "1.0", "terraform_version": "1.11.4", "values": {
...     "root_module": {"resources": [
...         {"address": "aws_sqs_queue.jobs", "mode": "managed", "type": "aws_sqs_queue",
...          "name": "jobs", "values": {"arn": "arn:aws:sqs:eu-west-1:123456789012:jobs",
...          "name": "jobs", "visibility_timeout_seconds": 60}},
...         {"address": "aws_lambda_function.jobs", "mode": "managed",
...          "type": "aws_lambda_function", "name": "jobs",
...          "values": {"function_name": "jobs", "timeout": 180}},
...         {"address": "aws_lambda_event_source_mapping.jobs", "mode": "managed",
...          "type": "aws_lambda_event_source_mapping", "name": "jobs",
...          "values": {"event_source_arn": "arn:aws:sqs:eu-west-1:123456789012:jobs",
...          "function_name": "jobs", "batch_size": 1}}]}}}
>>> with tempfile.TemporaryDirectory() as directory:
...     path = pathlib.Path(directory, "state.json")
...     _ = path.write_text(json.dumps(state))
...     report = check_paths([path])
>>> [(f.rule_id, f.resource, f.where.queue) for f in report.findings]
... # doctest: +NORMALIZE_WHITESPACE
[('safe-queue:visibility-below-function-timeout', 'aws_lambda_event_source_mapping.jobs',
  'aws_sqs_queue.jobs'),
 ('safe-queue:no-dead-letter-queue', 'aws_lambda_event_source_mapping.jobs',
  'aws_sqs_queue.jobs')]
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from safe_queue.engine import evaluate_all
from safe_queue.report import Report, ReportedFinding
from safe_queue.terraform._facts import ACKNOWLEDGE_TAG, TerraformMapping, build_mappings
from safe_queue.terraform._load import TerraformError, is_terraform_json, load

__all__ = [
    "ACKNOWLEDGE_TAG",
    "TerraformError",
    "TerraformMapping",
    "check_paths",
    "is_terraform_json",
    "mappings",
]


def mappings(paths: Sequence[str | Path]) -> list[TerraformMapping]:
    """Read plans and states as one run and build the facts of every SQS mapping in them.

    A known ARN or name is looked up in the same file first, then in the others; the
    ``configuration``'s references are followed within one plan.

    Raises
    ------
    TerraformError
        A file is missing, unreadable or not JSON from ``terraform show -json``, or an
        acknowledgement tag names no rule or gives no reason.
    """
    return build_mappings([load(path) for path in paths])


def check_paths(paths: Sequence[str | Path], report: Report | None = None) -> Report:
    """Check every SQS -> Lambda mapping of Terraform plans and states.

    Parameters
    ----------
    paths
        JSON files printed by ``terraform show -json`` (plans and states).
    report
        A report to add to (``safe-queue check`` passes the templates' report); a new
        one when ``None``.

    Returns
    -------
    Report
        One :class:`~safe_queue.report.ReportedFinding` per finding (acknowledged ones
        marked): ``resource`` is the mapping's address, ``template`` the JSON file,
        ``line`` ``None`` (plans have no lines), ``where`` as :attr:`TerraformMapping.where`.

    Raises
    ------
    TerraformError
        As :func:`mappings`.
    """
    checked = mappings(paths)
    report = report if report is not None else Report()
    report.sources.extend(str(path) for path in paths)
    verdicts = evaluate_all([mapping.facts for mapping in checked])
    for mapping, findings in zip(checked, verdicts, strict=True):
        report.mappings_checked += 1
        report.findings.extend(
            ReportedFinding(
                finding, resource=mapping.address, template=mapping.path, where=mapping.where
            )
            for finding in findings
        )
    return report
