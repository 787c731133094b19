"""Typed facts about one SQS -> Lambda event source mapping, as an adapter found them.

An adapter (a template, the live account, the construct's own props) fills these in with
what its source says. ``None`` means *not set there*: the engine, not the adapter, applies
AWS's default for it (:func:`safe_queue.engine.evaluate.rule_inputs`). A value the adapter
cannot know (a parameter without a value, an imported queue, an access-denied call) is an
:class:`Unknown` that says what and why; rules that need it are skipped and reported
together as ``safe-queue:unchecked``, never guessed.

Examples
--------
>>> from safe_queue.engine.facts import FunctionFacts, MappingFacts, QueueFacts, RedriveFacts
>>> seed = MappingFacts(
...     queue=QueueFacts(visibility_timeout=60, redrive=RedriveFacts(
...         max_receive_count=5, dead_letter_queue=QueueFacts(retention_period=1_209_600))),
...     function=FunctionFacts(timeout=180),
...     batch_size=5, batching_window=2, report_batch_item_failures=True)
>>> seed.queue.retention_period is None  # unset: the engine applies AWS's 4 days
True
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = [
    "FunctionFacts",
    "MappingFacts",
    "QueueFacts",
    "RedriveFacts",
    "Unknown",
]


@dataclass(frozen=True)
class Unknown:
    """A value that cannot be known from this source, and why.

    Attributes
    ----------
    what
        The attribute, named as AWS names it (``the function's Timeout``).
    why
        Why it is unknown (``is a parameter without a value``), in words that end a sentence
        starting with *what*.
    """

    what: str
    why: str


@dataclass(frozen=True)
class RedriveFacts:
    """A queue's ``RedrivePolicy``: how many receives, and which dead-letter queue."""

    max_receive_count: int | Unknown
    dead_letter_queue: QueueFacts | Unknown


@dataclass(frozen=True)
class QueueFacts:
    """An SQS queue's attributes (``None``: not set, AWS's default applies).

    Attributes
    ----------
    name
        How the surface names the queue (logical id, ARN); used in messages.
    visibility_timeout
        ``VisibilityTimeout``, whole seconds.
    retention_period
        ``MessageRetentionPeriod``, whole seconds.
    fifo
        ``FifoQueue``.
    redrive
        ``RedrivePolicy``; ``None`` for a queue without a dead-letter queue.
    """

    name: str = ""
    visibility_timeout: int | Unknown | None = None
    retention_period: int | Unknown | None = None
    fifo: bool | Unknown | None = None
    redrive: RedriveFacts | Unknown | None = None


@dataclass(frozen=True)
class FunctionFacts:
    """A Lambda function's configuration (``None``: not set, AWS's default applies).

    Attributes
    ----------
    name
        How the surface names the function (logical id, ARN); used in messages.
    timeout
        ``Timeout``, whole seconds.
    reserved_concurrency
        ``ReservedConcurrentExecutions``; ``None`` when the function has none.
    """

    name: str = ""
    timeout: int | Unknown | None = None
    reserved_concurrency: int | Unknown | None = None


@dataclass(frozen=True)
class MappingFacts:
    """One SQS event source mapping, with its queue and its function.

    Attributes
    ----------
    queue
        The source queue (``EventSourceArn``).
    function
        The function (``FunctionName``; an alias or version followed to its function).
    name
        How the surface names the mapping (logical id, UUID); used in messages.
    batch_size
        ``BatchSize``.
    batching_window
        ``MaximumBatchingWindowInSeconds``.
    report_batch_item_failures
        ``FunctionResponseTypes`` contains ``ReportBatchItemFailures``.
    max_concurrency
        ``ScalingConfig.MaximumConcurrency``; ``None`` when not set.
    has_filters
        ``FilterCriteria`` has at least one filter.
    derived_function_timeout
        The function timeout a ``SafeQueueConsumer`` derived the queue from (recorded in
        the template's metadata); ``None`` for a mapping it did not build.
    """

    queue: QueueFacts | Unknown
    function: FunctionFacts | Unknown
    name: str = ""
    batch_size: int | Unknown | None = None
    batching_window: int | Unknown | None = None
    report_batch_item_failures: bool | Unknown | None = None
    max_concurrency: int | Unknown | None = None
    has_filters: bool | Unknown | None = None
    derived_function_timeout: int | None = None
    notes: tuple[str, ...] = field(default=())
    """Assumptions the adapter made (a parameter's default...), appended to messages."""
