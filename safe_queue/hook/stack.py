"""Stack and change-set targets: the template CloudFormation is about to deploy, judged.

The payload's ``template`` (JSON or YAML text, SAM included) is read by the template
adapter (:func:`safe_queue.template.mappings`: the same reading, acknowledgements in
``Metadata`` included, as ``safe-queue check``), after what only the deployment knows is
filled in, as CloudFormation itself will:

- the pseudo parameters (``AWS::Region``, ``AWS::AccountId``, ``AWS::Partition``,
  ``AWS::URLSuffix``, ``AWS::StackName``, ``AWS::StackId``) from the request;
- ``Fn::ImportValue`` of a literal export name (or one built from pseudo parameters) from
  the region's exports (``cloudformation:ListExports``, read only when the template imports).

A mapping whose queue, dead-letter queue or function is not in the template (an imported
queue, a function named by ARN or name) has them read live, read-only, as the audit reads
them (:mod:`safe_queue.live.facts`). Then every mapping is judged at once
(:func:`~safe_queue.engine.evaluate_all`). Parameter values are not in the payload: a
parameter's ``Default`` is assumed (and said), one without a ``Default`` leaves what it
sets unchecked, as in ``safe-queue check``.
"""

from __future__ import annotations

import dataclasses
import json
import re
import tempfile
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

from botocore.exceptions import BotoCoreError, ClientError

from safe_queue.arn import Arn, service_of
from safe_queue.engine import (
    FunctionFacts,
    MappingFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
    evaluate_all,
)
from safe_queue.hook.request import HookRequest
from safe_queue.hook.response import Outcome
from safe_queue.live.aws_errors import describe
from safe_queue.live.facts import read_dead_letter_queue, read_function, read_queue
from safe_queue.live.reader import AccountReader, region_of
from safe_queue.report import ReportedFinding, Unreadable, Where
from safe_queue.template import CheckedMapping, load_template, mappings
from safe_queue.template._file import MAX_TEMPLATE_BYTES

__all__ = [
    "MAX_WORKERS",
    "TEMPLATE_BYTES_MAX",
    "ExportsError",
    "evaluate_template",
    "fill_in_deployment",
]

MAX_WORKERS: Final = 8
TEMPLATE_BYTES_MAX: Final = MAX_TEMPLATE_BYTES
"""The template reader's limit (CloudFormation's 1 MB template body from S3)."""
_PSEUDO_SUB = re.compile(r"\$\{(AWS::[A-Za-z]+)\}")


class ExportsError(Exception):
    """``ListExports`` failed after its retries."""

    def __init__(self, failure: Unreadable) -> None:
        super().__init__(failure.sentence())
        self.failure = failure


def _pseudo(request: HookRequest) -> dict[str, str]:
    stack = Arn.parse(request.stack_id)
    stack_name = ""
    if stack is not None and stack.resource.startswith("stack/"):
        stack_name = stack.resource.split("/")[1]
    elif request.target == "STACK":
        stack_name = request.logical_id
    values = {
        "AWS::Region": request.region,
        "AWS::AccountId": request.account,
        "AWS::Partition": request.partition,
        "AWS::URLSuffix": "amazonaws.com.cn" if request.partition == "aws-cn" else "amazonaws.com",
        "AWS::StackName": stack_name,
        "AWS::StackId": request.stack_id,
    }
    return {name: value for name, value in values.items() if value}


def fill_in_deployment(
    node: Any, pseudo: Mapping[str, str], exports: Callable[[], Mapping[str, str]]
) -> Any:
    """Return ``node`` with the deployment's pseudo parameters and imports filled in.

    ``exports`` is called (once, by the caller's caching) only when an ``Fn::ImportValue``
    of a known name is met.

    Examples
    --------
    >>> fill_in_deployment({"Fn::Sub": "arn:${AWS::Partition}:sqs:${AWS::Region}:1:q"},
    ...     {"AWS::Partition": "aws", "AWS::Region": "eu-west-1"}, dict)
    'arn:aws:sqs:eu-west-1:1:q'
    >>> fill_in_deployment({"Fn::ImportValue": "orders-queue-arn"}, {},
    ...     lambda: {"orders-queue-arn": "arn:aws:sqs:eu-west-1:1:orders"})
    'arn:aws:sqs:eu-west-1:1:orders'
    """
    if isinstance(node, list):
        return [fill_in_deployment(item, pseudo, exports) for item in node]
    if not isinstance(node, dict):
        return node
    if len(node) == 1:
        ((key, argument),) = node.items()
        if key == "Ref" and isinstance(argument, str) and argument in pseudo:
            return pseudo[argument]
        if key == "Fn::Sub":
            return _sub(argument, pseudo, exports)
        if key == "Fn::ImportValue":
            name = fill_in_deployment(argument, pseudo, exports)
            if isinstance(name, str):
                value = exports().get(name)
                if value is not None:
                    return value
            return {key: name}
    return {key: fill_in_deployment(value, pseudo, exports) for key, value in node.items()}


def _sub(argument: Any, pseudo: Mapping[str, str], exports: Callable[[], Mapping[str, str]]) -> Any:
    def replace(match: re.Match[str]) -> str:
        return pseudo.get(match.group(1), match.group(0))

    if isinstance(argument, str):
        text = _PSEUDO_SUB.sub(replace, argument)
        return text if "${" not in text else {"Fn::Sub": text}
    if isinstance(argument, list) and len(argument) == 2 and isinstance(argument[0], str):
        variables = fill_in_deployment(argument[1], pseudo, exports)
        return {"Fn::Sub": [_PSEUDO_SUB.sub(replace, argument[0]), variables]}
    return {"Fn::Sub": fill_in_deployment(argument, pseudo, exports)}


