"""The consumer's props of CDK types, checked without joining the tree.

The function (read once, :mod:`function`), the alarm topic, the encryption key and the
removal policy; and :func:`derive_visibility_timeout`, the formula for ``Duration`` values.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any, Final

from aws_cdk import Duration, RemovalPolicy
from aws_cdk import aws_lambda as lambda_

from safe_queue.cdk._values import Refusals, implements, type_error, whole_seconds
from safe_queue.cdk.function import ConsumingFunction, read_function
from safe_queue.cdk.plan import refuse_errors, with_props
from safe_queue.engine import (
    FunctionFacts,
    MappingFacts,
    QueueFacts,
    evaluate,
    recommended_visibility_timeout,
)

__all__ = [
    "check_constructs",
    "derive_visibility_timeout",
    "derived_visibility_timeout",
    "read_consuming_function",
]

_FUNCTION_FIX: Final = (
    "pass the consuming lambda_.Function (or an Alias or Version of one); for a function"
    " defined elsewhere, lambda_.Function.from_function_arn(...) with function_timeout"
)
_REMOVAL_POLICIES: Final = (
    RemovalPolicy.RETAIN,
    RemovalPolicy.DESTROY,
    RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
)


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
    window = (
        0
        if max_batching_window is None
        else whole_seconds("max_batching_window", max_batching_window)
    )
    return Duration.seconds(derived_visibility_timeout(timeout, window))


def read_consuming_function(
    function: Any, function_timeout: Any, refusals: Refusals
) -> ConsumingFunction | None:
    """Read the function, or record why it cannot be (its type, its timeout)."""
    if not implements(function, lambda_.IFunction):
        refusals.add(
            "function",
            str(type_error("function", function, "an aws_lambda.IFunction", _FUNCTION_FIX)),
        )
        if function_timeout is not None:
            refusals.attempt(
                "function_timeout", whole_seconds, "function_timeout", function_timeout
            )
        return None
    return refusals.attempt("function_timeout", read_function, function, function_timeout)


def check_constructs(props: Mapping[str, Any], refusals: Refusals) -> None:
    """Refuse the construct-typed props of the wrong type (a topic, a key, a policy)."""
    for setting, module, interface, expected, fix in (
        (
            "alarm_topic",
            "aws_sns",
            "ITopic",
            "an aws_sns.ITopic",
            'alarm_topic=sns.Topic(self, "Alarms"), or sns.Topic.from_topic_arn(...)',
        ),
        (
            "encryption_key",
            "aws_kms",
            "IKey",
            "an aws_kms.IKey",
            'encryption_key=kms.Key(self, "QueueKey", enable_key_rotation=True), or'
            " kms.Key.from_key_arn(...)",
        ),
    ):
        value = props.get(setting)
        # the interface's module is loaded only when the prop is given
        if value is not None and not implements(
            value, getattr(importlib.import_module(f"aws_cdk.{module}"), interface)
        ):
            refusals.add(setting, str(type_error(setting, value, expected, fix)))
    if props.get("removal_policy") not in _REMOVAL_POLICIES:
        refusals.add(
            "removal_policy",
            str(
                type_error(
                    "removal_policy",
                    props.get("removal_policy"),
                    "RemovalPolicy.RETAIN, DESTROY or RETAIN_ON_UPDATE_OR_DELETE (SQS"
                    " queues have no snapshots)",
                    "removal_policy=RemovalPolicy.RETAIN to keep the messages, or"
                    " RemovalPolicy.DESTROY for a throwaway stack",
                )
            ),
        )


def derived_visibility_timeout(function_timeout: int, batching_window: int = 0) -> int:
    """Return ``6 x function_timeout + batching_window``, refusing what AWS would reject.

    Raises
    ------
    SafeQueueConfigError
        The engine finds an error in a function with that timeout and a mapping with that
        batching window (each outside AWS's range), with the rule ids.

    Examples
    --------
    >>> derived_visibility_timeout(180, 2)
    1082
    >>> derived_visibility_timeout(901)
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: The function's Timeout is 901 s; AWS allows 1..900 s, ...
    """
    visibility = recommended_visibility_timeout(function_timeout, batching_window)
    refused = Refusals()
    facts = MappingFacts(
        QueueFacts(visibility_timeout=visibility),
        FunctionFacts(timeout=function_timeout),
        batching_window=batching_window,
    )
    refuse_errors([with_props(f) for f in evaluate(facts)], refused)
    if refused:
        raise refused.error()
    return visibility
