"""safe_queue: SQS -> Lambda consumers that cannot process a message twice by misconfiguration.

``SafeQueueConsumer`` derives the queue's settings from the consuming function;
``derive_visibility_timeout`` is the formula on its own; ``SafeQueueChecks`` is an Aspect
that checks every SQS -> Lambda mapping of an app, however it was built.
"""

from safe_queue._validation import SafeQueueConfigError
from safe_queue.checks import SafeQueueChecks
from safe_queue.consumer import SafeQueueConsumer, derive_visibility_timeout

__all__ = [
    "SafeQueueChecks",
    "SafeQueueConfigError",
    "SafeQueueConsumer",
    "derive_visibility_timeout",
]

__version__ = "0.2.0.dev0"
