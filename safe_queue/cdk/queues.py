"""A consumer's two queues: the source queue and its dead-letter queue, of one type.

Both are encrypted (SSE-SQS, or SSE-KMS with the consumer's key), refuse plain HTTP and
follow the consumer's removal policy. The source queue carries, as metadata, what the
template checks read: the function timeout its visibility was derived from (drift) and
the rules the consumer reported itself (one verdict, not two).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from aws_cdk import Acknowledgment, Duration, Names, RemovalPolicy, Validations
from aws_cdk import aws_sqs as sqs
from constructs import Construct

from safe_queue import keys
from safe_queue.cdk import plan as planning
from safe_queue.engine import limits

if TYPE_CHECKING:
    from aws_cdk import aws_kms as kms

__all__ = ["consumer_queues"]

_DEAD_LETTER_QUEUE_ACKNOWLEDGEMENT: Final = Acknowledgment(
    id="Serverless::Serverless-SQSRedrivePolicy",
    reason="This is the dead-letter queue: a redrive policy of its own would move failed"
    " messages on again instead of keeping them for inspection.",
)


# The retention periods most consumers get, made once like alarms.py's periods (two round
# trips into jsii less per consumer): AWS's default for the source queue, the consumer's
# default for its dead-letter queue.
_AWS_DEFAULT_RETENTION: Final = Duration.seconds(limits.RETENTION_DEFAULT)
_DEAD_LETTER_DEFAULT_RETENTION: Final = Duration.seconds(planning.DEAD_LETTER_RETENTION_DEFAULT)


def _retention(seconds: int) -> Duration:
    if seconds == limits.RETENTION_DEFAULT:
        return _AWS_DEFAULT_RETENTION
    if seconds == planning.DEAD_LETTER_RETENTION_DEFAULT:
        return _DEAD_LETTER_DEFAULT_RETENTION
    return Duration.seconds(seconds)


def consumer_queues(
    scope: Construct, plan: planning.Plan, key: kms.IKey | None, removal_policy: RemovalPolicy
) -> tuple[sqs.Queue, sqs.Queue]:
    """Create ``Queue`` and ``DeadLetterQueue`` in ``scope``; return them (source first)."""
    queue_name, dead_letter_queue_name = plan.queue_name, plan.dead_letter_queue_name
    if plan.fifo and (queue_name is None or dead_letter_queue_name is None):
        # CloudFormation's generated FIFO names can pass SQS's 80 characters on deep
        # paths; these fit at any depth (path-derived, with a hash of the whole path).
        base = Names.unique_resource_name(
            scope,
            max_length=planning.QUEUE_NAME_MAX_LENGTH - len(planning.FIFO_SUFFIX) - 4,
            separator="-",
        )
        queue_name = queue_name or f"{base}{planning.FIFO_SUFFIX}"
        dead_letter_queue_name = dead_letter_queue_name or f"{base}-dlq{planning.FIFO_SUFFIX}"
    encryption = sqs.QueueEncryption.SQS_MANAGED if key is None else sqs.QueueEncryption.KMS
    fifo = True if plan.fifo else None
    dead_letter_queue = sqs.Queue(
        scope,
        "DeadLetterQueue",
        queue_name=dead_letter_queue_name,
        fifo=fifo,
        retention_period=_retention(plan.dead_letter_retention_period),
        encryption=encryption,
        encryption_master_key=key,
        enforce_ssl=True,
        removal_policy=removal_policy,
    )
    Validations.of(dead_letter_queue).acknowledge(_DEAD_LETTER_QUEUE_ACKNOWLEDGEMENT)
    queue = sqs.Queue(
        scope,
        "Queue",
        queue_name=queue_name,
        fifo=fifo,
        content_based_deduplication=True if plan.content_based_deduplication else None,
        visibility_timeout=Duration.seconds(plan.visibility_timeout),
        retention_period=_retention(plan.retention_period),
        dead_letter_queue=sqs.DeadLetterQueue(
            queue=dead_letter_queue, max_receive_count=plan.max_receive_count
        ),
        encryption=encryption,
        encryption_master_key=key,
        enforce_ssl=True,
        removal_policy=removal_policy,
    )
    # What the template checks read: the timeout the queue was derived from (drift),
    # and the rules this consumer reported itself (one verdict, not two).
    cfn_queue = queue.node.default_child
    assert isinstance(cfn_queue, sqs.CfnQueue)
    cfn_queue.add_metadata(keys.DERIVED_FUNCTION_TIMEOUT, plan.function_timeout)
    if plan.reported_rule_ids:
        cfn_queue.add_metadata(keys.REPORTED, list(plan.reported_rule_ids))
    return queue, dead_letter_queue
