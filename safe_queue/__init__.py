"""safe_queue: SQS -> Lambda consumers that cannot process a message twice by misconfiguration.

``SafeQueueConsumer`` derives the queue's settings from the consuming function;
``derive_visibility_timeout`` is the formula on its own; ``SafeQueueChecks`` is an Aspect
that checks every SQS -> Lambda mapping of an app, however it was built;
``SafeQueueConfigRule`` keeps checking a live account with AWS Config.

The names are resolved lazily (PEP 562), so ``import safe_queue.live`` or
``import safe_queue.engine`` never loads aws_cdk: the AWS Config rule's function and the
command line run without it.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from safe_queue._validation import SafeQueueConfigError
    from safe_queue.cdk.config_rule import SafeQueueConfigRule
    from safe_queue.checks import SafeQueueChecks
    from safe_queue.consumer import SafeQueueConsumer, derive_visibility_timeout

__all__ = [
    "SafeQueueChecks",
    "SafeQueueConfigError",
    "SafeQueueConfigRule",
    "SafeQueueConsumer",
    "derive_visibility_timeout",
]

__version__ = "0.1.0"

_LAZY = {
    "SafeQueueChecks": "safe_queue.checks",
    "SafeQueueConfigError": "safe_queue._validation",
    "SafeQueueConfigRule": "safe_queue.cdk.config_rule",
    "SafeQueueConsumer": "safe_queue.consumer",
    "derive_visibility_timeout": "safe_queue.consumer",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'safe_queue' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