class _Exports:
    """The region's exports, listed once, on first use."""

    def __init__(self, reader: AccountReader, region: str) -> None:
        self._reader = reader
        self._region = region
        self._values: dict[str, str] | None = None

    def __call__(self) -> Mapping[str, str]:
        if self._values is None:
            values: dict[str, str] = {}
            client = self._reader.client("cloudformation", self._region)
            try:
                for page in client.get_paginator("list_exports").paginate():
                    for export in page.get("Exports", []):
                        values[export["Name"]] = export["Value"]
            except (ClientError, BotoCoreError) as error:
                failure = describe(
                    error,
                    "cloudformation:ListExports",
                    f"the exports of {self._region}",
                    region=self._region,
                    expected_only=False,
                )
                if failure is None:
                    raise
                raise ExportsError(failure) from None
            self._values = values
        return self._values


def _dead_letter_arn(checked: CheckedMapping) -> str | None:
    """Return the literal ``deadLetterTargetArn`` of a template queue's ``RedrivePolicy``."""
    if checked.queue is None:
        return None
    policy = checked.queue.properties.get("RedrivePolicy")
    if isinstance(policy, str):
        try:
            policy = json.loads(policy)
        except ValueError:
            return None
    target = policy.get("deadLetterTargetArn") if isinstance(policy, dict) else None
    return target if isinstance(target, str) and service_of(target) == "sqs" else None


def _literal(value: Any) -> str | None:
    return value if isinstance(value, str) and value and "${" not in value else None


def _complete(
    checked: CheckedMapping, region: str, reader: AccountReader
) -> tuple[MappingFacts, tuple[Unreadable, ...]]:
    """Read live what the template names but does not define: queue, dead-letter queue, function."""
    facts = checked.facts
    failed: list[Unreadable] = []
    queue_arn = _literal(checked.where.queue)
    if checked.queue is None and isinstance(facts.queue, Unknown) and queue_arn:
        if service_of(queue_arn) == "sqs":
            queue, failures = read_queue(queue_arn, region_of(queue_arn, region), reader)
            facts = dataclasses.replace(facts, queue=queue)
            failed.extend(failures)
    elif (
        isinstance(facts.queue, QueueFacts)
        and isinstance(facts.queue.redrive, RedriveFacts)
        and isinstance(facts.queue.redrive.dead_letter_queue, Unknown)
    ):
        target = _dead_letter_arn(checked)
        if target is not None:
            dead_letter, failures = read_dead_letter_queue(
                target, region_of(target, region), reader
            )
            redrive = dataclasses.replace(facts.queue.redrive, dead_letter_queue=dead_letter)
            facts = dataclasses.replace(
                facts, queue=dataclasses.replace(facts.queue, redrive=redrive)
            )
            failed.extend(failures)
    function_name = _literal(checked.source.properties.get("FunctionName"))
    if checked.function is None and isinstance(facts.function, Unknown) and function_name:
        function: FunctionFacts | Unknown
        function, failures = read_function(function_name, region_of(function_name, region), reader)
        facts = dataclasses.replace(facts, function=function)
        failed.extend(failures)
    return facts, tuple(failed)


def _template_name(request: HookRequest) -> str:
    name = re.sub(r"[^A-Za-z0-9._-]", "-", _pseudo(request).get("AWS::StackName", ""))
    return f"{name or 'stack'}.template"


def evaluate_template(
    request: HookRequest, template_text: str, reader: AccountReader, subject: str
) -> Outcome:
    """Judge the SQS mappings of ``template_text``, as deployed by ``request``.

    Raises
    ------
    safe_queue.template.TemplateError
        The template cannot be read (or an acknowledgement in it is malformed).
    ExportsError
        The template imports values and ``ListExports`` failed.
    """
    region = request.region
    exports = _Exports(reader, region)
    with tempfile.TemporaryDirectory(prefix="safe-queue-hook-") as directory:
        given = Path(directory, _template_name(request))
        given.write_text(template_text, encoding="utf-8")
        body = load_template(given).body
        filled = json.dumps(
            fill_in_deployment(body, _pseudo(request), exports),
            default=str,
            separators=(",", ":"),
        )
        # A YAML template near CloudFormation's 1 MB can grow past it as JSON: it is then
        # read as written (what only the deployment knows stays unchecked, and says so).
        if len(filled.encode()) <= TEMPLATE_BYTES_MAX:
            given.write_text(filled, encoding="utf-8")
        _, checked = mappings([given])
    if not checked:
        return Outcome(subject)
    with ThreadPoolExecutor(max_workers=MAX_WORKERS) as pool:
        completed = list(pool.map(lambda m: _complete(m, region, reader), checked))
    verdicts = evaluate_all([facts for facts, _ in completed])
    outcome = Outcome(subject, checked=len(checked))
    seen: set[tuple[str, str]] = set()
    for mapping, (_, failed), findings in zip(checked, completed, verdicts, strict=True):
        where = Where(queue=mapping.where.queue, function=mapping.where.function)
        outcome.findings.extend(
            ReportedFinding(finding, mapping.source.logical_id, where=where) for finding in findings
        )
        for failure in failed:
            if (failure.operation, failure.resource) not in seen:
                seen.add((failure.operation, failure.resource))
                outcome.unreadable.append(failure)
    return outcome
