"""Turning CDK prop values into plain numbers, refusing tokens and fractions."""

from __future__ import annotations

import struct
from typing import TYPE_CHECKING

from safe_queue.errors import SafeQueueConfigError

if TYPE_CHECKING:
    from aws_cdk import Duration

__all__ = ["is_number_token", "plain_number", "whole_seconds"]

# aws-cdk-lib encodes a number token as a NaN-space double whose top 16 bits are 0xFBFF
# (core/lib/private/encoding.ts); checking the bits here saves a call into jsii per value.
_DOUBLE_TOKEN_MARKER = 0xFBFF


def is_number_token(value: float) -> bool:
    """Return True if ``value`` is an aws-cdk-lib number token (a parameter, an import...)."""
    if not isinstance(value, float):
        return False
    bits: int = struct.unpack("<Q", struct.pack("<d", value))[0]
    return bits >> 48 == _DOUBLE_TOKEN_MARKER


def _token_error(setting: str) -> SafeQueueConfigError:
    return SafeQueueConfigError(
        f"{setting} is an unresolved token; safe_queue needs its value at synth time to"
        " derive and check the other settings. Fix: pass a concrete value, e.g."
        " Duration.seconds(180) or 5, instead of a parameter or an imported value."
    )


def whole_seconds(setting: str, value: Duration) -> int:
    """Return ``value`` in whole seconds, refusing tokens and fractions.

    Examples
    --------
    >>> from aws_cdk import Duration
    >>> whole_seconds("function_timeout", Duration.minutes(3))
    180
    """
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
    """Return ``value`` as an int, refusing tokens and fractions."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise SafeQueueConfigError(f"{setting} is {value!r}; it must be a whole number.")
    if is_number_token(value):
        raise _token_error(setting)
    if value != int(value):
        raise SafeQueueConfigError(f"{setting} is {value}; it must be a whole number.")
    return int(value)
