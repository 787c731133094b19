"""Rule examples: small configurations, as facts, and as the CloudFormation they stand for.

Every rule declares a compliant and a non-compliant :class:`Example`. An example is one or
more mappings' facts; :meth:`Example.template` writes them as a CloudFormation template
(plain ``AWS::SQS::Queue``, ``AWS::Lambda::Function`` and
``AWS::Lambda::EventSourceMapping`` resources), which the docs show and the tests feed to
every surface (``safe-queue check``, the CDK plugin, the live audit, cfn-lint...).

:func:`example` starts from :data:`BASELINE`, a mapping that breaks no rule (the seed
incident's 180 s function, fixed), and changes what the rule is about.

Examples
--------
>>> broken = example("Visibility 60 s on a 180 s function.", queue={"visibility_timeout": 60})
>>> template = broken.template()
>>> template["Resources"]["Queue"]["Properties"]["VisibilityTimeout"]
60
>>> sorted(template["Resources"])
['Consumer', 'ConsumerRole', 'DeadLetterQueue', 'Mapping', 'Queue']
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from safe_queue import keys
from safe_queue.engine import limits
from safe_queue.engine.facts import (
    FunctionFacts,
    MappingFacts,
    ProvisionedFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
)

__all__ = ["BASELINE", "Example", "example", "lambda_sqs_role"]

BASELINE: Final = MappingFacts(
    queue=QueueFacts(
        name="Queue",
        visibility_timeout=1082,
        retention_period=limits.RETENTION_DEFAULT,
        redrive=RedriveFacts(
            5, QueueFacts(name="DeadLetterQueue", retention_period=limits.RETENTION_MAX)
        ),
    ),
    function=FunctionFacts(name="Consumer", timeout=180, key="Consumer"),
    name="Mapping",
    batch_size=5,
    batching_window=2,
    report_batch_item_failures=True,
)
"""A mapping that breaks no rule: visibility 6 x 180 s + 2 s, a dead-letter queue after 5
receives that keeps messages 14 days, batches of 5 with ReportBatchItemFailures."""

_FILTER: Final = {"Filters": [{"Pattern": json.dumps({"body": {"kind": ["invoice"]}})}]}
_HANDLER: Final = "def handler(event, context):\n    return {'batchItemFailures': []}\n"


@dataclass(frozen=True)
class Example:
    """A configuration of one or more mappings, described in a sentence.

    Attributes
    ----------
    description
        What it shows.
    mappings
        The mappings' facts; queues, dead-letter queues and functions are shared by name.
    """

    description: str
    mappings: tuple[MappingFacts, ...]

    def template(self) -> dict[str, Any]:
        """Return the example as a CloudFormation template (a dict, JSON-ready).

        Logical ids are the facts' names; every function gets one role
        (``ConsumerRole``). Values must be known (no :class:`~safe_queue.engine.Unknown`).
        """
        resources: dict[str, Any] = {"ConsumerRole": lambda_sqs_role()}
        for mapping in self.mappings:
            queue, function = _known(mapping.queue), _known(mapping.function)
            resources.setdefault(queue.name, _queue(queue, mapping.derived_function_timeout))
            if isinstance(queue.redrive, RedriveFacts):
                dead_letter = _known(queue.redrive.dead_letter_queue)
                resources.setdefault(dead_letter.name, _queue(dead_letter, None))
            resources.setdefault(function.name, _function(function))
            resources[mapping.name] = _mapping(mapping, queue.name, function.name)
        return {"AWSTemplateFormatVersion": "2010-09-09", "Resources": resources}


def _known(value: Any) -> Any:
    if isinstance(value, Unknown):
        raise ValueError(f"an example's values must be known, not {value}")
    return value


def _put(properties: dict[str, Any], name: str, value: Any) -> None:
    if value is not None:
        properties[name] = _known(value)


def _queue(queue: QueueFacts, derived_function_timeout: int | None) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    _put(properties, "QueueName", queue.queue_name)
    _put(properties, "FifoQueue", queue.fifo)
    _put(properties, "ContentBasedDeduplication", queue.content_based_deduplication)
    _put(properties, "VisibilityTimeout", queue.visibility_timeout)
    _put(properties, "MessageRetentionPeriod", queue.retention_period)
    if isinstance(queue.redrive, RedriveFacts):
        dead_letter = _known(queue.redrive.dead_letter_queue)
        properties["RedrivePolicy"] = {
            "deadLetterTargetArn": {"Fn::GetAtt": [dead_letter.name, "Arn"]},
            "maxReceiveCount": _known(queue.redrive.max_receive_count),
        }
    resource: dict[str, Any] = {"Type": "AWS::SQS::Queue", "Properties": properties}
    if derived_function_timeout is not None:
        resource["Metadata"] = {keys.DERIVED_FUNCTION_TIMEOUT: derived_function_timeout}
    return resource


def _function(function: FunctionFacts) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "Runtime": "python3.13",
        "Handler": "index.handler",
        "Code": {"ZipFile": _HANDLER},
        "Role": {"Fn::GetAtt": ["ConsumerRole", "Arn"]},
    }
    _put(properties, "Timeout", function.timeout)
    _put(properties, "ReservedConcurrentExecutions", function.reserved_concurrency)
    if function.capacity_provider:
        properties["CapacityProviderConfig"] = {
            "LambdaManagedInstancesCapacityProviderConfig": {
                "CapacityProviderArn": {
                    "Fn::Sub": "arn:${AWS::Partition}:lambda:${AWS::Region}:${AWS::AccountId}"
                    ":capacity-provider:consumers"
                }
            }
        }
    if function.failure_backoff is not None:
        backoff = _known(function.failure_backoff)
        properties["Environment"] = {
            "Variables": {
                keys.BACKOFF_BASE_ENV: str(backoff.base),
                keys.BACKOFF_CAP_ENV: str(backoff.cap),
            }
        }
    return {"Type": "AWS::Lambda::Function", "Properties": properties}


def _mapping(mapping: MappingFacts, queue: str, function: str) -> dict[str, Any]:
    properties: dict[str, Any] = {
        "EventSourceArn": {"Fn::GetAtt": [queue, "Arn"]},
        "FunctionName": {"Ref": function},
    }
    _put(properties, "BatchSize", mapping.batch_size)
    _put(properties, "MaximumBatchingWindowInSeconds", mapping.batching_window)
    if mapping.report_batch_item_failures:
        properties["FunctionResponseTypes"] = [limits.REPORT_BATCH_ITEM_FAILURES]
    if mapping.max_concurrency is not None:
        properties["ScalingConfig"] = {"MaximumConcurrency": _known(mapping.max_concurrency)}
    if mapping.has_filters:
        properties["FilterCriteria"] = _FILTER
    if isinstance(mapping.provisioned, ProvisionedFacts):
        config: dict[str, Any] = {}
        _put(config, "MinimumPollers", mapping.provisioned.minimum_pollers)
        _put(config, "MaximumPollers", mapping.provisioned.maximum_pollers)
        properties["ProvisionedPollerConfig"] = config
    return {"Type": "AWS::Lambda::EventSourceMapping", "Properties": properties}


def example(
    description: str,
    *,
    queue: Mapping[str, Any] | None = None,
    dead_letter_queue: Mapping[str, Any] | None = None,
    max_receive_count: int | None = 5,
    function: Mapping[str, Any] | None = None,
    mapping: Mapping[str, Any] | None = None,
) -> Example:
    """Return :data:`BASELINE` with some facts changed, as a one-mapping example.

    Parameters
    ----------
    description
        What the example shows.
    queue, dead_letter_queue, function, mapping
        Fields of :class:`QueueFacts` / :class:`FunctionFacts` / :class:`MappingFacts` to
        change (``{"visibility_timeout": 60}``).
    max_receive_count
        The redrive policy's ``maxReceiveCount``; ``None``: no dead-letter queue at all.
    """
    base_queue = _known(BASELINE.queue)
    base_redrive = base_queue.redrive
    redrive: RedriveFacts | None = None
    if max_receive_count is not None:
        dead_letter = dataclasses.replace(
            base_redrive.dead_letter_queue, **dict(dead_letter_queue or {})
        )
        redrive = RedriveFacts(max_receive_count, dead_letter)
    facts = dataclasses.replace(
        BASELINE,
        queue=dataclasses.replace(base_queue, redrive=redrive, **dict(queue or {})),
        function=dataclasses.replace(_known(BASELINE.function), **dict(function or {})),
        **dict(mapping or {}),
    )
    return Example(description, (facts,))


def lambda_sqs_role() -> dict[str, Any]:
    """Return an ``AWS::IAM::Role`` for a Lambda function, with the managed SQS-consumer policy.

    Examples
    --------
    >>> lambda_sqs_role()["Properties"]["AssumeRolePolicyDocument"]["Statement"][0]["Principal"]
    {'Service': 'lambda.amazonaws.com'}
    """
    return {
        "Type": "AWS::IAM::Role",
        "Properties": {
            "AssumeRolePolicyDocument": {
                "Version": "2012-10-17",
                "Statement": [
                    {
                        "Effect": "Allow",
                        "Principal": {"Service": "lambda.amazonaws.com"},
                        "Action": "sts:AssumeRole",
                    }
                ],
            },
            "ManagedPolicyArns": [
                {
                    "Fn::Sub": "arn:${AWS::Partition}:iam::aws:policy/service-role/"
                    "AWSLambdaSQSQueueExecutionRole"
                }
            ],
        },
    }
