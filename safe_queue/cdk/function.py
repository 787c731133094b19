"""What SafeQueueConsumer reads from the consuming function, and the one thing it writes.

The function's timeout reaches the engine by this one route: :func:`read_function` returns
it (``None`` when the function sets none: the engine applies Lambda's default), with the
reserved concurrency and the L1 function the drift check watches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import jsii
from aws_cdk import Annotations, Duration
from aws_cdk import aws_lambda as lambda_
from constructs import Construct, IValidation, Node

from safe_queue import keys
from safe_queue.cdk._values import is_number_token, whole_seconds
from safe_queue.engine import Unknown, limits
from safe_queue.errors import SafeQueueConfigError

__all__ = [
    "ConsumingFunction",
    "read_function",
    "set_backoff_env",
    "set_visibility_env",
    "underlying_function",
]

_RESERVED = "the function's ReservedConcurrentExecutions"
_VISIBILITY_MARKER: Final = "SafeQueueVisibilityTimeout"


@dataclass(frozen=True)
class ConsumingFunction:
    """The consuming function as the consumer needs it.

    Attributes
    ----------
    own
        The ``Function`` behind it (itself, an alias's or a version's); ``None`` when imported.
    cfn
        Its ``CfnFunction`` (the drift check reads the final timeout there); ``None`` when
        imported.
    timeout
        Whole seconds; ``None`` when the function sets none (Lambda's default applies).
    reserved_concurrency
        ``ReservedConcurrentExecutions``; ``None`` without one; ``Unknown`` when it cannot
        be read (an imported function, a token).
    own_node
        ``own.node``, read once (each read is a round trip into jsii); ``None`` when
        imported.
    """

    own: lambda_.Function | None
    cfn: lambda_.CfnFunction | None
    timeout: int | None
    reserved_concurrency: int | Unknown | None
    own_node: Node | None = None


def underlying_function(function: lambda_.IFunction) -> lambda_.Function | None:
    """Return the ``Function`` behind ``function`` (itself, an alias's or version's), if any."""
    if isinstance(function, lambda_.Function):
        return function
    if isinstance(function, lambda_.Alias):
        return underlying_function(function.version.lambda_)
    if isinstance(function, lambda_.Version):
        return underlying_function(function.lambda_)
    return None


def _token_error() -> SafeQueueConfigError:
    return SafeQueueConfigError(
        "function timeout is an unresolved token; safe_queue needs its value at synth"
        " time to derive the queue's settings. Fix: give the function a concrete"
        " timeout, e.g. Duration.seconds(180), instead of a parameter or an import."
    )


def read_function(function: lambda_.IFunction, given: Duration | None) -> ConsumingFunction:
    """Read the consuming function: its timeout (its own, else ``given``) and reservation.

    Parameters
    ----------
    function
        The consumer's ``function`` prop (an ``IFunction``).
    given
        The ``function_timeout`` prop: required for an imported function, and for a
        ``Function`` it must equal the function's own timeout.

    Raises
    ------
    SafeQueueConfigError
        An imported function without ``function_timeout``, a ``function_timeout`` other than
        the function's own, or a timeout that is an unresolved token.
    """
    own = underlying_function(function)
    if own is None:
        if given is None:
            raise SafeQueueConfigError(
                f"function_timeout is required: the function {function.node.path} is imported,"
                " so its timeout cannot be read. Fix: pass function_timeout=Duration.seconds(N)"
                f" with the function's configured timeout ({limits.FUNCTION_TIMEOUT_MIN}.."
                f"{limits.FUNCTION_TIMEOUT_MAX} s)."
            )
        return ConsumingFunction(
            None,
            None,
            whole_seconds("function_timeout", given),
            Unknown(_RESERVED, "is not known: the function is imported"),
        )
    own_node = own.node
    cfn = own_node.default_child
    if not isinstance(cfn, lambda_.CfnFunction):
        raise SafeQueueConfigError(
            f"the function {own.node.path} has no CfnFunction child, so its timeout cannot be"
            " read. Fix: pass a lambda_.Function (or an Alias or Version of one)."
        )
    raw = cfn.timeout
    if raw is not None and (is_number_token(raw) or not isinstance(raw, int | float)):
        raise _token_error()
    timeout = None if raw is None else int(raw)
    effective = limits.FUNCTION_TIMEOUT_DEFAULT if timeout is None else timeout
    given_seconds = None if given is None else whole_seconds("function_timeout", given)
    if given_seconds is not None and given_seconds != effective:
        raise SafeQueueConfigError(
            f"function_timeout is {given_seconds} s but the function"
            f" {own.node.path} has a timeout of {effective} s: the queue would be sized for the"
            " wrong value (the drift this library exists to stop). Fix: omit function_timeout;"
            " it is read from the function."
        )
    reserved_raw = cfn.reserved_concurrent_executions
    reserved: int | Unknown | None
    if reserved_raw is None:
        reserved = None
    elif isinstance(reserved_raw, bool) or not isinstance(reserved_raw, int | float):
        reserved = Unknown(_RESERVED, f"is {reserved_raw!r}, not a number")
    elif is_number_token(reserved_raw):
        reserved = Unknown(_RESERVED, "is an unresolved token (a parameter or an import)")
    else:
        reserved = int(reserved_raw)
    return ConsumingFunction(own, cfn, timeout, reserved, own_node)


@jsii.implements(IValidation)
class _FunctionRecord(Construct):
    """What the consumers of one function left under it, and their synth-time drift checks.

    ``visibility`` and ``consumer_path``: which consumer set its
    ``SAFE_QUEUE_VISIBILITY_TIMEOUT``. ``checks``: each consumer's
    :class:`~safe_queue.cdk.drift.FunctionTimeoutUnchanged`, run by CDK at synth as this
    construct's one validation (one callback per function, not per consumer).
    """

    def __init__(self, function: lambda_.Function, visibility: int, consumer_path: str) -> None:
        super().__init__(function, _VISIBILITY_MARKER)
        self.visibility = visibility
        self.consumer_path = consumer_path
        self.checks: list[IValidation] = []

    def validate(self) -> list[str]:
        """Return the errors of every consumer's drift check, in the order they were made."""
        return [error for check in self.checks for error in check.validate()]


def set_visibility_env(
    consumer: Construct,
    consumer_path: str,
    function: lambda_.Function,
    visibility: int,
    function_node: Node | None = None,
    drift_check: IValidation | None = None,
) -> None:
    """Set SAFE_QUEUE_VISIBILITY_TIMEOUT on the function, unless another consumer did.

    ``consumer_path`` and ``function_node`` (``function.node``) are given when already read.
    ``drift_check`` joins the function's other consumers' checks, run at synth.
    """
    node = function.node if function_node is None else function_node
    try:  # the first consumer of the function: no lookup first (a round trip into jsii)
        record = _FunctionRecord(function, visibility, consumer_path)
    except Exception:  # the id is taken: by another consumer's record, or not
        found = node.try_find_child(_VISIBILITY_MARKER)
        if not isinstance(found, _FunctionRecord):
            raise
        record = found
        if record.visibility != visibility:
            Annotations.of(consumer).add_info(
                f"The function {function.node.path} also consumes {record.consumer_path},"
                f" whose visibility timeout {record.visibility} s it keeps in"
                f" {keys.VISIBILITY_TIMEOUT_ENV}; this queue's is {visibility} s, so"
                f" RedeliveryDiagnosis judges its redeliveries against {record.visibility} s."
                " Fix: give this queue its own function, or pass visibility_timeout to"
                " RedeliveryDiagnosis for this queue's records."
            )
    else:
        function.add_environment(keys.VISIBILITY_TIMEOUT_ENV, str(visibility))
        node.add_validation(record)
    if drift_check is not None:
        record.checks.append(drift_check)


def set_backoff_env(function: lambda_.Function, backoff: Any) -> None:
    """Set the failure backoff's settings (``SAFE_QUEUE_BACKOFF_*``) on the function.

    ``FailureBackoff.from_env()`` reads them in the handler.
    """
    function.add_environment(keys.BACKOFF_BASE_ENV, f"{float(backoff.base):g}")
    function.add_environment(keys.BACKOFF_CAP_ENV, f"{float(backoff.cap):g}")
    function.add_environment(
        keys.BACKOFF_JITTER_ENV, "true" if getattr(backoff, "jitter", True) else "false"
    )
