"""The consumer's event source mapping, built with public API as ``SqsEventSource`` builds it.

``SqsEventSource`` exposes no mapping object, so the consumer makes the mapping itself with
``IFunction.add_event_source_mapping`` under the id ``SqsEventSource`` gives it
(``SqsEventSource:<the queue's unique id>``, so the logical id and the template are the
same), grants the function what ``SqsEventSource`` grants (``grant_consume_messages``, with
``kms:Decrypt`` on a customer-managed key), and acknowledges the one cdk-nag finding that
cannot apply to an SQS mapping, on the mapping itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

from aws_cdk import Acknowledgment, Annotations, Duration, Names, Validations
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sqs as sqs

__all__ = ["MAPPING_ACKNOWLEDGEMENTS", "consume"]

MAPPING_ACKNOWLEDGEMENTS: Final = (
    Acknowledgment(
        id="Serverless::Serverless-LambdaEventSourceMappingDestination",
        reason="SQS event source mappings support no OnFailure destination; failed messages"
        " go to the queue's dead-letter queue through its redrive policy.",
    ),
)
"""cdk-nag findings that do not apply to an SQS event source mapping."""


def consume(
    queue: sqs.IQueue,
    function: lambda_.IFunction,
    *,
    batch_size: int,
    batching_window: Duration | None,
    max_concurrency: int | None,
    report_batch_item_failures: bool,
    filters: Sequence[Mapping[str, Any]],
    has_role: bool = False,
) -> lambda_.EventSourceMapping:
    """Add the mapping from ``queue`` to ``function`` and grant the function to consume.

    ``batching_window`` is the mapping's ``MaximumBatchingWindowInSeconds`` (``None``: not
    set). ``has_role`` says the function is known to have a role (a ``Function`` always
    has one, and so have its aliases and versions), which is then not asked for.
    """
    mapping = function.add_event_source_mapping(
        f"SqsEventSource:{Names.unique_id(queue)}",
        event_source_arn=queue.queue_arn,
        batch_size=batch_size,
        max_batching_window=batching_window,
        max_concurrency=max_concurrency,
        report_batch_item_failures=report_batch_item_failures,
        filters=list(filters) or None,
    )
    if has_role or function.role is not None:
        queue.grant_consume_messages(function)
    else:  # what SqsEventSource says for an imported function without a role
        Annotations.of(function).add_warning_v2(
            "@aws-cdk/aws-lambda-event-sources:sqsFunctionImportWithoutRole",
            f"Function '{function.node.path}' was imported without an IAM role so it was not"
            f" granted access to consume messages from '{queue.node.path}'",
        )
    Validations.of(mapping).acknowledge(*MAPPING_ACKNOWLEDGEMENTS)
    return mapping
