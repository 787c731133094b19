"""Where a run's SQS event source mappings are written: CloudFormation resources and SAM events.

:func:`find_mappings` yields one :class:`MappingSource` per ``AWS::Lambda::EventSourceMapping``
and per SAM event SAM turns into one (``Type: SQS``, and SNS with ``SqsSubscription``),
with the properties SAM would copy onto it; :mod:`_facts` then builds each one's facts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from safe_queue.template._file import TemplateFile
from safe_queue.template._values import QUEUE_TYPE, SAM_FUNCTION

__all__ = ["MAPPING_TYPE", "MappingSource", "find_mappings"]

MAPPING_TYPE = "AWS::Lambda::EventSourceMapping"
# The properties of a SAM pull event (Type: SQS) that SAM copies onto the mapping it
# generates (aws-sam-translator, PullEventSource.to_cloudformation), stream-only ones
# included: the mapping is classified by its queue, whatever else it carries.
_SAM_PULL_PROPERTIES = (
    "BatchSize",
    "StartingPosition",
    "StartingPositionTimestamp",
    "Enabled",
    "MaximumBatchingWindowInSeconds",
    "MaximumRetryAttempts",
    "BisectBatchOnFunctionError",
    "MaximumRecordAgeInSeconds",
    "ParallelizationFactor",
    "Topics",
    "Queues",
    "SourceAccessConfigurations",
    "TumblingWindowInSeconds",
    "FunctionResponseTypes",
    "FilterCriteria",
    "KmsKeyArn",
    "ScalingConfig",
    "ProvisionedPollerConfig",
    "MetricsConfig",
    "LoggingConfig",
)


@dataclass(frozen=True)
class MappingSource:
    """An event source mapping as written: a CloudFormation resource or a SAM SQS event.

    Attributes
    ----------
    template
        Where it is.
    logical_id
        The mapping's logical id (for SAM, the one SAM generates: function id + event name).
    line
        1-based line, where known.
    properties
        ``AWS::Lambda::EventSourceMapping`` properties, unresolved.
    metadata
        The resource's ``Metadata`` (the construct's ``safe-queue:*`` keys).
    condition
        The resource's ``Condition``, if any.
    resource
        The template resource it is written in (for a SAM event, the function); ``""``
        when that is ``logical_id``.
    """

    template: TemplateFile
    logical_id: str
    line: int | None
    properties: dict[str, Any]
    metadata: dict[str, Any] = field(default_factory=dict)
    condition: str | None = None
    resource: str = ""


def find_mappings(template: TemplateFile) -> Iterator[MappingSource]:
    """Every event source mapping of a template, SAM ``Type: SQS`` events included."""
    for logical_id, resource in list(template.resources.items()):  # SAM may add queues
        if not isinstance(resource, dict):
            continue
        kind = resource.get("Type")
        properties = resource.get("Properties")
        properties = properties if isinstance(properties, dict) else {}
        metadata = resource.get("Metadata")
        metadata = metadata if isinstance(metadata, dict) else {}
        condition = resource.get("Condition")
        condition = condition if isinstance(condition, str) else None
        if kind == MAPPING_TYPE:
            yield MappingSource(
                template,
                logical_id,
                template.lines.get(logical_id),
                properties,
                metadata,
                condition,
            )
        elif kind == SAM_FUNCTION:
            events = properties.get("Events")
            if not isinstance(events, dict):
                continue
            for event_name, event in events.items():
                if not isinstance(event, dict):
                    continue
                line = template.lines.get(
                    f"{logical_id}/Events/{event_name}"
                ) or template.lines.get(logical_id)
                mapping = _sam_event_mapping(template, logical_id, event_name, event, condition)
                if mapping is not None:
                    yield MappingSource(
                        template, mapping[0], line, mapping[1], metadata, condition, logical_id
                    )


def _sam_event_mapping(
    template: TemplateFile,
    function_id: str,
    event_name: str,
    event: dict[str, Any],
    condition: str | None,
) -> tuple[str, dict[str, Any]] | None:
    """Return the mapping SAM generates for ``Type: SQS``, or SNS with ``SqsSubscription``.

    For ``SqsSubscription: true`` SAM also generates the queue (``<Fn><Event>Queue``, no
    properties); it is added to the template's resources so the mapping can reach it.
    """
    properties = event.get("Properties")
    properties = properties if isinstance(properties, dict) else {}
    function_name = {"Ref": function_id}
    if event.get("Type") == "SQS":
        return f"{function_id}{event_name}", {
            "EventSourceArn": properties.get("Queue"),
            "FunctionName": function_name,
            **{name: properties[name] for name in _SAM_PULL_PROPERTIES if name in properties},
        }
    subscription = properties.get("SqsSubscription")
    # As SAM does (SNS.to_cloudformation): a falsy SqsSubscription (false, {}, absent) is a
    # plain Lambda subscription, no queue; the mapping it generates is always enabled, with
    # BatchSize given or 10.
    if event.get("Type") != "SNS" or not subscription:
        return None
    mapping_id = f"{function_id}{event_name}EventSourceMapping"
    if subscription is True:
        queue_id = f"{function_id}{event_name}Queue"
        queue: dict[str, Any] = {"Type": QUEUE_TYPE, "Properties": {}}
        fifo = _fifo_topic(template, properties.get("Topic"))
        if fifo is not None:
            queue["Properties"]["FifoQueue"] = fifo  # a FIFO topic gets a FIFO queue
        if condition:
            queue["Condition"] = condition
        template.resources.setdefault(queue_id, queue)
        return mapping_id, {
            "EventSourceArn": {"Fn::GetAtt": [queue_id, "Arn"]},
            "FunctionName": function_name,
            "BatchSize": 10,
            "Enabled": True,
        }
    if not isinstance(subscription, dict):
        return None  # SAM refuses the template (SqsSubscription is a boolean or an object)
    return mapping_id, {
        "EventSourceArn": subscription.get("QueueArn"),
        "FunctionName": function_name,
        "BatchSize": subscription.get("BatchSize") or 10,
        "Enabled": True,
    }


def _fifo_topic(template: TemplateFile, topic: Any) -> Any:
    """Return the ``FifoTopic`` of the SNS topic an SNS event names (``Ref``/``GetAtt``).

    As SAM does (``SNS._check_fifo_topic``): only a topic of the same template, found by the
    logical id in ``Ref`` or ``Fn::GetAtt``; its ``FifoTopic`` becomes the queue's
    ``FifoQueue`` (unresolved here, resolved like any other value).
    """
    logical_id: Any = None
    if isinstance(topic, dict) and len(topic) == 1:
        ((key, argument),) = topic.items()
        if key == "Ref":
            logical_id = argument
        elif key == "Fn::GetAtt":
            if isinstance(argument, list) and len(argument) == 2:
                logical_id = argument[0]
            elif isinstance(argument, str) and len(argument.split(".")) == 2:
                logical_id = argument.split(".")[0]
    resource = template.resources.get(logical_id) if isinstance(logical_id, str) else None
    properties = resource.get("Properties") if isinstance(resource, dict) else None
    if not isinstance(properties, dict):
        return None
    return properties.get("FifoTopic")
