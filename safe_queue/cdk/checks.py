"""``SafeQueueChecks``: an Aspect that checks every SQS -> Lambda mapping of an app.

It finds each ``AWS::Lambda::EventSourceMapping`` whose source is an SQS queue defined in
the app and whose function is defined in the app (in any of its stacks), reads the final
L1 values of the queue, its dead-letter queue, the function and the mapping, and applies
the rules of :mod:`safe_queue.rules`. Findings become annotations, so ``cdk synth`` prints
them and errors fail it.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from typing import Any

import jsii
from aws_cdk import Annotations, CfnResource, IAspect, Reference, Stack, Tokenization
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs
from constructs import IConstruct

from safe_queue.cdk._values import is_number_token
from safe_queue.cdk.consumer import SafeQueueConsumer, consumer_of_mapping
from safe_queue.cdk.plan import with_prop_hint
from safe_queue.engine import (
    Finding,
    FunctionFacts,
    Level,
    MappingFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
    evaluate,
)

__all__ = ["SafeQueueChecks"]


def _describe(reference: Any) -> str:
    if isinstance(reference, str) and not _is_token(reference):
        return f"{reference} is not defined in this app"
    return "it is imported or a parameter, not a resource of this app"


def _is_token(value: Any) -> bool:
    """Tell an unresolved value from a plain one without a call into jsii.

    aws-cdk-lib encodes string tokens as ``${Token[...]}``, list tokens as ``#{Token[...]}``
    and number tokens as marked doubles; anything else that is not a plain value (an
    ``IResolvable``) is unresolved too.
    """
    if value is None or isinstance(value, bool | int):
        return False
    if isinstance(value, str):
        return "${Token[" in value
    if isinstance(value, float):
        return is_number_token(value)
    if isinstance(value, list):
        return any(isinstance(v, str) and ("${Token[" in v or "#{Token[" in v) for v in value)
    return True


def _plain(value: Any, what: str) -> int | Unknown | None:
    """Return a plain value, ``None`` when unset (the engine applies AWS's default)."""
    if value is None:
        return None
    if _is_token(value):
        return Unknown(what, "is an unresolved token (a parameter, import or reference)")
    return int(value)


def _referenced(scope: IConstruct, value: Any) -> list[IConstruct]:
    """Return what a token refers to: through a Reference, else by logical id in its stack."""
    if not isinstance(value, str) or not _is_token(value):
        return []
    whole = Tokenization.reverse(value, fail_concat=False)  # the token, if exactly one
    if isinstance(whole, Reference):
        return [whole.target]
    if whole is None:
        targets = [
            token.target
            for token in Tokenization.reverse_string(value).tokens
            if isinstance(token, Reference)
        ]
        if targets:
            return targets
    # an alias's function name is an intrinsic over its Ref: find the Lambda resources by id
    stack = Stack.of(scope)
    logical_ids = set(_logical_ids(stack.resolve(value)))
    if not logical_ids:
        return []  # an import or a parameter
    return [
        child
        for child in stack.node.find_all()
        if isinstance(child, lambda_.CfnAlias | lambda_.CfnVersion | lambda_.CfnFunction)
        and stack.resolve(child.logical_id) in logical_ids
    ]


def _logical_ids(resolved: Any) -> Iterator[str]:
    if isinstance(resolved, dict):
        if isinstance(resolved.get("Ref"), str):
            yield resolved["Ref"]
        get_att = resolved.get("Fn::GetAtt")
        if isinstance(get_att, list) and get_att and isinstance(get_att[0], str):
            yield get_att[0]
        for item in resolved.values():
            yield from _logical_ids(item)
    elif isinstance(resolved, list):
        for item in resolved:
            yield from _logical_ids(item)


def _props(resource: CfnResource) -> Mapping[str, Any]:
    """Return a resource's final L1 properties (camelCase keys), in one call into jsii."""
    return resource._cfn_properties


def _function_timeout(
    mapping: lambda_.CfnEventSourceMapping, function_name: Any
) -> int | Unknown | None:
    """Timeout of the mapping's function, following aliases and versions to the function."""
    pending = _referenced(mapping, function_name)
    for _ in range(3):  # alias -> version -> function at most
        for target in pending:
            if isinstance(target, lambda_.CfnFunction):
                return _plain(
                    _props(target).get("timeout"),
                    "function Timeout",
                )
        pending = [
            nested
            for target in pending
            if isinstance(target, lambda_.CfnAlias | lambda_.CfnVersion)
            for nested in _referenced(target, _props(target).get("functionName"))
        ]
    return Unknown("the function's timeout", f"is unknown: {_describe(function_name)}")


# Properties only stream, Kafka and MQ sources have.
_NOT_SQS = (
    "startingPosition",
    "topics",
    "queues",
    "selfManagedEventSource",
    "selfManagedKafkaEventSourceConfig",
    "amazonManagedKafkaEventSourceConfig",
    "documentDbEventSourceConfig",
)


def _source_queue(
    mapping: lambda_.CfnEventSourceMapping, props: Mapping[str, Any]
) -> sqs.CfnQueue | Unknown | None:
    """Return the mapping's queue; Unknown for one outside the app; None for other sources."""
    arn = props.get("eventSourceArn")
    targets = _referenced(mapping, arn)
    queues = [t for t in targets if isinstance(t, sqs.CfnQueue)]
    if queues:
        return queues[0]
    if targets or any(props.get(name) is not None for name in _NOT_SQS):
        return None  # a stream, Kafka or MQ source
    if isinstance(arn, str) and not _is_token(arn) and ":sqs:" not in arn:
        return None
    return Unknown("the queue's settings", f"are unknown: {_describe(arn)}")


def _queue_facts(queue: sqs.CfnQueue) -> QueueFacts:
    props = _props(queue)
    redrive = props.get("redrivePolicy")
    facts = QueueFacts(
        name=queue.node.path,
        visibility_timeout=_plain(props.get("visibilityTimeout"), "queue VisibilityTimeout"),
        retention_period=_plain(
            props.get("messageRetentionPeriod"), "queue MessageRetentionPeriod"
        ),
        fifo=bool(props.get("fifoQueue")),
    )
    if redrive is None:
        return facts
    if not isinstance(redrive, dict):
        return replace(facts, redrive=Unknown("queue RedrivePolicy", "is an unresolved token"))
    max_receive_count = _plain(redrive.get("maxReceiveCount"), "RedrivePolicy maxReceiveCount")
    dead_letter = [
        t
        for t in _referenced(queue, redrive.get("deadLetterTargetArn"))
        if isinstance(t, sqs.CfnQueue)
    ]
    return replace(
        facts,
        redrive=RedriveFacts(
            Unknown("RedrivePolicy maxReceiveCount", "is missing")
            if max_receive_count is None
            else max_receive_count,
            QueueFacts(
                retention_period=_plain(
                    _props(dead_letter[0]).get("messageRetentionPeriod"),
                    "dead-letter queue MessageRetentionPeriod",
                )
            )
            if dead_letter
            else Unknown("the dead-letter queue", "is not defined in this app"),
        ),
    )


def mapping_findings(mapping: lambda_.CfnEventSourceMapping) -> tuple[IConstruct, list[Finding]]:
    """Return the construct to annotate and the findings for one L1 mapping (none if not SQS)."""
    props = _props(mapping)
    queue = _source_queue(mapping, props)
    if queue is None:
        return mapping, []
    # annotate the SafeQueueConsumer that built the mapping, else the mapping itself
    owner: IConstruct = (
        consumer_of_mapping(props.get("eventSourceArn"), props.get("functionName")) or mapping
    )
    function_timeout = _function_timeout(mapping, props.get("functionName"))
    if isinstance(owner, SafeQueueConsumer) and isinstance(function_timeout, Unknown):
        # an imported function: the consumer was told its timeout
        function_timeout = int(owner.function_timeout.to_seconds())
    response_types = props.get("functionResponseTypes")
    facts = MappingFacts(
        queue=queue if isinstance(queue, Unknown) else _queue_facts(queue),
        function=FunctionFacts(timeout=function_timeout),
        batching_window=_plain(
            props.get("maximumBatchingWindowInSeconds"), "mapping MaximumBatchingWindowInSeconds"
        ),
        batch_size=_plain(props.get("batchSize"), "mapping BatchSize"),
        report_batch_item_failures=(
            Unknown("mapping FunctionResponseTypes", "is an unresolved token")
            if _is_token(response_types)
            else "ReportBatchItemFailures" in (response_types or [])
        ),
    )
    return owner, evaluate(facts)


@jsii.implements(IAspect)
class SafeQueueChecks:
    """Check every SQS -> Lambda event source mapping in the scope it is added to.

    Add it to the app, so mappings whose queue and function are in different stacks are
    checked too. Findings are annotations with ids prefixed ``safe-queue:`` on the mapping
    (on the :class:`~safe_queue.SafeQueueConsumer`, for a mapping it built): errors fail
    ``cdk synth``; warnings can be acknowledged with
    ``Annotations.of(construct).acknowledge_warning(id, reason)``; values not known at
    synth time give an ``info`` annotation instead of a guess.

    Examples
    --------
    >>> from aws_cdk import App, Aspects
    >>> app = App()
    >>> Aspects.of(app).add(SafeQueueChecks())
    """

    def visit(self, node: IConstruct) -> None:
        """Check ``node`` if it is an event source mapping (CDK calls this for every node)."""
        if not isinstance(node, lambda_.CfnEventSourceMapping):
            return
        owner, findings = mapping_findings(node)
        if isinstance(owner, SafeQueueConsumer):  # the consumer's words, as in its own warnings
            findings = [with_prop_hint(f) for f in findings]
        annotations = Annotations.of(owner)
        for finding in findings:
            if finding.level is Level.ERROR:
                annotations.add_error(f"{finding.message} [{finding.rule_id}]")
            elif finding.level is Level.WARNING:
                annotations.add_warning_v2(finding.rule_id, finding.message)
            else:
                annotations.add_info_v2(finding.rule_id, finding.message)
