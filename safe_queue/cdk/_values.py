"""Turning CDK prop values into plain values: types checked, tokens and fractions refused.

Every refusal is a :class:`~safe_queue.SafeQueueConfigError` whose message names the setting,
the value (and its type) given, what is expected, and ends with ``Fix: ...``. A
:class:`Refusals` collects the refusals of one consumer, so that they are reported together.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

from safe_queue.errors import SafeQueueConfigError

if TYPE_CHECKING:
    from aws_cdk import Duration

__all__ = [
    "Refusals",
    "implements",
    "is_number_token",
    "is_string_token",
    "plain_bool",
    "plain_number",
    "type_error",
    "whole_seconds",
]

T = TypeVar("T")


class Refusals:
    """The refusals of one consumer, collected so that all of them are reported at once.

    Examples
    --------
    >>> refusals = Refusals()
    >>> refusals.attempt("batch_size", plain_number, "batch_size", "5") is None
    True
    >>> refusals.add("fifo", "fifo is 'yes' (a str); expected a bool. Fix: fifo=True.")
    >>> sorted(refusals.settings)
    ['batch_size', 'fifo']
    >>> print(refusals.error("SafeQueueConsumer S/C: "))
    SafeQueueConsumer S/C: 2 settings refused:
      - batch_size is '5' (a str); expected a whole number (an int). Fix: batch_size=5.
      - fifo is 'yes' (a str); expected a bool. Fix: fifo=True.
    """

    def __init__(self) -> None:
        self.messages: list[str] = []
        self.settings: set[str] = set()
        """The settings refused so far (their later checks are skipped)."""

    def __bool__(self) -> bool:
        return bool(self.messages)

    def add(self, setting: str, message: str) -> None:
        """Record one refusal of ``setting``."""
        self.settings.add(setting)
        self.messages.append(message)

    def attempt(self, setting: str, check: Callable[..., T], *args: Any) -> T | None:
        """Return ``check(*args)``, or None after recording its refusal of ``setting``."""
        try:
            return check(*args)
        except SafeQueueConfigError as error:
            self.add(setting, str(error))
            return None

    def error(self, prefix: str = "") -> SafeQueueConfigError:
        """Return one error listing every refusal (the message alone if there is one)."""
        if len(self.messages) == 1:
            return SafeQueueConfigError(f"{prefix}{self.messages[0]}")
        listed = "".join(f"\n  - {message}" for message in self.messages)
        return SafeQueueConfigError(f"{prefix}{len(self.messages)} settings refused:{listed}")


def _a(value: object) -> str:
    name = type(value).__name__
    if value is None:
        return "None"
    return f"an {name}" if name[:1].lower() in "aeiou" else f"a {name}"


def type_error(setting: str, value: object, expected: str, fix: str) -> SafeQueueConfigError:
    """Return the refusal of a value of the wrong type.

    Examples
    --------
    >>> print(type_error("window", 5, "a Duration", "window=Duration.seconds(5)"))
    window is 5 (an int); expected a Duration. Fix: window=Duration.seconds(5).
    """
    given = "None" if value is None else f"{value!r} ({_a(value)})"
    return SafeQueueConfigError(f"{setting} is {given}; expected {expected}. Fix: {fix}.")


def implements(value: object, interface: Any) -> bool:
    """Return True if ``value`` has the methods of ``interface`` (e.g. ``IFunction``).

    jsii interfaces are not runtime-checkable protocols. An object made in Python is an
    instance of a class implementing the interface; one made in JavaScript (an import such
    as ``Function.from_function_arn``) a proxy of it, or a dynamic proxy delegating to the
    interfaces it implements (``Key.from_key_arn``). Each answers the interface's methods,
    which this looks up by their public names (no call into jsii).
    """
    methods = [
        name
        for name, member in vars(interface).items()
        if not name.startswith("_") and callable(member)
    ]
    return bool(methods) and all(hasattr(value, name) for name in methods)


# aws-cdk-lib encodes a number token as a very large negative double; no real setting is
# below this, so only such values are asked of Token.is_unresolved (a call into jsii).
_TOKEN_RANGE = -1e270


def is_number_token(value: float) -> bool:
    """Return True if ``value`` is an aws-cdk-lib number token (a parameter, an import...)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    if not math.isfinite(value) or value > _TOKEN_RANGE:
        return False
    from aws_cdk import Token

    return bool(Token.is_unresolved(value))


def is_string_token(value: str) -> bool:
    """Return True if ``value`` holds an aws-cdk-lib string token (``Token.is_unresolved``)."""
    from aws_cdk import Token

    return bool(Token.is_unresolved(value))


def _token_error(setting: str) -> SafeQueueConfigError:
    return SafeQueueConfigError(
        f"{setting} is an unresolved token; safe_queue needs its value at synth time to"
        " derive and check the other settings. Fix: pass a concrete value, e.g."
        " Duration.seconds(180) or 5, instead of a parameter or an imported value."
    )


def whole_seconds(setting: str, value: Duration) -> int:
    """Return ``value`` in whole seconds, refusing other types, tokens and fractions.

    Examples
    --------
    >>> from aws_cdk import Duration
    >>> whole_seconds("function_timeout", Duration.minutes(3))
    180
    >>> whole_seconds("visibility_timeout", 60)
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: visibility_timeout is 60 (an int); expected a Duration. ...
    """
    from aws_cdk import Duration  # here: plan.py uses this module without CDK

    if not isinstance(value, Duration):
        example = value if isinstance(value, int | float) and not isinstance(value, bool) else "N"
        raise type_error(setting, value, "a Duration", f"{setting}=Duration.seconds({example})")
    try:
        seconds = value.to_seconds(integral=False)
    except RuntimeError:  # a token in another unit than seconds cannot be converted
        raise _token_error(setting) from None
    if is_number_token(seconds):
        raise _token_error(setting)
    if seconds != int(seconds):
        raise SafeQueueConfigError(
            f"{setting} is {seconds} s; AWS takes whole seconds. Fix: round it, e.g."
            f" Duration.seconds({int(seconds) + 1})."
        )
    return int(seconds)


def plain_number(setting: str, value: int) -> int:
    """Return ``value`` as an int, refusing other types, tokens and fractions.

    Examples
    --------
    >>> plain_number("batch_size", 5.0)
    5
    >>> plain_number("batch_size", True)
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: batch_size is True (a bool); expected a whole number ...
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        example = value.strip() if isinstance(value, str) and value.strip().isdigit() else None
        fix = f"{setting}={example}" if example else f"{setting}=5, for example"
        raise type_error(setting, value, "a whole number (an int)", fix)
    if is_number_token(value):
        raise _token_error(setting)
    if value != int(value):
        raise SafeQueueConfigError(
            f"{setting} is {value}; it must be a whole number. Fix: {setting}={int(value + 0.5)}."
        )
    return int(value)


def plain_bool(setting: str, value: bool) -> bool:
    """Return ``value`` if it is a real bool (``1``, ``"yes"`` or ``None`` are refused).

    Examples
    --------
    >>> plain_bool("fifo", "yes")
    Traceback (most recent call last):
    ...
    safe_queue.SafeQueueConfigError: fifo is 'yes' (a str); expected a bool. Fix: ...
    """
    if not isinstance(value, bool):
        raise type_error(setting, value, "a bool", f"{setting}=True or {setting}=False")
    return value
