"""Build the facts of each SQS event source mapping of a run (CloudFormation and SAM).

A mapping is an SQS mapping by its ``EventSourceArn`` once resolved (conditions and
``AWS::NoValue`` applied with the run's parameter values), never by which other properties
it has: a stream-only property under a condition does not hide it. A source that resolves
to something other than a queue (a stream, a broker, a function ARN) is not counted; one
that cannot be resolved is checked as far as it can be and reported as unchecked.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from safe_queue import keys
from safe_queue.engine import limits
from safe_queue.engine.facts import (
    FailureBackoffFacts,
    FunctionFacts,
    MappingFacts,
    ProvisionedFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
)
from safe_queue.report import Where
from safe_queue.template._deployment import Deployment
from safe_queue.template._load import TemplateFile
from safe_queue.template._sources import MappingSource, find_mappings
from safe_queue.template._values import ABSENT as _ABSENT_VALUE
from safe_queue.template._values import (
    SAM_FUNCTION,
    Located,
    NotQueue,
    Text,
    Trace,
    Unresolved,
    as_bool,
    as_int,
    derived_timeout,
    parse_json_text,
    placeholder,
    resource_of,
)

__all__ = ["CheckedMapping", "MappingSource", "build_mapping", "find_mappings"]

DERIVED_TIMEOUT_KEY = keys.DERIVED_FUNCTION_TIMEOUT
REPORTED_KEY = keys.REPORTED


@dataclass(frozen=True)
class CheckedMapping:
    """An SQS mapping's facts, with where it is and what the report shows beside it."""

    source: MappingSource
    facts: MappingFacts
    where: Where
    """What the report shows beside each finding: the queue and function (logical ids, or
    the queue's ARN when it is not in the run), the stack, the parameters assumed."""
    construct_metadata: dict[str, Any] = field(default_factory=dict)
    """The ``safe-queue:*`` metadata a SafeQueueConsumer wrote (on its source queue)."""
    queue: Located | None = None
    """The source queue's resource, when it is in the run."""
    function: Located | None = None
    """The function's resource, when it is in the run."""
    acknowledged_by: dict[str, tuple[str, TemplateFile]] = field(default_factory=dict)
    """Rule id -> the resource (logical id, template) whose acknowledgement covers it."""
    construct_path: str | None = None
    """The mapping resource's CDK construct path (read from a cloud assembly)."""

    @property
    def reported_by_construct(self) -> frozenset[str]:
        """Rule ids listed in ``Metadata["safe-queue:reported"]`` of the consumer's queue."""
        reported = self.construct_metadata.get(REPORTED_KEY)
        if not isinstance(reported, list):
            return frozenset()
        return frozenset(item for item in reported if isinstance(item, str))


