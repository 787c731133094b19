"""Turning props into plain numbers, and refusing the ones AWS would reject."""

from __future__ import annotations

from dataclasses import dataclass

from aws_cdk import Duration, Token

from safe_queue.rules import Finding


class SafeQueueConfigError(ValueError):
    """A prop that AWS would reject, or that would let messages be duplicated or lost.

    The message names the setting, the value given, the allowed range and the fix.
    """


def whole_seconds(setting: str, value: Duration) -> int:
    """Return ``value`` in whole seconds, refusing tokens and fractions.

    Examples
    --------
    >>> from aws_cdk import Duration
    >>> whole_seconds("function_timeout", Duration.minutes(3))
    180
    """
    if value.is_unresolved():
        raise SafeQueueConfigError(
            f"{setting} is an unresolved token ({value}); safe_queue needs its value at synth"
            " time to derive and check the other settings. Fix: pass a concrete Duration,"
            " e.g. Duration.seconds(180), instead of a parameter or an imported value."
        )
    seconds = value.to_seconds(integral=False)
    if seconds != int(seconds):
        raise SafeQueueConfigError(
            f"{setting} is {seconds} s; AWS takes whole seconds. Fix: round it, e.g."
            f" Duration.seconds({int(seconds) + 1})."
        )
    return int(seconds)


def plain_number(setting: str, value: int) -> int:
    """Return ``value`` unchanged, refusing unresolved tokens."""
    if Token.is_unresolved(value):
        raise SafeQueueConfigError(
            f"{setting} is an unresolved token; safe_queue needs its value at synth time to"
            " check it against AWS's limits. Fix: pass a plain int."
        )
    return value


@dataclass(frozen=True)
class Bound:
    """An allowed range for one setting; :meth:`check` refuses values outside it.

    Examples
    --------
    >>> Bound("batch_size", 1, 10, note="without max_batching_window").check(11)
    Traceback (most recent call last):
    ...
    safe_queue._validation.SafeQueueConfigError: batch_size is 11; allowed 1..10 without ...
    """

    setting: str
    low: int
    high: int
    unit: str = ""
    note: str = ""

    def check(self, value: int) -> int:
        """Return ``value`` if ``low <= value <= high``, else raise SafeQueueConfigError."""
        if self.low <= value <= self.high:
            return value
        note = f" {self.note}" if self.note else ""
        raise SafeQueueConfigError(
            f"{self.setting} is {value}{self.unit}; allowed {self.low}..{self.high}{self.unit}"
            f"{note}."
        )


def raise_if_error(finding: Finding | None) -> None:
    """Raise a rule's error finding as :class:`SafeQueueConfigError`."""
    if finding is not None and finding.level.value == "error":
        raise SafeQueueConfigError(f"{finding.message} [{finding.rule_id}]")
