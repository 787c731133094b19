"""``SafeQueueConsumer``: a queue, its dead-letter queue and alarms, derived from a function."""

from __future__ import annotations

import dataclasses
import functools
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import jsii
from aws_cdk import Annotations, Duration, Names, RemovalPolicy, Stack, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_kms as kms
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct, IValidation

from safe_queue.cdk import plan as planning
from safe_queue.cdk._values import (
    Refusals,
    implements,
    is_string_token,
    plain_bool,
    plain_number,
    type_error,
    whole_seconds,
)
from safe_queue.cdk.function import function_properties, underlying_function
from safe_queue.cdk.function import function_timeout as read_function_timeout
from safe_queue.cdk.function import reserved_concurrency as read_reserved_concurrency
from safe_queue.cdk.idempotency import IDEMPOTENCY_TABLE_ENV, idempotency_table
from safe_queue.engine import FunctionFacts, Level, MappingFacts, evaluate
from safe_queue.errors import SafeQueueConfigError
from safe_queue.keys import VISIBILITY_TIMEOUT_ENV

__all__ = [
    "REDELIVERY_ALARM_EVALUATION_PERIODS",
    "REDELIVERY_ALARM_MIN_RECEIVES",
    "REDELIVERY_ALARM_PERIOD",
    "REDELIVERY_ALARM_THRESHOLD_PERCENT",
    "SafeQueueConsumer",
    "derive_visibility_timeout",
]

_ONE_MINUTE = Duration.minutes(1)

# The redelivery alarm: the share of received messages that were not deleted, per period.
_REDELIVERY_ALARM_PERIOD_MINUTES = 5
REDELIVERY_ALARM_PERIOD = Duration.minutes(_REDELIVERY_ALARM_PERIOD_MINUTES)
"""Period of the redelivery alarm's metrics (sums over 5 minutes)."""
REDELIVERY_ALARM_THRESHOLD_PERCENT = 10
"""Alarm when at least 10 % of the received messages were not deleted, ..."""
REDELIVERY_ALARM_EVALUATION_PERIODS = 3
"""... in each of 3 consecutive periods (15 minutes) ..."""
REDELIVERY_ALARM_MIN_RECEIVES = 10
"""... counting only periods with at least 10 receives (fewer say nothing)."""

# Metadata on the source queue's AWS::SQS::Queue resource, read by the template checks
# (``safe-queue check``, the CDK plugin): the timeout the queue was derived from (drift),
# and the rules this construct already reported as annotations (one verdict per rule).
DERIVED_FUNCTION_TIMEOUT_METADATA = "safe-queue:derived-function-timeout"
REPORTED_METADATA = "safe-queue:reported"


@functools.cache
def _seconds(seconds: int) -> Duration:
    """Return a shared ``Duration`` (immutable): creating one is a call into jsii."""
    return Duration.seconds(seconds)


def derive_visibility_timeout(
    function_timeout: Duration, max_batching_window: Duration | None = None
) -> Duration:
    """Return the visibility timeout AWS recommends for a Lambda consumer.

    ``6 x function_timeout + max_batching_window``, in whole seconds (Lambda Developer
    Guide, "Using Lambda with Amazon SQS").

    Parameters
    ----------
    function_timeout
        The consuming function's timeout, 1..900 s.
    max_batching_window
        The event source mapping's batching window, 0..300 s. Default: none (0 s).

    Raises
    ------
    SafeQueueConfigError
        An input is out of range, not whole seconds, or an unresolved token.

    Examples
    --------
    >>> from aws_cdk import Duration
    >>> derive_visibility_timeout(Duration.seconds(180), Duration.seconds(2)).to_seconds()
    1082
    >>> derive_visibility_timeout(Duration.minutes(1)).to_seconds()
    360
    """
    timeout = whole_seconds("function_timeout", function_timeout)
    window = _optional_seconds("max_batching_window", max_batching_window) or 0
    return _seconds(planning.derived_visibility_timeout(timeout, window))


