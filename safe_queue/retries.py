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

Importing this module imports no boto3 or botocore; :func:`client_config` does.

Examples
--------
>>> settings("hook").max_attempts, settings("hook").mode
(3, 'standard')
>>> settings("audit").read_timeout
20
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from botocore.config import Config

__all__ = ["CALLERS", "Caller", "RetrySettings", "client_config", "settings"]

Caller = Literal["audit", "config-rule", "hook", "redrive", "heartbeat", "backoff"]


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