class _Builder:
    """Builds one mapping's facts, recording the parameter values it assumed."""

    def __init__(self, deployment: Deployment, source: MappingSource) -> None:
        self.deployment = deployment
        self.source = source
        self.trace = Trace()

    def value(self, template: TemplateFile, node: Any) -> Any:
        """Resolve ``node``; ``None`` when absent (``AWS::NoValue`` included)."""
        value = self.deployment.resolve(template, node, self.trace)
        return None if value is _ABSENT_VALUE else value

    def properties(self, template: TemplateFile, node: Any) -> dict[str, Any] | Unresolved:
        """Return a resource's ``Properties``: a dict, or one chosen by ``Fn::If``."""
        if isinstance(node, dict) and len(node) == 1 and "Fn::If" in node:
            node = self.value(template, node)
        if node is None:
            return {}
        if isinstance(node, Unresolved):
            return Unresolved(f"has Properties that {node.why}")
        return node if isinstance(node, dict) else Unresolved("has Properties that are not a map")

    def located_properties(self, located: Located) -> dict[str, Any]:
        properties = self.properties(
            located.template, resource_of(located.template, located.logical_id).get("Properties")
        )
        return properties if isinstance(properties, dict) else {}

    def blocked(self, located: Located) -> str | None:
        """Why a queue or function cannot be read (an unexpanded loop made it...), if so."""
        reason = located.template.unexpanded.get(located.logical_id)
        if reason is not None:
            return reason
        properties = self.properties(
            located.template, resource_of(located.template, located.logical_id).get("Properties")
        )
        return properties.why if isinstance(properties, Unresolved) else None

    def unreadable(self, why: str, queue_found: Any) -> CheckedMapping:
        """Return a mapping that cannot be read at all: every fact unknown, for one reason."""
        source = self.source
        unknown = Unknown("the mapping", why.removeprefix("the mapping "))
        facts = MappingFacts(
            queue=unknown,
            function=unknown,
            name=source.logical_id,
            batch_size=unknown,
            batching_window=unknown,
            report_batch_item_failures=unknown,
            max_concurrency=unknown,
            has_filters=unknown,
            notes=tuple(self.trace.notes),
            provisioned=unknown,
        )
        where = Where(
            queue=queue_found.logical_id if isinstance(queue_found, Located) else None,
            stack=source.template.stack,
        )
        return CheckedMapping(source, facts, where)

    def integer(self, template: TemplateFile, node: Any, what: str) -> int | Unknown | None:
        number = as_int(self.value(template, node))
        return Unknown(what, number.why) if isinstance(number, Unresolved) else number

    def boolean(self, template: TemplateFile, node: Any, what: str) -> bool | Unknown | None:
        flag = as_bool(self.value(template, node))
        return Unknown(what, flag.why) if isinstance(flag, Unresolved) else flag

    def queue(self, located: Located, *, with_redrive: bool = True) -> QueueFacts:
        template, properties = located.template, self.located_properties(located)
        return QueueFacts(
            name=located.logical_id,
            visibility_timeout=self.integer(
                template, properties.get("VisibilityTimeout"), "the queue's VisibilityTimeout"
            ),
            retention_period=self.integer(
                template,
                properties.get("MessageRetentionPeriod"),
                "the queue's MessageRetentionPeriod",
            ),
            fifo=self.boolean(template, properties.get("FifoQueue"), "the queue's FifoQueue"),
            redrive=self.redrive(located) if with_redrive else None,
            queue_name=self.text(template, properties.get("QueueName"), "the queue's QueueName"),
            content_based_deduplication=self.boolean(
                template,
                properties.get("ContentBasedDeduplication"),
                "the queue's ContentBasedDeduplication",
            ),
        )

    def text(self, template: TemplateFile, node: Any, what: str) -> str | Unknown | None:
        """Return a string; parts known only at deploy time stay ``${...}`` placeholders."""
        value = self.value(template, node)
        if value is None:
            return None
        if isinstance(value, Unresolved):
            return Unknown(what, value.why)
        if isinstance(value, str | Text):
            return str(value)
        return Unknown(what, f"is {value!r}, not a string")

    def redrive(self, located: Located) -> RedriveFacts | Unknown | None:
        template = located.template
        properties = self.located_properties(located)
        policy = parse_json_text(self.value(template, properties.get("RedrivePolicy")))
        if policy is None:
            return None
        if isinstance(policy, Unresolved):
            return Unknown("the queue's RedrivePolicy", policy.why)
        if not isinstance(policy, dict):
            return Unknown("the queue's RedrivePolicy", f"is {policy!r}, not a redrive policy")
        count = as_int(placeholder(template, policy.get("maxReceiveCount")))
        max_receive_count: int | Unknown = (
            Unknown("the RedrivePolicy's maxReceiveCount", "is not set")
            if count is None
            else Unknown("the RedrivePolicy's maxReceiveCount", count.why)
            if isinstance(count, Unresolved)
            else count
        )
        target = self.deployment.find_queue(
            placeholder(template, policy.get("deadLetterTargetArn"))
        )
        dead_letter: QueueFacts | Unknown
        if isinstance(target, Located) and self.blocked(target):
            dead_letter = Unknown("the dead-letter queue", str(self.blocked(target)))
        elif isinstance(target, Located):
            dead_letter = self.queue(target, with_redrive=False)
        else:
            why = target.why if isinstance(target, Unresolved) else f"is {target.what}"
            dead_letter = Unknown("the dead-letter queue", why)
        return RedriveFacts(max_receive_count, dead_letter)

    def function(self, located: Located) -> FunctionFacts:
        template, properties = located.template, self.located_properties(located)
        timeout = properties.get("Timeout")
        reserved = properties.get("ReservedConcurrentExecutions")
        capacity = properties.get("CapacityProviderConfig")
        variables = self.variables(template, properties.get("Environment"))
        if located.type == SAM_FUNCTION:
            globals_ = template.body.get("Globals")
            function_globals = globals_.get("Function") if isinstance(globals_, dict) else None
            if isinstance(function_globals, dict):
                timeout = properties.get("Timeout", function_globals.get("Timeout"))
                reserved = properties.get(
                    "ReservedConcurrentExecutions",
                    function_globals.get("ReservedConcurrentExecutions"),
                )
                capacity = properties.get(
                    "CapacityProviderConfig", function_globals.get("CapacityProviderConfig")
                )
                inherited = self.variables(template, function_globals.get("Environment"))
                variables = (
                    variables
                    if isinstance(variables, Unknown) or isinstance(inherited, Unknown)
                    else {**inherited, **variables}
                )
        capacity_value = self.value(template, capacity)
        return FunctionFacts(
            name=located.logical_id,
            timeout=self.integer(template, timeout, "the function's Timeout"),
            reserved_concurrency=self.integer(
                template, reserved, "the function's ReservedConcurrentExecutions"
            ),
            key=f"{located.template.path}#{located.logical_id}",
            capacity_provider=(
                Unknown("the function's CapacityProviderConfig", capacity_value.why)
                if isinstance(capacity_value, Unresolved)
                else None
                if capacity_value is None
                else True
            ),
            failure_backoff=_backoff(variables),
        )

    def variables(self, template: TemplateFile, node: Any) -> dict[str, Any] | Unknown:
        """Return a function's ``Environment.Variables`` (resolved), empty when none."""
        environment = self.value(template, node)
        if isinstance(environment, Unresolved):
            return Unknown("the function's Environment", environment.why)
        found = environment.get("Variables") if isinstance(environment, dict) else None
        if isinstance(found, Unresolved):
            return Unknown("the function's Environment", found.why)
        return dict(found) if isinstance(found, dict) else {}

    def build(self) -> CheckedMapping | None:
        source, template = self.source, self.source.template
        loop = template.loops.get(source.resource or source.logical_id)
        if isinstance(loop, Trace):  # what reading its Fn::ForEach collection assumed
            self.trace.parameters.update(loop.parameters)
            self.trace.notes.update(loop.notes)
        properties = self.properties(template, source.properties)
        if isinstance(properties, Unresolved):
            return self.unreadable(f"the mapping {properties.why}", None)
        arn = self.value(template, properties.get("EventSourceArn"))
        if arn is None and self.value(template, properties.get("SelfManagedEventSource")):
            return None  # self-managed Kafka: no EventSourceArn, not a queue
        queue_found = (
            self.deployment.find_queue(arn)
            if arn is not None
            else Unresolved("is not set (the mapping has no EventSourceArn, the event no Queue)")
        )
        if isinstance(queue_found, NotQueue):
            return None
        blocked = template.unexpanded.get(source.resource or source.logical_id)
        if blocked is not None:
            return self.unreadable(f"the mapping {blocked}", queue_found)
        queue: QueueFacts | Unknown
        if isinstance(queue_found, Located):
            why = self.blocked(queue_found)
            queue = Unknown("the queue", why) if why else self.queue(queue_found)
        else:
            queue = Unknown("the queue", queue_found.why)
        function_found = self.deployment.find_function(
            self.value(template, properties.get("FunctionName")), self.trace
        )
        function: FunctionFacts | Unknown
        if isinstance(function_found, Located):
            why = self.blocked(function_found)
            function = Unknown("the function", why) if why else self.function(function_found)
        else:
            function = Unknown("the function", function_found.why)
        enabled = as_bool(self.value(template, properties.get("Enabled")))
        if enabled is False:
            self.trace.note("The mapping is disabled with Enabled: false; checked as if enabled.")
        if source.condition:
            self.trace.note(
                f"The mapping has Condition {source.condition}; checked as if it is created."
            )
        scaling = self.value(template, properties.get("ScalingConfig"))
        provisioned = self.value(template, properties.get("ProvisionedPollerConfig"))
        # A SafeQueueConsumer records what it derived on its source queue (the mapping is
        # the function's child, possibly in another stack); the mapping's own is read too.
        construct_metadata = {
            key: value
            for key, value in {
                **source.metadata,
                **(queue_found.metadata if isinstance(queue_found, Located) else {}),
            }.items()
            if key.startswith("safe-queue:")
        }
        facts = MappingFacts(
            queue=queue,
            function=function,
            name=source.logical_id,
            batch_size=self.integer(template, properties.get("BatchSize"), "the BatchSize"),
            batching_window=self.integer(
                template,
                properties.get("MaximumBatchingWindowInSeconds"),
                "the MaximumBatchingWindowInSeconds",
            ),
            report_batch_item_failures=self._response_types(properties),
            max_concurrency=(
                Unknown("the ScalingConfig", scaling.why)
                if isinstance(scaling, Unresolved)
                else self.integer(
                    template,
                    scaling.get("MaximumConcurrency") if isinstance(scaling, dict) else None,
                    "the ScalingConfig.MaximumConcurrency",
                )
            ),
            has_filters=self._has_filters(properties),
            derived_function_timeout=derived_timeout(construct_metadata),
            notes=tuple(self.trace.notes),
            provisioned=self._provisioned(provisioned),
        )
        where = Where(
            queue=(
                queue_found.logical_id
                if isinstance(queue_found, Located)
                else arn
                if isinstance(arn, str)
                else None
            ),
            function=function_found.logical_id if isinstance(function_found, Located) else None,
            stack=template.stack,
            parameters=dict(self.trace.parameters) if self.trace.parameters else None,
        )
        return CheckedMapping(
            source,
            facts,
            where,
            construct_metadata,
            queue_found if isinstance(queue_found, Located) else None,
            function_found if isinstance(function_found, Located) else None,
        )

    def _provisioned(self, config: Any) -> ProvisionedFacts | Unknown | None:
        what = "the ProvisionedPollerConfig"
        if config is None:
            return None
        if isinstance(config, Unresolved):
            return Unknown(what, config.why)
        if not isinstance(config, dict):
            return Unknown(what, f"is {config!r}, not an object")
        template = self.source.template
        return ProvisionedFacts(
            minimum_pollers=self.integer(
                template, config.get("MinimumPollers"), f"{what}'s MinimumPollers"
            ),
            maximum_pollers=self.integer(
                template, config.get("MaximumPollers"), f"{what}'s MaximumPollers"
            ),
        )

    def _response_types(self, properties: dict[str, Any]) -> bool | Unknown | None:
        types = self.value(self.source.template, properties.get("FunctionResponseTypes"))
        what = "the FunctionResponseTypes"
        if types is None:
            return None
        if isinstance(types, Unresolved):
            return Unknown(what, types.why)
        items = types if isinstance(types, list) else [types]
        if limits.REPORT_BATCH_ITEM_FAILURES in items:
            return True
        for item in items:
            if isinstance(item, Unresolved):
                return Unknown(what, item.why)
        return False

    def _has_filters(self, properties: dict[str, Any]) -> bool | Unknown | None:
        criteria = self.value(self.source.template, properties.get("FilterCriteria"))
        if criteria is None:
            return None
        if isinstance(criteria, Unresolved):
            return Unknown("the FilterCriteria", criteria.why)
        filters = criteria.get("Filters") if isinstance(criteria, dict) else None
        if isinstance(filters, Unresolved):
            return Unknown("the FilterCriteria", filters.why)
        return bool(filters)


def _backoff(variables: dict[str, Any] | Unknown) -> FailureBackoffFacts | Unknown | None:
    """Return the handler's failure backoff, from the variables a SafeQueueConsumer sets."""
    what = "the function's failure backoff (Environment)"
    if isinstance(variables, Unknown):
        return Unknown(what, variables.why)
    base, cap = variables.get(keys.BACKOFF_BASE_ENV), variables.get(keys.BACKOFF_CAP_ENV)
    if base is None and cap is None:
        return None
    try:
        return FailureBackoffFacts(float(base), float(cap))  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return Unknown(
            what,
            f"is {keys.BACKOFF_BASE_ENV}={base!r}, {keys.BACKOFF_CAP_ENV}={cap!r}, not two"
            " numbers of seconds",
        )


def build_mapping(deployment: Deployment, source: MappingSource) -> CheckedMapping | None:
    """Facts of one mapping; ``None`` when its source is not an SQS queue (not counted)."""
    return _Builder(deployment, source).build()
