"""``SafeQueueConsumer``: a queue, its dead-letter queue and alarms, derived from a function.

The construct wires; every decision is made elsewhere: the consuming function is read in
:mod:`function`, the props are checked and judged by the engine in :mod:`plan`, the mapping
is made in :mod:`mapping`, the alarms in :mod:`alarms`, the drift check in :mod:`drift`.
Nothing joins the construct tree before every prop is accepted.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from aws_cdk import (
    Annotations,
    Duration,
    RemovalPolicy,
)
from aws_cdk import aws_cloudwatch as cloudwatch
from aws_cdk import aws_lambda as lambda_
from constructs import Construct

from safe_queue.cdk import plan as planning
from safe_queue.cdk._values import Refusals, plain_bool
from safe_queue.cdk.alarms import (
    REDELIVERY_ALARM_EVALUATION_PERIODS,
    REDELIVERY_ALARM_MIN_RECEIVES,
    REDELIVERY_ALARM_PERIOD,
    REDELIVERY_ALARM_THRESHOLD_PERCENT,
    consumer_alarms,
    redelivery_percent,
)
from safe_queue.cdk.drift import FunctionTimeoutUnchanged
from safe_queue.cdk.function import set_backoff_env, set_visibility_env
from safe_queue.cdk.mapping import consume
from safe_queue.cdk.props import (
    check_constructs,
    derive_visibility_timeout,
    read_consuming_function,
)
from safe_queue.cdk.queues import consumer_queues
from safe_queue.engine import Level
from safe_queue.errors import SafeQueueConfigError

if TYPE_CHECKING:
    # Imported where used: an app that uses none of them does not load their modules.
    from aws_cdk import aws_dynamodb as dynamodb
    from aws_cdk import aws_kms as kms
    from aws_cdk import aws_sns as sns

    from safe_queue.runtime import FailureBackoff

__all__ = [
    "REDELIVERY_ALARM_EVALUATION_PERIODS",
    "REDELIVERY_ALARM_MIN_RECEIVES",
    "REDELIVERY_ALARM_PERIOD",
    "REDELIVERY_ALARM_THRESHOLD_PERCENT",
    "SafeQueueConsumer",
    "derive_visibility_timeout",
]


class SafeQueueConsumer(Construct):
    """An SQS queue feeding a Lambda function, with every setting derived from the function.

    Creates a source queue, a dead-letter queue of the same type, an event source mapping
    on ``function`` (as ``SqsEventSource`` makes it) and three CloudWatch alarms. The
    visibility timeout, the age-alarm threshold and the retry budget are derived from the
    function's timeout, so they cannot drift apart from it; every prop is checked (type
    and range) before the construct joins the tree, and every refusal is reported at once.

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
    failure_backoff
        The :class:`safe_queue.runtime.FailureBackoff` the handler applies to failed
        records. The consumer sets its settings on the function (``SAFE_QUEUE_BACKOFF_*``,
        read by ``FailureBackoff.from_env()``, so handler and construct cannot disagree),
        and the retry budget, the retention rule and the age alarm count it: the worst case
        before a message is dead-lettered is summed over the receives
        (:attr:`max_time_to_dead_letter`). Needs a function defined in the app.
        Default: none (every failure waits out the visibility timeout).

    Raises
    ------
    SafeQueueConfigError
        (a ``ValueError``, shown as ``safe_queue.SafeQueueConfigError``) for a prop of the
        wrong type, one AWS would reject, or one that would lose or duplicate messages. It
        lists every refusal of the consumer; each names the setting, the value, what is
        allowed, and ends with ``Fix: ...`` (and the rule id, where a rule applies).

    Attributes
    ----------
    queue, dead_letter_queue
        The source queue (send messages here) and its dead-letter queue (``aws_sqs.Queue``).
    event_source_mapping
        The ``aws_lambda.EventSourceMapping`` on the function.
    dead_letter_alarm, age_alarm, redelivery_alarm, alarms
        The alarms (see :mod:`safe_queue.cdk.alarms`), and the three in a list.
    idempotency_table
        The Powertools idempotency table with ``idempotency=True``, else ``None``.

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
        failure_backoff: FailureBackoff | None = None,
    ) -> None:
        # Every prop is checked before the construct joins the tree, and every refusal is
        # collected: a refused consumer leaves no trace and names all its problems at once.
        refusals = Refusals()
        consuming = read_consuming_function(function, function_timeout, refusals)
        check_constructs(
            {
                "alarm_topic": alarm_topic,
                "encryption_key": encryption_key,
                "removal_policy": removal_policy,
            },
            refusals,
        )
        wants_table = refusals.attempt("idempotency", plain_bool, "idempotency", idempotency)
        if failure_backoff is not None and consuming is not None and consuming.own is None:
            refusals.add(
                "failure_backoff",
                f"failure_backoff is given but the function {function.node.path} is imported,"
                " so the backoff's settings cannot be set on it. Fix: pass a Function defined"
                " in this app, or set the backoff in the handler and omit failure_backoff.",
            )
        if wants_table and consuming is not None and consuming.own is None:
            from safe_queue.cdk.idempotency import IDEMPOTENCY_TABLE_ENV

            refusals.add(
                "idempotency",
                f"idempotency is True but the function {function.node.path} is imported,"
                f" so {IDEMPOTENCY_TABLE_ENV} cannot be set on it. Fix: pass a Function"
                " defined in this app, or set idempotency=False and wire a table yourself.",
            )
        try:
            plan = planning.plan_props(
                {
                    "batch_size": batch_size,
                    "max_batching_window": max_batching_window,
                    "max_concurrency": max_concurrency,
                    "max_receive_count": max_receive_count,
                    "retention_period": retention_period,
                    "dead_letter_retention_period": dead_letter_retention_period,
                    "visibility_timeout": visibility_timeout,
                    "report_batch_item_failures": report_batch_item_failures,
                    "fifo": fifo,
                    "content_based_deduplication": content_based_deduplication,
                    "max_message_age": max_message_age,
                    "queue_name": queue_name,
                    "dead_letter_queue_name": dead_letter_queue_name,
                    "filters": filters,
                    "failure_backoff": failure_backoff,
                },
                function_timeout=None if consuming is None else consuming.timeout,
                reserved_concurrency=None if consuming is None else consuming.reserved_concurrency,
                refusals=refusals,
            )
        except SafeQueueConfigError:
            path = f"{scope.node.path}/{id}".lstrip("/")
            raise refusals.error(f"SafeQueueConsumer {path}: ") from None
        assert consuming is not None  # a refused function was refused above

        super().__init__(scope, id)
        # Each read of a jsii property is a round trip to the jsii kernel: the node and
        # the path are read once.
        node = self.node
        path = node.path
        self._plan: planning.Plan = plan
        self._function = function
        self._report(plan.warnings)
        self.queue, self.dead_letter_queue = consumer_queues(
            self, plan, encryption_key, removal_policy
        )
        self.event_source_mapping: lambda_.EventSourceMapping = consume(
            self.queue,
            function,
            batch_size=plan.batch_size,
            # the Duration given (whole seconds, checked), or none for no window
            batching_window=max_batching_window if plan.batching_window else None,
            max_concurrency=plan.max_concurrency,
            report_batch_item_failures=plan.report_batch_item_failures,
            filters=plan.filters,
            has_role=consuming.own is not None,
        )
        alarms = consumer_alarms(
            self,
            path=path,
            queue=self.queue,
            dead_letter_queue=self.dead_letter_queue,
            max_receive_count=plan.max_receive_count,
            max_message_age=plan.max_message_age,
            retention_period=plan.retention_period,
            alarm_topic=alarm_topic,
        )
        self.dead_letter_alarm = alarms.dead_letter
        self.age_alarm = alarms.age
        self.redelivery_alarm = alarms.redelivery
        self.alarms: list[cloudwatch.Alarm] = alarms.all()
        self.idempotency_table: dynamodb.Table | None = None
        if consuming.own is not None:
            if wants_table:
                from safe_queue.cdk.idempotency import idempotency_table

                self.idempotency_table = idempotency_table(self, consuming.own, removal_policy)
            drift_check = (
                None
                if consuming.cfn is None or plan.facts is None
                else FunctionTimeoutUnchanged(
                    path,
                    consuming.cfn,
                    dataclasses.replace(plan.facts, derived_function_timeout=plan.function_timeout),
                )
            )
            set_visibility_env(
                self, path, consuming.own, plan.visibility_timeout, consuming.own_node, drift_check
            )
            if failure_backoff is not None:
                set_backoff_env(consuming.own, failure_backoff)

    def _report(self, warnings: Sequence[Any]) -> None:
        """Report the engine's warnings and infos on this consumer (acknowledgeable by id)."""
        if not warnings:
            return
        annotations = Annotations.of(self)
        for finding in warnings:
            if finding.level is Level.WARNING:
                annotations.add_warning_v2(finding.rule_id, finding.message)
            else:
                annotations.add_info_v2(finding.rule_id, finding.message)

    def redelivery_percent(self) -> cloudwatch.MathExpression:
        """Return the redelivery alarm's metric: received messages not deleted, in percent.

        ``100 x (NumberOfMessagesReceived - NumberOfMessagesDeleted) / received`` of the
        source queue, sums over 5 minutes; 0 for periods with fewer than 10 receives.
        """
        return redelivery_percent(self.queue)

    def dashboard_widgets(self) -> list[cloudwatch.IWidget]:
        """Return CloudWatch widgets for this consumer (see :class:`SafeQueueDashboard`).

        A title, then: queue depth (visible, in flight); age of the oldest message against
        the age alarm's threshold; received against deleted, with the redelivery share;
        dead-letter queue depth; the function's errors and throttles; its duration
        (maximum, p99) against its timeout.
        """
        from safe_queue.cdk.widgets import consumer_widgets

        return consumer_widgets(self)

    @property
    def function(self) -> lambda_.IFunction:
        """The consuming function, as given."""
        return self._function

    @property
    def function_timeout(self) -> Duration:
        """The function timeout the queue was derived from."""
        return Duration.seconds(self._plan.function_timeout)

    @property
    def visibility_timeout(self) -> Duration:
        """The source queue's visibility timeout (derived, or the override)."""
        return Duration.seconds(self._plan.visibility_timeout)

    @property
    def max_time_to_dead_letter(self) -> Duration:
        """Worst case before a failing message reaches the DLQ (the engine's retry budget)."""
        return Duration.seconds(self._plan.max_time_to_dead_letter)

    @property
    def max_message_age(self) -> Duration:
        """The age alarm's threshold (given, or derived)."""
        return Duration.seconds(self._plan.max_message_age)

    @property
    def max_concurrency(self) -> int | None:
        """The mapping's maximum concurrency: given, the function's reserved one, or None."""
        return self._plan.max_concurrency

    @property
    def max_concurrency_from_reserved_concurrency(self) -> bool:
        """True when :attr:`max_concurrency` was derived from the reserved concurrency."""
        return self._plan.max_concurrency_from_reserved
