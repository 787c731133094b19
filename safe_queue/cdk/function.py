"""What SafeQueueConsumer reads from the consuming function: its L2 and its timeout."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_

from safe_queue.cdk._values import is_number_token, whole_seconds
from safe_queue.engine import Unknown, limits
from safe_queue.errors import SafeQueueConfigError

__all__ = [
    "function_properties",
    "function_timeout",
    "reserved_concurrency",
    "underlying_function",
]

_RESERVED = "the function's ReservedConcurrentExecutions"


def function_properties(own: lambda_.Function | None) -> tuple[lambda_.CfnFunction | None, Any]:
    """Return the function's ``CfnFunction`` and its L1 properties (camelCase keys).

    Reading all L1 properties is one call into jsii; reading ``timeout`` (a ``Duration``, then
    its seconds) and ``reserved_concurrent_executions`` separately would be three.
    """
    if own is None:
        return None, None
    child = own.node.default_child
    if not isinstance(child, lambda_.CfnFunction):
        return None, None
    return child, child._cfn_properties


def reserved_concurrency(properties: Mapping[str, Any] | None) -> int | Unknown | None:
    """Return the function's reserved concurrency: None without one, Unknown if unreadable.

    The ``Function`` L2 does not expose it; its ``CfnFunction`` does. ``properties`` are
    the L1 properties (:func:`function_properties`), None for an imported function.
    """
    if properties is None:
        return Unknown(_RESERVED, "is not known: the function is imported")
    value = properties.get("reservedConcurrentExecutions")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or is_number_token(value):
        return Unknown(_RESERVED, "is an unresolved token (a parameter or an import)")
    return int(value)


def underlying_function(function: lambda_.IFunction) -> lambda_.Function | None:
    """Return the ``Function`` behind ``function`` (itself, an alias's or version's), if any."""
    if isinstance(function, lambda_.Function):
        return function
    if isinstance(function, lambda_.Alias):
        return underlying_function(function.version.lambda_)
    if isinstance(function, lambda_.Version):
        return underlying_function(function.lambda_)
    return None


def function_timeout(
    function: lambda_.IFunction,
    own: lambda_.Function | None,
    given: Duration | None,
    properties: Mapping[str, Any] | None = None,
) -> int | None:
    """Return the function's timeout in seconds: its own, else ``given``; refuse a conflict.

    ``None`` for a function without a timeout: the engine applies Lambda's default (3 s).

    ``own`` is :func:`underlying_function` of ``function`` (looked up once by the caller);
    ``properties`` its L1 properties (:func:`function_properties`), read instead of the L2's
    ``timeout`` when given (they are equal while the consumer is built).
    """
    if own is None:
        if given is None:
            raise SafeQueueConfigError(
                f"function_timeout is required: the function {function.node.path} is imported,"
                " so its timeout cannot be read. Fix: pass function_timeout=Duration.seconds(N)"
                f" with the function's configured timeout ({limits.FUNCTION_TIMEOUT_MIN}.."
                f"{limits.FUNCTION_TIMEOUT_MAX} s)."
            )
        return whole_seconds("function_timeout", given)
    if properties is not None:
        raw = properties.get("timeout")
        if raw is not None and (is_number_token(raw) or not isinstance(raw, int | float)):
            raise SafeQueueConfigError(
                "function timeout is an unresolved token; safe_queue needs its value at synth"
                " time to derive the queue's settings. Fix: give the function a concrete"
                " timeout, e.g. Duration.seconds(180), instead of a parameter or an import."
            )
        timeout = None if raw is None else int(raw)
    else:
        own_timeout = own.timeout
        timeout = None if own_timeout is None else whole_seconds("function timeout", own_timeout)
    given_seconds = None if given is None else whole_seconds("function_timeout", given)
    effective = limits.FUNCTION_TIMEOUT_DEFAULT if timeout is None else timeout
    if given_seconds is not None and given_seconds != effective:
        raise SafeQueueConfigError(
            f"function_timeout is {given_seconds} s but the function"
            f" {own.node.path} has a timeout of {effective} s: the queue would be sized for the"
            " wrong value (the drift this library exists to stop). Fix: omit function_timeout;"
            " it is read from the function."
        )
    return timeout