def _optional_seconds(setting: str, value: Duration | None) -> int | None:
    return None if value is None else whole_seconds(setting, value)


# cdk-nag 3 (and aws-cdk-lib's policy validation) honour acknowledgements recorded as this
# metadata on a construct or an ancestor. ``Validations.acknowledge`` writes the same entry
# but with a stack trace, and an annotation acknowledgement, each costing ~1 ms; writing it
# with ``node.add_metadata`` (no trace) is what both read, for a fraction of that.
_ACKNOWLEDGED_RULES = Validations.ACKNOWLEDGED_RULES_METADATA_KEY
_DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS = {
    "Serverless::Serverless-SQSRedrivePolicy": "This is the dead-letter queue: a redrive"
    " policy of its own would move failed messages on again instead of keeping them for"
    " inspection."
}
_MAPPING_ACKNOWLEDGEMENTS = {
    "Serverless::Serverless-LambdaEventSourceMappingDestination": "SQS event source mappings"
    " support no OnFailure destination; failed messages go to the queue's dead-letter queue"
    " through its redrive policy."
}


def _acknowledge_false_positives(dead_letter_queue: sqs.Queue, mapping: IConstruct) -> None:
    """Acknowledge the cdk-nag Serverless findings that do not apply to an SQS consumer."""
    dead_letter_queue.node.add_metadata(_ACKNOWLEDGED_RULES, _DEAD_LETTER_QUEUE_ACKNOWLEDGEMENTS)
    mapping.node.add_metadata(_ACKNOWLEDGED_RULES, _MAPPING_ACKNOWLEDGEMENTS)


@dataclass(frozen=True)
class _Derived:
    """What one consumer derived its queue from, and the L1 function that must keep it."""

    consumer_path: str
    cfn_function: lambda_.CfnFunction
    facts: MappingFacts
    """The facts the engine accepted, the derived function timeout recorded."""


@jsii.implements(IValidation)
class _FunctionTimeoutsUnchanged:
    """Synth-time check that no escape hatch changed a timeout a consumer derived from.

    Each consumer's facts are judged again by the engine with the function's final timeout;
    its errors (``safe-queue:function-timeout-changed`` among them) fail the synth. One
    validation per stack, for all its consumers: each costs a call from jsii into Python.
    """

    def __init__(self) -> None:
        self.consumers: list[_Derived] = []

    def validate(self) -> list[str]:
        errors = []
        for derived in self.consumers:
            final = derived.cfn_function.timeout
            function = derived.facts.function
            assert isinstance(function, FunctionFacts)
            facts = dataclasses.replace(
                derived.facts,
                function=dataclasses.replace(
                    function, timeout=None if final is None else int(final)
                ),
            )
            errors += [
                f"SafeQueueConsumer {derived.consumer_path}, function"
                f" {derived.cfn_function.node.path}: {finding.message} [{finding.rule_id}]"
                for finding in evaluate(facts)
                if finding.level is Level.ERROR
            ]
        return errors


@dataclass(frozen=True)
class _Scope:
    """Per-scope facts looked up once: each lookup is a call into jsii."""

    path: str
    validator: _FunctionTimeoutsUnchanged


_SCOPES: weakref.WeakKeyDictionary[Construct, _Scope] = weakref.WeakKeyDictionary()
_VALIDATORS: weakref.WeakKeyDictionary[Stack, _FunctionTimeoutsUnchanged] = (
    weakref.WeakKeyDictionary()
)


def _scope_of(scope: Construct) -> _Scope:
    known = _SCOPES.get(scope)
    if known is None:
        known = _SCOPES[scope] = _Scope(scope.node.path, _validator_of(Stack.of(scope)))
    return known


def _validator_of(stack: Stack) -> _FunctionTimeoutsUnchanged:
    validator = _VALIDATORS.get(stack)
    if validator is None:
        validator = _VALIDATORS[stack] = _FunctionTimeoutsUnchanged()
        stack.node.add_validation(validator)
    return validator


