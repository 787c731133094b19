"""Checking a handler helper's settings: seconds, and a backoff's base and cap."""

from __future__ import annotations

import math

from safe_queue.engine.limits import VISIBILITY_TIMEOUT_MAX

__all__ = ["check_base_and_cap", "positive_seconds"]


def positive_seconds(setting: str, value: object, fix: str) -> float:
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or value <= 0
    ):
        raise ValueError(
            f"{setting}: got {value!r}; allowed: a number of seconds greater than 0. Fix: {fix}"
        )
    return float(value)


def check_base_and_cap(
    base: object, cap: object, *, names: tuple[str, str] = ("base", "cap")
) -> tuple[float, float]:
    base_name, cap_name = names
    checked_base = positive_seconds(
        base_name, base, f"set {base_name} to the first delay, e.g. 30."
    )
    checked_cap = positive_seconds(cap_name, cap, f"set {cap_name} to the longest delay, e.g. 900.")
    if checked_cap < checked_base:
        raise ValueError(
            f"{cap_name}: got {checked_cap:g} s, below {base_name} ({checked_base:g} s); "
            f"allowed: {base_name}..{VISIBILITY_TIMEOUT_MAX} s. Fix: set {cap_name} to at "
            f"least {checked_base:g}, or lower {base_name}."
        )
    if checked_cap > VISIBILITY_TIMEOUT_MAX:
        raise ValueError(
            f"{cap_name}: got {checked_cap:g} s; allowed: at most {VISIBILITY_TIMEOUT_MAX} s "
            f"(12 hours, the SQS visibility timeout maximum). Fix: set {cap_name} to "
            f"{VISIBILITY_TIMEOUT_MAX} or less."
        )
    return checked_base, checked_cap
