"""``SafeQueueConsumer``: a queue, its dead-letter queue and alarms, derived from a function."""

from __future__ import annotations

import functools
import weakref
from dataclasses import dataclass
from typing import Any

import jsii
from aws_cdk import Acknowledgment, Annotations, Duration, Stack, Validations
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_cloudwatch_actions as cloudwatch_actions
from aws_cdk import aws_dynamodb as dynamodb
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_lambda_event_sources as event_sources
from aws_cdk import aws_sns as sns
from aws_cdk import aws_sqs as sqs
from constructs import Construct, IConstruct, IValidation

from safe_queue.cdk import plan as planning
from safe_queue.cdk._values import plain_number, whole_seconds
from safe_queue.cdk.function import function_timeout as read_function_timeout
from safe_queue.cdk.function import underlying_function
from safe_queue.cdk.idempotency import IDEMPOTENCY_TABLE_ENV, idempotency_table
from safe_queue.engine import limits
from safe_queue.engine.rules import function_timeout_unchanged, recommended_visibility_timeout
from safe_queue.errors import SafeQueueConfigError

__all__ = ["SafeQueueConsumer", "derive_visibility_timeout"]

_ONE_MINUTE = Duration.minutes(1)

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
    timeout = planning.FUNCTION_TIMEOUT.check(whole_seconds("function_timeout", function_timeout))
    window = _window_seconds(max_batching_window)
    return _seconds(recommended_visibility_timeout(timeout, window))


def _optional_seconds(setting: str, value: Duration | None) -> int | None:
    return None if value is None else whole_seconds(setting, value)


def _window_seconds(max_batching_window: Duration | None) -> int:
    window = _optional_seconds("max_batching_window", max_batching_window) or 0
    return planning.BATCHING_WINDOW.check(window)


def _acknowledge_false_positives(dead_letter_queue: sqs.Queue, mapping: IConstruct) -> None:
    """Acknowledge the cdk-nag Serverless findings that do not apply to an SQS consumer."""
    Validations.of(dead_letter_queue).acknowledge(
        Acknowledgment(
            id="Serverless::Serverless-SQSRedrivePolicy",
            reason="This is the dead-letter queue: a redrive policy of its own would move"
            " failed messages on again instead of keeping them for inspection.",
        )
    )
    Validations.of(mapping).acknowledge(
        Acknowledgment(
            id="Serverless::Serverless-LambdaEventSourceMappingDestination",
            reason="SQS event source mappings support no OnFailure destination; failed"
            " messages go to the queue's dead-letter queue through its redrive policy.",
        )
    )


@dataclass(frozen=True)
class _Derived:
    """What one consumer derived its queue from, and the L1 function that must keep it."""

    consumer_path: str
    cfn_function: lambda_.CfnFunction
    function_timeout: int


@jsii.implements(IValidation)
class _FunctionTimeoutsUnchanged:
    """Synth-time check that no escape hatch changed a timeout a consumer derived from.

    One per stack, for all its consumers: each validation costs a call from jsii into Python.
    """

    def __init__(self) -> None:
        self.consumers: list[_Derived] = []

    def validate(self) -> list[str]:
        errors = []
        for derived in self.consumers:
            final = derived.cfn_function.timeout
            finding = function_timeout_unchanged(
                function_timeout=limits.FUNCTION_TIMEOUT_DEFAULT if final is None else int(final),
                derived_function_timeout=derived.function_timeout,
            )
            if finding is not None:
                errors.append(
                    f"SafeQueueConsumer {derived.consumer_path}, function"
                    f" {derived.cfn_function.node.path}: {finding.message}"
                    f" [{finding.rule_id}]"
                )
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


# {(queue ARN token, function name token): the consumer whose mapping joins them}. Token
# strings are unique in the process and are what the mapping's L1 properties hold, so the
# owner of a mapping is found without a call into jsii (which hands out a new Python object
# for every construct made in JavaScript, so constructs cannot be the keys).
_MAPPING_OWNERS: weakref.WeakValueDictionary[tuple[str, str], SafeQueueConsumer] = (
    weakref.WeakValueDictionary()
)


