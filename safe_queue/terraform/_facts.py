"""Build the engine's facts for every SQS event source mapping of plans and states."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from safe_queue.engine.facts import (
    FunctionFacts,
    MappingFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
)
from safe_queue.report import Where
from safe_queue.terraform._attributes import (
    ACKNOWLEDGE_TAG,
    LATER,
    acknowledgements,
    boolean,
    filters,
    function_name,
    integer,
    name_in_arn,
    provisioned,
    queue_name,
    response_types,
    scaling,
)
from safe_queue.terraform._links import Resolved, resolve
from safe_queue.terraform._load import (
    AFTER_APPLY,
    Document,
    Instance,
)

__all__ = ["ACKNOWLEDGE_TAG", "TerraformMapping", "build_mappings"]


MAPPING: Final = "aws_lambda_event_source_mapping"
QUEUE: Final = "aws_sqs_queue"
REDRIVE: Final = "aws_sqs_queue_redrive_policy"
FUNCTION: Final = "aws_lambda_function"
ALIAS: Final = "aws_lambda_alias"
# Event sources that are not SQS: a mapping that refers to one of them is left out.
_OTHER_SOURCES: Final = frozenset(
    {
        "aws_kinesis_stream",
        "aws_dynamodb_table",
        "aws_msk_cluster",
        "aws_msk_serverless_cluster",
        "aws_mq_broker",
        "aws_docdb_cluster",
        "aws_docdbelastic_cluster",
    }
)
# Arguments only mappings of streams, Kafka, MQ and DocumentDB take.
_NOT_SQS: Final = (
    "starting_position",
    "topics",
    "queues",
    "self_managed_event_source",
    "amazon_managed_kafka_event_source_config",
    "self_managed_kafka_event_source_config",
    "document_db_event_source_config",
    "parallelization_factor",
    "tumbling_window_in_seconds",
)


@dataclass(frozen=True)
class TerraformMapping:
    """An SQS event source mapping of a plan or state, with its facts.

    Attributes
    ----------
    path
        The JSON file it was read from.
    address
        Its resource address (``module.workers.aws_lambda_event_source_mapping.this["a"]``):
        the mapping's id in every output.
    facts
        What the engine evaluates.
    where
        What the report shows beside each finding: ``queue`` and ``function`` (resource
        addresses, or the queue's ARN when this run does not manage it) and ``terraform``
        (``plan`` or ``state``).

    The acknowledgements (``safe-queue:acknowledge:<rule>`` tags on the mapping, its
    function and its source queue) are in ``facts.acknowledgements``.
    """

    path: str
    address: str
    facts: MappingFacts
    where: Where = field(default_factory=Where)


class _Run:
    """Every document of one run, with what links between them computed once."""

    def __init__(self, documents: Sequence[Document]) -> None:
        self.documents = list(documents)
        self._queues: dict[int, QueueFacts] = {}
        self._redrives: dict[int, tuple[dict[int, list[Instance]], list[Instance]]] = {}

    # --- finding resources by known values -------------------------------------------

    def _candidates(self, document: Document, type_: str) -> list[list[Instance]]:
        """Instances of ``type_``: the document's own first, then the other documents'."""
        others = [
            instance
            for other in self.documents
            if other is not document
            for instance in other.of_type(type_)
        ]
        return [list(document.of_type(type_)), others]

    def queue_by_arn(self, document: Document, arn: str) -> Instance | Unknown:
        """Find the queue whose ARN (or, while its ARN is unknown, whose name) ``arn`` is."""
        name = name_in_arn(arn, "sqs")
        for group in self._candidates(document, QUEUE):
            exact = [queue for queue in group if queue.get("arn") == arn]
            if len(exact) == 1:
                return exact[0]
            named = [
                queue
                for queue in group
                if queue.get("name") == name and not isinstance(queue.get("arn"), str)
            ]
            if len(exact) + len(named) > 1:
                return Unknown(
                    "the queue",
                    f"{arn} matches several queues"
                    f" ({', '.join(q.address for q in exact + named)}), so it is not linked",
                )
            if named:
                return named[0]
        return Unknown("the queue", f"{arn} is not managed in the plans or states checked")

    def queue_by_url(self, document: Document, url: str) -> Instance | None:
        queues = list(document.of_type(QUEUE))
        exact = [q for q in queues if url in (q.get("url"), q.get("id"))]
        if exact:
            return exact[0] if len(exact) == 1 else None
        name = url.rstrip("/").rsplit("/", 1)[-1]
        named = [q for q in queues if q.get("name") == name and not isinstance(q.get("url"), str)]
        return named[0] if len(named) == 1 else None

    def function_by_value(self, document: Document, value: str) -> Instance | Unknown:
        """Find the function that a known ``function_name`` names."""
        name = function_name(value)
        for group in self._candidates(document, FUNCTION):
            by_arn = [f for f in group if value in (f.get("arn"), f.get("qualified_arn"))]
            named = [f for f in group if f.get("function_name") == name]
            found = by_arn or named
            if len(found) == 1:
                return found[0]
            if len(found) > 1:
                return Unknown(
                    "the function",
                    f"{value} matches several functions"
                    f" ({', '.join(f.address for f in found)}), so it is not linked",
                )
        return Unknown("the function", f"{value} is not managed in the plans or states checked")

    # --- following references -----------------------------------------------------------

    def linked(
        self, document: Document, instance: Instance, attribute: str
    ) -> tuple[Any, Resolved | None]:
        """Return an attribute's known value, or what its expression refers to if unknown."""
        value = instance.get(attribute)
        if value is not AFTER_APPLY:
            return value, None
        resolved = resolve(
            document, instance.expression(attribute), instance.module, instance.index
        )
        return AFTER_APPLY, resolved

    def function(
        self, document: Document, instance: Instance, depth: int = 0
    ) -> Instance | Unknown:
        """Find the function a mapping (or an alias) invokes."""
        value, resolved = self.linked(document, instance, "function_name")
        if isinstance(value, str):
            if value.startswith("arn:") and ":function:" in value:
                for group in self._candidates(document, ALIAS):
                    aliases = [alias for alias in group if alias.get("arn") == value]
                    if len(aliases) == 1 and depth < 2:
                        return self.function(document, aliases[0], depth + 1)
            return self.function_by_value(document, value)
        if resolved is None:
            return Unknown("the function", f"is not set on {instance.address}")
        single = resolved.single()
        if single is not None and single.type == FUNCTION:
            return single
        if single is not None and single.type == ALIAS and depth < 2:
            return self.function(document, single, depth + 1)
        return Unknown(
            "the function",
            f"{LATER}, and function_name of {instance.address} refers to"
            f" {resolved.describe()}, not to one function",
        )

    # --- queues -----------------------------------------------------------------------

    def _redrive_targets(
        self, document: Document
    ) -> tuple[dict[int, list[Instance]], list[Instance]]:
        """``aws_sqs_queue_redrive_policy`` resources by the queue they set, and the others."""
        key = id(document)
        if key not in self._redrives:
            targets: dict[int, list[Instance]] = {}
            unlinked: list[Instance] = []
            for policy in document.of_type(REDRIVE):
                url, resolved = self.linked(document, policy, "queue_url")
                queue: Instance | None = None
                if isinstance(url, str):
                    queue = self.queue_by_url(document, url)
                elif resolved is not None:
                    single = resolved.single()
                    queue = single if single is not None and single.type == QUEUE else None
                if queue is None:
                    unlinked.append(policy)
                else:
                    targets.setdefault(id(queue), []).append(policy)
            self._redrives[key] = (targets, unlinked)
        return self._redrives[key]

    def queue(
        self, document: Document, queue: Instance, *, with_redrive: bool = True
    ) -> QueueFacts:
        """Build a queue's facts (once), its redrive policy followed to the dead-letter queue."""
        key = id(queue) * 2 + int(with_redrive)
        if key not in self._queues:
            what = f"the queue's {{}} ({queue.address})"
            self._queues[key] = QueueFacts(
                name=queue.address,
                visibility_timeout=integer(
                    queue.get("visibility_timeout_seconds"),
                    what.format("visibility_timeout_seconds"),
                ),
                retention_period=integer(
                    queue.get("message_retention_seconds"),
                    what.format("message_retention_seconds"),
                ),
                fifo=boolean(queue.get("fifo_queue"), what.format("fifo_queue")),
                redrive=self.redrive(document, queue) if with_redrive else None,
                queue_name=queue_name(queue, what.format("name")),
                content_based_deduplication=boolean(
                    queue.get("content_based_deduplication"),
                    what.format("content_based_deduplication"),
                ),
            )
        return self._queues[key]

    def redrive(self, document: Document, queue: Instance) -> RedriveFacts | Unknown | None:
        """Read the queue's redrive policy: its own, or an ``aws_sqs_queue_redrive_policy``'s."""
        targets, unlinked = self._redrive_targets(document)
        policies = targets.get(id(queue), [])
        what = f"the redrive policy of {queue.address}"
        if len(policies) > 1:
            return Unknown(
                what,
                f"is set by several resources ({', '.join(p.address for p in policies)})",
            )
        source = policies[0] if policies else queue
        value, resolved = self.linked(document, source, "redrive_policy")
        if isinstance(value, str) and value.strip():
            return self._parse_policy(document, source, value)
        if value is AFTER_APPLY and (policies or queue.expression("redrive_policy") is not None):
            return self._policy_after_apply(document, source, resolved or Resolved())
        # Not set: neither by the queue (a computed attribute left unset reads as unknown in
        # a first plan) nor by a redrive policy resource, unless one could not be linked.
        if unlinked:
            return Unknown(
                what,
                "may be set by "
                + ", ".join(p.address for p in unlinked)
                + f", whose queue_url {LATER} and could not be linked",
            )
        return None

    def _parse_policy(
        self, document: Document, source: Instance, text: str
    ) -> RedriveFacts | Unknown:
        what = f"the redrive_policy of {source.address}"
        try:
            policy = json.loads(text)
        except ValueError:
            return Unknown(what, f"is not JSON: {text!r}")
        if not isinstance(policy, dict):
            return Unknown(what, f"is {policy!r}, not a redrive policy")
        count = integer(policy.get("maxReceiveCount"), f"the maxReceiveCount in {what}")
        if count is None:
            count = Unknown(f"the maxReceiveCount in {what}", "is not set")
        target = policy.get("deadLetterTargetArn")
        dead_letter: QueueFacts | Unknown
        if not isinstance(target, str):
            dead_letter = Unknown(f"the dead-letter queue in {what}", "is not set")
        else:
            found = self.queue_by_arn(document, target)
            dead_letter = (
                self.queue(document, found, with_redrive=False)
                if isinstance(found, Instance)
                else Unknown("the dead-letter queue", found.why)
            )
        return RedriveFacts(max_receive_count=count, dead_letter_queue=dead_letter)

    def _policy_after_apply(
        self, document: Document, source: Instance, resolved: Resolved
    ) -> RedriveFacts | Unknown:
        what = f"the redrive_policy of {source.address}"
        if not resolved.instances and not resolved.others:
            return Unknown(what, LATER)
        single = resolved.single()
        if single is None or single.type != QUEUE:
            return Unknown(
                what,
                f"{LATER}, and it refers to {resolved.describe()}, not to one dead-letter queue",
            )
        return RedriveFacts(
            max_receive_count=Unknown(
                f"the maxReceiveCount in {what}",
                f"{LATER} (the policy's JSON holds the ARN of {single.address}; a state, or a"
                " plan once the queues exist, has it)",
            ),
            dead_letter_queue=self.queue(document, single, with_redrive=False),
        )

    # --- mappings ---------------------------------------------------------------------

    def source(self, document: Document, mapping: Instance) -> Instance | Unknown | None:
        """Find the mapping's source queue; ``None`` when the source is not an SQS queue."""
        value, resolved = self.linked(document, mapping, "event_source_arn")
        if isinstance(value, str):
            if name_in_arn(value, "sqs") is None:
                return None
            return self.queue_by_arn(document, value)
        if resolved is None:
            return None  # no event_source_arn: a self-managed Kafka source
        single = resolved.single()
        if single is not None and single.type == QUEUE:
            return single
        if resolved.instances and all(i.type in _OTHER_SOURCES for i in resolved.instances):
            return None
        if any(
            mapping.get(argument) not in (AFTER_APPLY, None) and mapping.get(argument)
            for argument in _NOT_SQS
        ):
            return None  # starting_position, topics...: a stream, Kafka, MQ or DocumentDB
        return Unknown(
            "the queue",
            f"{LATER}, and event_source_arn refers to {resolved.describe()}, not to one queue",
        )

    def mapping(self, document: Document, mapping: Instance) -> TerraformMapping | None:
        queue_found = self.source(document, mapping)
        if queue_found is None:
            return None
        function_found = self.function(document, mapping)
        notes: list[str] = []
        if mapping.get("enabled") is False:
            notes.append("The mapping is disabled (enabled = false); checked as if enabled.")
        queue: QueueFacts | Unknown = (
            self.queue(document, queue_found) if isinstance(queue_found, Instance) else queue_found
        )
        function: FunctionFacts | Unknown = (
            self.function_facts(document, function_found)
            if isinstance(function_found, Instance)
            else function_found
        )
        facts = MappingFacts(
            queue=queue,
            function=function,
            name=mapping.address,
            batch_size=integer(mapping.get("batch_size"), "the batch_size"),
            batching_window=integer(
                mapping.get("maximum_batching_window_in_seconds"),
                "the maximum_batching_window_in_seconds",
            ),
            report_batch_item_failures=response_types(mapping),
            max_concurrency=scaling(mapping),
            has_filters=filters(mapping),
            notes=tuple(notes),
            provisioned=provisioned(mapping),
            acknowledgements=acknowledgements(
                document,
                [mapping, *(f for f in (function_found, queue_found) if isinstance(f, Instance))],
            ),
        )
        source_arn = mapping.get("event_source_arn")
        where = Where(
            queue=(
                queue_found.address
                if isinstance(queue_found, Instance)
                else source_arn
                if isinstance(source_arn, str)
                else None
            ),
            function=function_found.address if isinstance(function_found, Instance) else None,
            terraform=document.kind,
        )
        return TerraformMapping(
            path=document.path, address=mapping.address, facts=facts, where=where
        )

    @staticmethod
    def function_facts(document: Document, function: Instance) -> FunctionFacts:
        what = f"the function's {{}} ({function.address})"
        reserved = integer(
            function.get("reserved_concurrent_executions"),
            what.format("reserved_concurrent_executions"),
        )
        return FunctionFacts(
            name=function.address,
            timeout=integer(function.get("timeout"), what.format("timeout")),
            # -1, the provider's default, is "no reserved concurrency"
            reserved_concurrency=None if isinstance(reserved, int) and reserved < 0 else reserved,
            # one function, one key: its SQS mappings share its reserved concurrency
            key=f"{document.path}::{function.address}",
        )


def build_mappings(documents: Sequence[Document]) -> list[TerraformMapping]:
    """Every SQS event source mapping of ``documents`` (read as one run), with its facts."""
    run = _Run(documents)
    checked: list[TerraformMapping] = []
    for document in documents:
        for instance in document.of_type(MAPPING):
            mapping = run.mapping(document, instance)
            if mapping is not None:
                checked.append(mapping)
    return checked