_VISIBILITY_ENV_SET: weakref.WeakKeyDictionary[lambda_.Function, tuple[int, str]] = (
    weakref.WeakKeyDictionary()
)
"""{function: (visibility timeout, consumer path)} for SAFE_QUEUE_VISIBILITY_TIMEOUT."""

_FUNCTION_FIX = (
    "pass the consuming lambda_.Function (or an Alias or Version of one); for a function"
    " defined elsewhere, lambda_.Function.from_function_arn(...) with function_timeout"
)
_REMOVAL_POLICIES = (
    RemovalPolicy.RETAIN,
    RemovalPolicy.DESTROY,
    RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
)


class SafeQueueConsumer(Construct):
    """An SQS queue feeding a Lambda function, with every setting derived from the function.

    Creates a source queue, a dead-letter queue of the same type, an event source mapping
    (``SqsEventSource``) on ``function`` and three CloudWatch alarms. The visibility timeout,
    the age-alarm threshold and the retry budget are derived from the function's timeout,
    so they cannot drift apart from it; every prop is checked (type and range) before the
    construct joins the tree, and every refusal of one consumer is reported together.

    Parameters
    ----------
    scope
        Parent construct.
    id
        Construct id. Child ids (``Queue``, ``DeadLetterQueue``, ``DeadLetterAlarm``,
        ``AgeAlarm``, ``RedeliveryAlarm``, ``IdempotencyTable``) are public API: they name
        the logical ids in the template.
    function
        The consumer (an ``aws_lambda.IFunction``). Its timeout is read from it (a
        ``Function``, or an ``Alias`` or ``Version`` of one); a ``Function`` without a
        timeout has Lambda's default, 3 s.
    function_timeout
        The function's timeout, 1..900 s. Only for a function whose timeout cannot be read
        (an imported one); for a ``Function`` it must equal its own timeout.
        Default: the function's own timeout.
    batch_size
        Records per invocation: 1..10; 1..10,000 with a ``max_batching_window`` (standard
        queues); 1..10 on FIFO queues. Default: 10.
    max_batching_window
        Time to gather records before invoking, 0..300 s; not on FIFO queues.
        Default: none (0 s).
    max_concurrency
        Maximum concurrent invocations by this mapping, 2..1,000. Default: the function's
        reserved concurrency R when it has one and 2 <= R <= 1,000 (the poller then never
        takes more messages than the function may run); otherwise no limit, and a function
        with a reserved concurrency outside that range gets the warning
        ``safe-queue:reserved-concurrency-without-max-concurrency``. Above the reserved
        concurrency warns (``safe-queue:max-concurrency-above-reserved-concurrency``).
    max_receive_count
        Receives before a message moves to the dead-letter queue, 1..1,000; below 5 gives a
        warning. Default: 5.
    retention_period
        Source queue retention, 60 s..14 days; at least ``max_time_to_dead_letter``.
        Default: 4 days.
    dead_letter_retention_period
        Dead-letter queue retention, 60 s..14 days; longer than ``retention_period`` on
        standard queues. Default: 14 days.
    visibility_timeout
        Override of the derived value, at least the function timeout and at most 12 h;
        below ``6 x function timeout + max_batching_window`` gives a warning.
        Default: ``6 x function timeout + max_batching_window``.
    report_batch_item_failures
        Let the handler return ``batchItemFailures`` so only failed records are retried.
        Default: True.
    fifo
        Make both queues FIFO (see README, FIFO consumers). Default: False.
    content_based_deduplication
        FIFO only: deduplicate on a SHA-256 of the body. Default: False.
    max_message_age
        Age-alarm threshold for the oldest message, 1 s up to (not including)
        ``retention_period``. Default: ``max_time_to_dead_letter``, at most half the
        ``retention_period``.
    alarm_topic
        SNS topic (``aws_sns.ITopic``) notified by every alarm. Default: no alarm actions.
    idempotency
        Create :attr:`idempotency_table` for Powertools' idempotency utility (partition key
        ``id``, TTL attribute ``expiration``, on-demand, point-in-time recovery, encrypted),
        grant the function ``dynamodb:GetItem``, ``PutItem``, ``UpdateItem`` and
        ``DeleteItem`` on it, and set ``IDEMPOTENCY_TABLE_NAME`` on the function. Needs a
        function defined in the app (not imported). Default: False (no table).
    removal_policy
        What a stack deletion (or a replacement) does to both queues and the idempotency
        table: ``RETAIN`` keeps them, so pending and dead-lettered messages survive;
        ``DESTROY`` deletes them (throwaway stacks); ``RETAIN_ON_UPDATE_OR_DELETE``.
        Default: ``RemovalPolicy.RETAIN``.
    encryption_key
        A customer-managed KMS key (``aws_kms.IKey``): both queues use SSE-KMS with it. The
        function is granted ``kms:Decrypt`` with its consume permissions; producers get
        what they need from ``consumer.queue.grant_send_messages(producer)``. Default: none
        (SSE-SQS, SQS-managed keys).
    queue_name, dead_letter_queue_name
        Physical names: 1..80 characters of letters, digits, ``-`` and ``_``; on FIFO
        queues ``.fifo`` is added (or may be given), and counts towards the 80. Default:
        names generated by CloudFormation; FIFO queues get a name made from the construct
        path (at most 80 characters, any depth) instead.
    filters
        Lambda event filter criteria (``[lambda_.FilterCriteria.filter({...})]``). Lambda
        deletes every SQS message that matches no filter, so this gives the warning
        ``safe-queue:filter-deletes-unmatched`` (acknowledge it once no one needs those
        messages). Default: no filters.

    Raises
    ------
    SafeQueueConfigError
        (a ``ValueError``, shown as ``safe_queue.SafeQueueConfigError``) for a prop of the
        wrong type, one AWS would reject, or one that would lose or duplicate messages. It
        lists every refusal of the consumer; each names the setting, the value, what is
        allowed, and ends with ``Fix: ...`` (and the rule id, where a rule applies).

    Notes
    -----
    On a function defined in the app, the consumer sets the environment variable
    ``SAFE_QUEUE_VISIBILITY_TIMEOUT`` (whole seconds) that
    :class:`safe_queue.runtime.RedeliveryDiagnosis` reads. A function consuming several
    queues keeps the value of the first consumer; a consumer with another visibility
    timeout leaves it and adds an info annotation saying so.

    Examples
    --------
    >>> from aws_cdk import App, Duration, Stack, aws_lambda as lambda_
    >>> stack = Stack(App(), "Invoices")
    >>> render = lambda_.Function(stack, "Render", runtime=lambda_.Runtime.PYTHON_3_13,
    ...     handler="index.handler", code=lambda_.Code.from_inline("def handler(e, c): pass"),
    ...     timeout=Duration.seconds(180))
    >>> consumer = SafeQueueConsumer(stack, "RenderInvoices", function=render,
    ...     batch_size=5, max_batching_window=Duration.seconds(2))
    >>> consumer.visibility_timeout.to_seconds()
    1082
    >>> consumer.max_time_to_dead_letter.to_seconds()
    5410
    >>> SafeQueueConsumer(stack, "Broken", function=render, max_batching_window=5,
    ...     batch_size=0)
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: SafeQueueConsumer Invoices/Broken: 2 settings refused:
      - max_batching_window is 5 (an int); expected a Duration. Fix: ...
      - BatchSize is 0; AWS allows 1..10000 ... [safe-queue:batch-size-out-of-range]
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        function: lambda_.IFunction,
        function_timeout: Duration | None = None,
        batch_size: int | None = None,
        max_batching_window: Duration | None = None,
        max_concurrency: int | None = None,
        max_receive_count: int | None = None,
        retention_period: Duration | None = None,
        dead_letter_retention_period: Duration | None = None,
        visibility_timeout: Duration | None = None,
        report_batch_item_failures: bool = True,
        fifo: bool = False,
        content_based_deduplication: bool = False,
        max_message_age: Duration | None = None,
        alarm_topic: sns.ITopic | None = None,
        idempotency: bool = False,
        removal_policy: RemovalPolicy = RemovalPolicy.RETAIN,
        encryption_key: kms.IKey | None = None,
        queue_name: str | None = None,
        dead_letter_queue_name: str | None = None,
        filters: Sequence[Mapping[str, Any]] | None = None,
    ) -> None:
        scope_facts = _scope_of(scope)
        path = f"{scope_facts.path}/{id}".lstrip("/")
        # Every prop is checked before the construct joins the tree, and every refusal is
        # collected: a refused consumer leaves no trace and names all its problems at once.
        refusals = Refusals()

        def number(setting: str, value: Any) -> int | None:
            return (
                None if value is None else refusals.attempt(setting, plain_number, setting, value)
            )

        def seconds(setting: str, value: Any) -> int | None:
            return (
                None if value is None else refusals.attempt(setting, whole_seconds, setting, value)
            )

        def flag(setting: str, value: Any) -> bool:
            return bool(refusals.attempt(setting, plain_bool, setting, value))

        def construct(setting: str, value: Any, interface: Any, expected: str, fix: str) -> None:
            if value is not None and not implements(value, interface):
                refusals.add(setting, str(type_error(setting, value, expected, fix)))

        own_function: lambda_.Function | None = None
        cfn_function: lambda_.CfnFunction | None = None
        timeout: int | None = None
        properties: Any = None
        if implements(function, lambda_.IFunction):
            own_function = underlying_function(function)
            cfn_function, properties = function_properties(own_function)
            read = refusals.attempt(
                "function_timeout",
                read_function_timeout,
                function,
                own_function,
                function_timeout,
                properties,
            )
            timeout = read
        else:
            refusals.add(
                "function",
                str(type_error("function", function, "an aws_lambda.IFunction", _FUNCTION_FIX)),
            )
            seconds("function_timeout", function_timeout)
        is_fifo = flag("fifo", fifo)
        window = seconds("max_batching_window", max_batching_window)
        concurrency = number("max_concurrency", max_concurrency)
        construct(
            "alarm_topic",
            alarm_topic,
            sns.ITopic,
            "an aws_sns.ITopic",
            'alarm_topic=sns.Topic(self, "Alarms"), or sns.Topic.from_topic_arn(...)',
        )
        construct(
            "encryption_key",
            encryption_key,
            kms.IKey,
            "an aws_kms.IKey",
            'encryption_key=kms.Key(self, "QueueKey", enable_key_rotation=True), or'
            " kms.Key.from_key_arn(...)",
        )
        if removal_policy not in _REMOVAL_POLICIES:
            refusals.add(
                "removal_policy",
                str(
                    type_error(
                        "removal_policy",
                        removal_policy,
                        "RemovalPolicy.RETAIN, DESTROY or RETAIN_ON_UPDATE_OR_DELETE (SQS"
                        " queues have no snapshots)",
                        "removal_policy=RemovalPolicy.RETAIN to keep the messages, or"
                        " RemovalPolicy.DESTROY for a throwaway stack",
                    )
                ),
            )
        names: list[str | None] = []
        for setting, name in (
            ("queue_name", queue_name),
            ("dead_letter_queue_name", dead_letter_queue_name),
        ):
            names.append(
                None
                if name is None or "fifo" in refusals.settings  # the suffix depends on it
                else refusals.attempt(setting, planning.queue_name, setting, name, is_fifo)
            )
        if names[0] is not None and names[0] == names[1]:
            refusals.add(
                "dead_letter_queue_name",
                f"dead_letter_queue_name is {dead_letter_queue_name!r}, the same as queue_name;"
                " two queues cannot share a name in one account and region. Fix: give the"
                " dead-letter queue another name, or omit dead_letter_queue_name.",
            )
        if filters is not None and (
            not isinstance(filters, list | tuple)
            or not all(isinstance(f, Mapping) for f in filters)
        ):
            refusals.add(
                "filters",
                str(
                    type_error(
                        "filters",
                        filters,
                        "a list of filter criteria",
                        'filters=[lambda_.FilterCriteria.filter({"body": {...}})]',
                    )
                ),
            )
        wants_table = flag("idempotency", idempotency)
        if wants_table and own_function is None and "function" not in refusals.settings:
            refusals.add(
                "idempotency",
                f"idempotency is True but the function {function.node.path} is imported,"
                f" so {IDEMPOTENCY_TABLE_ENV} cannot be set on it. Fix: pass a Function"
                " defined in this app, or set idempotency=False and wire a table yourself.",
            )
        report_failures = flag("report_batch_item_failures", report_batch_item_failures)
        try:
            plan = planning.plan(
                function_timeout=timeout,
                batch_size=number("batch_size", batch_size),
                batching_window=window,
                max_concurrency=concurrency,
                max_receive_count=number("max_receive_count", max_receive_count),
                retention_period=seconds("retention_period", retention_period),
                dead_letter_retention_period=seconds(
                    "dead_letter_retention_period", dead_letter_retention_period
                ),
                visibility_timeout=seconds("visibility_timeout", visibility_timeout),
                report_batch_item_failures=report_failures,
                fifo=is_fifo,
                content_based_deduplication=flag(
                    "content_based_deduplication", content_based_deduplication
                ),
                max_message_age=seconds("max_message_age", max_message_age),
                reserved_concurrency=(
                    read_reserved_concurrency(properties) if not refusals else None
                ),
                has_filters=bool(filters),
                queue_name=None if is_string_token(names[0] or "") else names[0],
                dead_letter_queue_name=None if is_string_token(names[1] or "") else names[1],
                refusals=refusals,
            )
        except SafeQueueConfigError:
            raise refusals.error(f"SafeQueueConsumer {path}: ") from None

        super().__init__(scope, id)
        self._plan: planning.Plan = plan
        self._function = function
        if plan.warnings:
            annotations = Annotations.of(self)
            for finding in plan.warnings:
                if finding.level is Level.WARNING:
                    annotations.add_warning_v2(finding.rule_id, finding.message)
                else:
                    annotations.add_info_v2(finding.rule_id, finding.message)

        queue_name, dead_letter_queue_name = names
        if is_fifo and (queue_name is None or dead_letter_queue_name is None):
            # CloudFormation's generated FIFO names can pass SQS's 80 characters on deep
            # paths; these fit at any depth (path-derived, with a hash of the whole path).
            base = Names.unique_resource_name(
                self,
                max_length=planning.QUEUE_NAME_MAX_LENGTH - len(planning.FIFO_SUFFIX) - 4,
                separator="-",
            )
            queue_name = queue_name or f"{base}{planning.FIFO_SUFFIX}"
            dead_letter_queue_name = dead_letter_queue_name or f"{base}-dlq{planning.FIFO_SUFFIX}"
        encryption = (
            sqs.QueueEncryption.SQS_MANAGED if encryption_key is None else sqs.QueueEncryption.KMS
        )
        fifo_or_none = True if is_fifo else None
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            queue_name=dead_letter_queue_name,
            fifo=fifo_or_none,
            retention_period=_seconds(plan.dead_letter_retention_period),
            encryption=encryption,
            encryption_master_key=encryption_key,
            enforce_ssl=True,
            removal_policy=removal_policy,
        )
        """The dead-letter queue (``aws_sqs.Queue``), same type as :attr:`queue`."""
        self.queue = sqs.Queue(
            self,
            "Queue",
            queue_name=queue_name,
            fifo=fifo_or_none,
            content_based_deduplication=True if content_based_deduplication else None,
            visibility_timeout=_seconds(plan.visibility_timeout),
            retention_period=_seconds(plan.retention_period),
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=plan.max_receive_count
            ),
            encryption=encryption,
            encryption_master_key=encryption_key,
            enforce_ssl=True,
            removal_policy=removal_policy,
        )
        """The source queue (``aws_sqs.Queue``); send messages here."""
        cfn_queue = self.queue.node.default_child
        assert isinstance(cfn_queue, sqs.CfnQueue)
        cfn_queue.add_metadata(DERIVED_FUNCTION_TIMEOUT_METADATA, plan.function_timeout)
        if plan.reported_rule_ids:
            cfn_queue.add_metadata(REPORTED_METADATA, list(plan.reported_rule_ids))
        self.event_source = event_sources.SqsEventSource(
            self.queue,
            batch_size=plan.batch_size,
            max_batching_window=(_seconds(plan.batching_window) if plan.batching_window else None),
            max_concurrency=plan.max_concurrency,
            report_batch_item_failures=report_failures,
            filters=list(filters) if filters else None,
        )
        """The ``SqsEventSource`` added to ``function``."""
        function.add_event_source(self.event_source)
        # SqsEventSource adds the mapping as the function's newest child.
        self._mapping: lambda_.EventSourceMapping = function.node.children[-1]  # type: ignore[assignment]
        assert isinstance(self._mapping, lambda_.EventSourceMapping)
        _acknowledge_false_positives(self.dead_letter_queue, self._mapping)

        self.dead_letter_alarm = cloudwatch.Alarm(
            self,
            "DeadLetterAlarm",
            metric=self.dead_letter_queue.metric_approximate_number_of_messages_visible(
                period=_ONE_MINUTE, statistic="Maximum"
            ),
            threshold=1,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=(
                f"Messages in the dead-letter queue of {path}: each failed"
                f" {plan.max_receive_count} receives. Inspect them, fix the consumer, then"
                " redrive them to the source queue."
            ),
        )
        """Alarm: any message in the dead-letter queue (``ApproximateNumberOfMessagesVisible``
        >= 1, Maximum over 1 minute)."""
        self.age_alarm = cloudwatch.Alarm(
            self,
            "AgeAlarm",
            metric=self.queue.metric_approximate_age_of_oldest_message(
                period=_ONE_MINUTE, statistic="Maximum"
            ),
            threshold=plan.max_message_age,
            evaluation_periods=1,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=(
                f"The oldest message in {path} is {plan.max_message_age} s old or"
                " more: the consumer is falling behind, disabled or throttled, and messages"
                f" expire after {plan.retention_period} s."
            ),
        )
        """Alarm: oldest message in the source queue at least :attr:`max_message_age` old
        (``ApproximateAgeOfOldestMessage``, Maximum over 1 minute)."""
        self.redelivery_alarm = cloudwatch.Alarm(
            self,
            "RedeliveryAlarm",
            metric=self.redelivery_percent(),
            threshold=REDELIVERY_ALARM_THRESHOLD_PERCENT,
            evaluation_periods=REDELIVERY_ALARM_EVALUATION_PERIODS,
            datapoints_to_alarm=REDELIVERY_ALARM_EVALUATION_PERIODS,
            comparison_operator=cloudwatch.ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
            treat_missing_data=cloudwatch.TreatMissingData.NOT_BREACHING,
            alarm_description=(
                f"At least {REDELIVERY_ALARM_THRESHOLD_PERCENT} % of the messages received from"
                f" {path} were not deleted, in {REDELIVERY_ALARM_EVALUATION_PERIODS} periods of"
                f" {_REDELIVERY_ALARM_PERIOD_MINUTES} minutes in a row: messages are"
                " delivered again (visibility expired while processing, throttling, failed"
                " batches). Check the function's duration, errors and throttles; see"
                " RedeliveryDiagnosis in the function's logs."
            ),
        )
        """Alarm: the share of received messages not deleted (:meth:`redelivery_percent`) at
        least 10 % in 3 consecutive 5-minute periods with at least 10 receives each."""
        self.alarms: list[cloudwatch.Alarm] = [
            self.dead_letter_alarm,
            self.age_alarm,
            self.redelivery_alarm,
        ]
        """Every alarm the construct made."""
        if alarm_topic is not None:
            action = cloudwatch_actions.SnsAction(alarm_topic)
            for alarm in self.alarms:
                alarm.add_alarm_action(action)

        self.idempotency_table: dynamodb.Table | None = None
        """Powertools idempotency table (``aws_dynamodb.Table``) with ``idempotency=True``."""
        if wants_table and own_function is not None:
            self.idempotency_table = idempotency_table(self, own_function, removal_policy)

        if own_function is not None:
            self._set_visibility_env(own_function, plan.visibility_timeout, path)
        if cfn_function is not None:
            assert plan.facts is not None
            scope_facts.validator.consumers.append(
                _Derived(
                    path,
                    cfn_function,
                    dataclasses.replace(plan.facts, derived_function_timeout=plan.function_timeout),
                )
            )

    def _set_visibility_env(self, function: lambda_.Function, visibility: int, path: str) -> None:
        """Set SAFE_QUEUE_VISIBILITY_TIMEOUT on the function, unless another consumer did."""
        known = _VISIBILITY_ENV_SET.get(function)
        if known is None:
            function.add_environment(VISIBILITY_TIMEOUT_ENV, str(visibility))
            _VISIBILITY_ENV_SET[function] = (visibility, path)
        elif known[0] != visibility:
            Annotations.of(self).add_info(
                f"The function {function.node.path} also consumes {known[1]}, whose visibility"
                f" timeout {known[0]} s it keeps in {VISIBILITY_TIMEOUT_ENV}; this queue's is"
                f" {visibility} s, so RedeliveryDiagnosis judges its redeliveries against"
                f" {known[0]} s. Fix: give this queue its own function, or pass"
                " visibility_timeout to RedeliveryDiagnosis for this queue's records."
            )

    def redelivery_percent(self) -> cloudwatch.MathExpression:
        """Return the redelivery alarm's metric: received messages not deleted, in percent.

        ``100 x (NumberOfMessagesReceived - NumberOfMessagesDeleted) / received`` of the
        source queue, sums over 5 minutes; 0 for periods with fewer than 10 receives.
        """
        received = self.queue.metric_number_of_messages_received(
            period=REDELIVERY_ALARM_PERIOD, statistic="Sum"
        )
        deleted = self.queue.metric_number_of_messages_deleted(
            period=REDELIVERY_ALARM_PERIOD, statistic="Sum"
        )
        return cloudwatch.MathExpression(
            expression=(
                f"IF(received >= {REDELIVERY_ALARM_MIN_RECEIVES},"
                " 100 * (received - deleted) / received, 0)"
            ),
            using_metrics={"received": received, "deleted": deleted},
            period=REDELIVERY_ALARM_PERIOD,
            label="Received and not deleted (%)",
        )

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """Return CloudWatch widgets for this consumer (see :class:`SafeQueueDashboard`).

        A title, then: queue depth (visible, in flight); age of the oldest message against
        the age alarm's threshold; received against deleted, with the redelivery share;
        dead-letter queue depth; the function's errors and throttles; its duration
        (maximum, p99) against its timeout.
        """
        from safe_queue.cdk.dashboard import consumer_widgets

        return consumer_widgets(self)

    @property
    def function(self) -> lambda_.IFunction:
        """The consuming function, as given."""
        return self._function

    @property
    def function_timeout(self) -> Duration:
        """The function timeout the queue was derived from."""
        return _seconds(self._plan.function_timeout)

    @property
    def visibility_timeout(self) -> Duration:
        """The source queue's visibility timeout (derived, or the override)."""
        return _seconds(self._plan.visibility_timeout)

    @property
    def max_time_to_dead_letter(self) -> Duration:
        """Worst case before a failing message reaches the DLQ: max_receive_count x visibility."""
        return _seconds(self._plan.max_time_to_dead_letter)

    @property
    def max_message_age(self) -> Duration:
        """The age alarm's threshold (given, or derived)."""
        return _seconds(self._plan.max_message_age)

    @property
    def max_concurrency(self) -> int | None:
        """The mapping's maximum concurrency: given, the function's reserved one, or None."""
        return self._plan.max_concurrency

    @property
    def max_concurrency_from_reserved_concurrency(self) -> bool:
        """True when :attr:`max_concurrency` was derived from the reserved concurrency."""
        return self._plan.max_concurrency_from_reserved
