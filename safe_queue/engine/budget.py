"""The retry budget: how long a message that keeps failing can stay in its source queue.

Pure arithmetic, in whole seconds, shared by the rules (``retention-below-retry-budget``),
the construct (its age alarm, ``max_time_to_dead_letter``) and the handler helper
:class:`safe_queue.runtime.FailureBackoff`, so that none of them can disagree.

Without a backoff each failed receive hides the message for the queue's visibility timeout
``V``: the message reaches the dead-letter queue after at most ``maxReceiveCount x V``.

With a failure backoff (base ``b``, cap ``c``), the handler sets a failed record's
visibility to ``min(c, b x 2^(k-1))`` on its ``k``-th receive, counted from the moment it
reports the failure, which is at most ``W + T`` after the receive (batching window and
function timeout). When the handler cannot (it timed out, the call failed) the queue's
``V`` applies. So receive ``k`` hides the message for at most
``max(V, W + T + min(c, b x 2^(k-1)))``, and the budget is the sum over the receives.

Examples
--------
>>> backoff_delay(base=30, cap=900, receive_count=1), backoff_delay(30, 900, 6)
(30, 900)
>>> time_to_dead_letter(visibility_timeout=1082, max_receive_count=5)
5410
>>> time_to_dead_letter(visibility_timeout=1082, max_receive_count=5, function_timeout=180,
...     batching_window=2, backoff_base=30, backoff_cap=900)
5410
>>> time_to_dead_letter(visibility_timeout=366, max_receive_count=5, function_timeout=60,
...     batching_window=6, backoff_base=60, backoff_cap=3600)
2670
"""

from __future__ import annotations

import math

from safe_queue.engine import limits

__all__ = ["backoff_delay", "recommended_visibility_timeout", "time_to_dead_letter"]


def backoff_delay(base: float, cap: float, receive_count: int) -> int:
    """Return the backoff ceiling for a record's ``receive_count``-th receive, whole seconds.

    ``min(cap, base x 2^(receive_count - 1))``, rounded up; a receive count below 1 (a
    record without ``ApproximateReceiveCount``) counts as 1.
    """
    exponent = max(receive_count, 1) - 1
    if exponent > 64 or base * 2.0**exponent >= cap:  # 2**64 x base passes any cap
        return math.ceil(cap)
    return math.ceil(base * 2.0**exponent)


def time_to_dead_letter(
    *,
    visibility_timeout: int,
    max_receive_count: int,
    function_timeout: int = 0,
    batching_window: int = 0,
    backoff_base: float | None = None,
    backoff_cap: float | None = None,
) -> int:
    """Return the worst case, in seconds, before a failing message reaches the dead-letter queue.

    ``max_receive_count x visibility_timeout`` without a backoff; with one (both
    ``backoff_base`` and ``backoff_cap``), the sum over the receives of
    ``max(visibility_timeout, batching_window + function_timeout + delay)`` (see the
    module's docstring).
    """
    if backoff_base is None or backoff_cap is None:
        return max_receive_count * visibility_timeout
    return sum(
        max(
            visibility_timeout,
            batching_window + function_timeout + backoff_delay(backoff_base, backoff_cap, k),
        )
        for k in range(1, max_receive_count + 1)
    )


def recommended_visibility_timeout(function_timeout: int, batching_window: int = 0) -> int:
    """Return AWS's recommended visibility timeout: 6 x function timeout + batching window.

    Lambda Developer Guide, "Using Lambda with Amazon SQS"; every surface derives and
    judges the visibility timeout with this.

    Examples
    --------
    >>> recommended_visibility_timeout(180, 2)
    1082
    """
    return limits.VISIBILITY_MULTIPLIER * function_timeout + batching_window
