"""What SafeQueueConsumer reads from the consuming function: its L2 and its timeout."""

from __future__ import annotations

from aws_cdk import Duration
from aws_cdk import aws_lambda as lambda_

from safe_queue.cdk._values import is_number_token, whole_seconds
from safe_queue.engine import Unknown, limits
from safe_queue.errors import SafeQueueConfigError

__all__ = ["function_timeout", "reserved_concurrency", "underlying_function"]

_RESERVED = "the function's ReservedConcurrentExecutions"


def reserved_concurrency(cfn_function: lambda_.CfnFunction | None) -> int | Unknown | None:
    """Return the function's reserved concurrency: None without one, Unknown if unreadable.

    The ``Function`` L2 does not expose it; its ``CfnFunction`` (``node.default_child``)
    does, in one call into jsii. ``cfn_function`` is None for an imported function.
    """
    if cfn_function is None:
        return Unknown(_RESERVED, "is not known: the function is imported")
    value = cfn_function.reserved_concurrent_executions
    if value is None:
        return None
    if is_number_token(value) or not isinstance(value, int | float):
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
    function: lambda_.IFunction, own: lambda_.Function | None, given: Duration | None
) -> int:
    """Return the function's timeout in seconds: its own, else ``given``; refuse a conflict.

    ``own`` is :func:`underlying_function` of ``function`` (looked up once by the caller).
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
    own_timeout = own.timeout
    timeout = (
        limits.FUNCTION_TIMEOUT_DEFAULT
        if own_timeout is None
        else whole_seconds("function timeout", own_timeout)
    )
    given_seconds = None if given is None else whole_seconds("function_timeout", given)
    if given_seconds is not None and given_seconds != timeout:
        raise SafeQueueConfigError(
            f"function_timeout is {given_seconds} s but the function"
            f" {own.node.path} has a timeout of {timeout} s: the queue would be sized for the"
            " wrong value (the drift this library exists to stop). Fix: omit function_timeout;"
            " it is read from the function."
        )
    return timeout
