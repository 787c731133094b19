"""The botocore retry and timeout settings of every AWS client safe-queue makes, per caller.

Each caller has a time budget of its own, so each gets an explicit retry mode, number of
attempts and connect/read timeouts instead of botocore's defaults (legacy mode, 5
attempts, 60 s timeouts), which would be wrong for all of them:

``audit``
    A person or a CI job waits; completeness matters more than speed. Adaptive mode (it
    also slows the client down when AWS throttles), 10 attempts.
``config-rule``
    The AWS Config rule's function: the same reads as the audit, inside a Lambda timeout
    of minutes. Adaptive, 10 attempts.
``hook``
    A CloudFormation hook gets 30 s per invocation in all. Standard mode, 3 attempts,
    short timeouts: a lookup that cannot finish in time must fail fast so the handler can
    still answer ``InternalFailure`` before CloudFormation gives up on it.
``redrive``
    A person waits for one call at a time. Standard mode, 5 attempts.
``heartbeat`` and ``backoff``
    Inside a message handler: a slow call delays the batch. Standard mode, 3 attempts,
    short timeouts; a failure only means the message comes back at its queue's own time.

What a failing call costs follows from these numbers and botocore's standard backoff
(botocore 1.44: before attempt *i + 1* it sleeps ``rand(0, 1) * min(base * 2**(i - 1), 20)``
seconds, ``base`` being 1 s after a throttling error and 50 ms after any other).
:meth:`RetrySettings.worst_case_seconds` is that cost's upper bound: every attempt timing
out, every sleep at its maximum. botocore's retry quota (per client: 500 tokens, 14 per
retry of a server error or timeout, 5 per retry of a throttling error, given back on
success) stops the retries of a client whose calls keep failing, so that a service in
trouble makes a run end early and incomplete, not slowly.

Importing this module imports no boto3 or botocore; :func:`client_config` does.

Examples
--------
>>> settings("hook").max_attempts, settings("hook").mode
(3, 'standard')
>>> settings("audit").read_timeout
20
>>> settings("hook").worst_case_seconds()  # the hook's 30 s per invocation, with room
24.0
>>> settings("audit").max_backoff_seconds(throttled=False)  # 9 sleeps after 5xx answers
25.55
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from botocore.config import Config

__all__ = [
    "BACKOFF_BASE_OTHER",
    "BACKOFF_BASE_THROTTLED",
    "BACKOFF_CAP",
    "CALLERS",
    "Caller",
    "RetrySettings",
    "client_config",
    "settings",
]

Caller = Literal["audit", "config-rule", "hook", "redrive", "heartbeat", "backoff"]

BACKOFF_CAP: Final = 20.0
"""botocore's longest sleep between two attempts (``ExponentialBackoff._MAX_BACKOFF``)."""
BACKOFF_BASE_THROTTLED: Final = 1.0
"""botocore's first sleep, at most, after a throttling error (seconds)."""
BACKOFF_BASE_OTHER: Final = 0.05
"""botocore's first sleep, at most, after a server error or a timeout (seconds)."""


@dataclass(frozen=True)
class RetrySettings:
    """One caller's botocore settings.

    Attributes
    ----------
    mode
        botocore retry mode: ``standard`` or ``adaptive`` (standard plus client-side rate
        limiting after throttling).
    max_attempts
        Attempts in all, the first included.
    connect_timeout, read_timeout
        Seconds per attempt.
    """

    mode: Literal["standard", "adaptive"]
    max_attempts: int
    connect_timeout: int
    read_timeout: int

    def max_backoff_seconds(self, *, throttled: bool = True) -> float:
        """Return the longest total sleep between this caller's attempts of one call."""
        base = BACKOFF_BASE_THROTTLED if throttled else BACKOFF_BASE_OTHER
        total = sum(min(base * 2.0**i, BACKOFF_CAP) for i in range(self.max_attempts - 1))
        return round(float(total), 3)

    def worst_case_seconds(self) -> float:
        """Return the upper bound of one call: every attempt timing out, the longest sleeps."""
        timeouts = self.max_attempts * (self.connect_timeout + self.read_timeout)
        return float(timeouts + self.max_backoff_seconds(throttled=True))


CALLERS: Final[dict[Caller, RetrySettings]] = {
    "audit": RetrySettings("adaptive", 10, 5, 20),
    "config-rule": RetrySettings("adaptive", 10, 5, 20),
    "hook": RetrySettings("standard", 3, 2, 5),
    "redrive": RetrySettings("standard", 5, 5, 20),
    "heartbeat": RetrySettings("standard", 3, 2, 5),
    "backoff": RetrySettings("standard", 3, 2, 5),
}
"""Every caller's settings (see the module's docstring for the reasons)."""


def settings(caller: Caller) -> RetrySettings:
    """Return ``caller``'s settings.

    Raises
    ------
    KeyError
        ``caller`` is not one of :data:`CALLERS`, with the known ones.
    """
    try:
        return CALLERS[caller]
    except KeyError:
        raise KeyError(f"{caller!r} is not a safe-queue caller; known: {sorted(CALLERS)}") from None


def client_config(caller: Caller, *, max_pool_connections: int = 10) -> Config:
    """Return the ``botocore.config.Config`` for ``caller``'s clients.

    Parameters
    ----------
    caller
        Who makes the client (one of :data:`CALLERS`).
    max_pool_connections
        HTTP connections per client (one per worker thread that shares it).
    """
    from botocore.config import Config

    chosen = settings(caller)
    # botocore's ``max_attempts`` counts the retries only (it adds one); ``total_max_attempts``
    # counts every attempt, the first included, as RetrySettings.max_attempts does.
    return Config(
        retries={"mode": chosen.mode, "total_max_attempts": chosen.max_attempts},
        connect_timeout=chosen.connect_timeout,
        read_timeout=chosen.read_timeout,
        max_pool_connections=max_pool_connections,
        user_agent_extra=f"safe-queue-{caller}",
    )
