"""The error every surface raises for a configuration it refuses (no CDK import)."""

from __future__ import annotations

__all__ = ["SafeQueueConfigError"]


class SafeQueueConfigError(ValueError):
    """A setting AWS would reject, or that would let messages be duplicated or lost.

    The message names the setting, the value given, what is allowed, and the fix.
    """


# Shown (tracebacks, reprs, docs) under its public path, not this private module's.
SafeQueueConfigError.__module__ = "safe_queue"