def consumer_of_mapping(event_source_arn: Any, function_name: Any) -> SafeQueueConsumer | None:
    """Return the SafeQueueConsumer that built the mapping with these L1 properties, if any."""
    if not isinstance(event_source_arn, str) or not isinstance(function_name, str):
        return None
    return _MAPPING_OWNERS.get((event_source_arn, function_name))


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


class SafeQueueConsumer(Construct):
    """An SQS queue feeding a Lambda function, with every setting derived from the function.

    Creates a source queue, a dead-letter queue of the same type, an event source mapping
    (``SqsEventSource``) on ``function`` and two CloudWatch alarms. The visibility timeout,
    the age-alarm threshold and the retry budget are derived from the function's timeout,
    so they cannot drift apart from it; every prop is validated at construction time.

    Parameters
    ----------
    scope
        Parent construct.
    id
        Construct id. Child ids (``Queue``, ``DeadLetterQueue``, ``DeadLetterAlarm``,
        ``AgeAlarm``, ``IdempotencyTable``) are public API: they name the logical ids in
        the template.
    function
        The consumer. Its timeout is read from it (a ``Function``, or an ``Alias`` or
        ``Version`` of one); a ``Function`` without a timeout has Lambda's default, 3 s.
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
        Maximum concurrent invocations by this mapping, 2..1,000. Default: no limit.
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
        Make both queues FIFO. Default: False.
    content_based_deduplication
        FIFO only: deduplicate on a SHA-256 of the body. Default: False.
    max_message_age
        Age-alarm threshold for the oldest message, 1 s up to (not including)
        ``retention_period``. Default: ``max_time_to_dead_letter``, at most half the
        ``retention_period``.
    alarm_topic
        SNS topic notified by every alarm. Default: no alarm actions.
    idempotency
        Create :attr:`idempotency_table` for Powertools' idempotency utility (partition key
        ``id``, TTL attribute ``expiration``, on-demand, point-in-time recovery, encrypted),
        grant the function ``dynamodb:GetItem``, ``PutItem``, ``UpdateItem`` and
        ``DeleteItem`` on it, and set ``IDEMPOTENCY_TABLE_NAME`` on the function. Needs a
        function defined in the app (not imported). Default: False (no table).

    Raises
    ------
    SafeQueueConfigError
        (a ``ValueError``) for a prop AWS would reject or that would lose or duplicate
        messages; the message names the setting, the value, the allowed range and the fix.

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
    """

    def __init__(
        self,
        scope: Construct,
        id: str,
        *,
        function: lambda_.IFunction,
        function_timeout: Duration | None = None,
        batch_size: int = limits.BATCH_SIZE_DEFAULT,
        max_batching_window: Duration | None = None,
        max_concurrency: int | None = None,
        max_receive_count: int = limits.MAX_RECEIVE_COUNT_GUIDANCE,
        retention_period: Duration | None = None,
        dead_letter_retention_period: Duration | None = None,
        visibility_timeout: Duration | None = None,
        report_batch_item_failures: bool = True,
        fifo: bool = False,
        content_based_deduplication: bool = False,
        max_message_age: Duration | None = None,
        alarm_topic: sns.ITopic | None = None,
        idempotency: bool = False,
    ) -> None:
        scope_facts = _scope_of(scope)
        path = f"{scope_facts.path}/{id}".lstrip("/")
        try:
            own_function = underlying_function(function)
            plan = planning.plan(
                function_timeout=read_function_timeout(function, own_function, function_timeout),
                batch_size=plain_number("batch_size", batch_size),
                batching_window=_window_seconds(max_batching_window),
                max_concurrency=(
                    None
                    if max_concurrency is None
                    else plain_number("max_concurrency", max_concurrency)
                ),
                max_receive_count=plain_number("max_receive_count", max_receive_count),
                retention_period=_optional_seconds("retention_period", retention_period)
                or limits.RETENTION_DEFAULT,
                dead_letter_retention_period=_optional_seconds(
                    "dead_letter_retention_period", dead_letter_retention_period
                )
                or limits.RETENTION_MAX,
                visibility_timeout=_optional_seconds("visibility_timeout", visibility_timeout),
                report_batch_item_failures=report_batch_item_failures,
                fifo=fifo,
                content_based_deduplication=content_based_deduplication,
                max_message_age=_optional_seconds("max_message_age", max_message_age),
            )
            if idempotency and own_function is None:
                raise SafeQueueConfigError(
                    f"idempotency is True but the function {function.node.path} is imported,"
                    f" so {IDEMPOTENCY_TABLE_ENV} cannot be set on it. Fix: pass a Function"
                    " defined in this app, or set idempotency=False and wire a table yourself."
                )
        except SafeQueueConfigError as error:
            raise SafeQueueConfigError(f"SafeQueueConsumer {path}: {error}") from None
        # Validated before the construct joins the tree: a refused consumer leaves no trace.
        super().__init__(scope, id)
        self._plan: planning.Plan = plan
        for finding in plan.warnings:
            Annotations.of(self).add_warning_v2(finding.rule_id, finding.message)

        fifo_or_none = True if fifo else None
        self.dead_letter_queue = sqs.Queue(
            self,
            "DeadLetterQueue",
            fifo=fifo_or_none,
            retention_period=_seconds(plan.dead_letter_retention_period),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )
        """The dead-letter queue (``aws_sqs.Queue``), same type as :attr:`queue`."""
        self.queue = sqs.Queue(
            self,
            "Queue",
            fifo=fifo_or_none,
            content_based_deduplication=True if content_based_deduplication else None,
            visibility_timeout=_seconds(plan.visibility_timeout),
            retention_period=_seconds(plan.retention_period),
            dead_letter_queue=sqs.DeadLetterQueue(
                queue=self.dead_letter_queue, max_receive_count=plan.max_receive_count
            ),
            encryption=sqs.QueueEncryption.SQS_MANAGED,
            enforce_ssl=True,
        )
        """The source queue (``aws_sqs.Queue``); send messages here."""
        cfn_queue = self.queue.node.default_child
        assert isinstance(cfn_queue, sqs.CfnQueue)
        cfn_queue.add_metadata(DERIVED_FUNCTION_TIMEOUT_METADATA, plan.function_timeout)
        if plan.warnings:
            cfn_queue.add_metadata(REPORTED_METADATA, list(plan.reported_rule_ids))
        self.event_source = event_sources.SqsEventSource(
            self.queue,
            batch_size=plan.batch_size,
            max_batching_window=(_seconds(plan.batching_window) if plan.batching_window else None),
            max_concurrency=plan.max_concurrency,
            report_batch_item_failures=report_batch_item_failures,
        )
        """The ``SqsEventSource`` added to ``function``."""
        function.add_event_source(self.event_source)
        # SqsEventSource adds the mapping as the function's newest child.
        self._mapping: lambda_.EventSourceMapping = function.node.children[-1]  # type: ignore[assignment]
        assert isinstance(self._mapping, lambda_.EventSourceMapping)
        _MAPPING_OWNERS[(self.queue.queue_arn, function.function_name)] = self
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
        self.alarms: list[cloudwatch.Alarm] = [self.dead_letter_alarm, self.age_alarm]
        """Every alarm the construct made."""
        if alarm_topic is not None:
            action = cloudwatch_actions.SnsAction(alarm_topic)
            for alarm in self.alarms:
                alarm.add_alarm_action(action)

        self.idempotency_table: dynamodb.Table | None = None
        """Powertools idempotency table (``aws_dynamodb.Table``) with ``idempotency=True``."""
        if idempotency and own_function is not None:
            self.idempotency_table = idempotency_table(self, own_function)

        cfn_function = own_function.node.default_child if own_function is not None else None
        if isinstance(cfn_function, lambda_.CfnFunction):
            scope_facts.validator.consumers.append(
                _Derived(path, cfn_function, plan.function_timeout)
            )

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
