"""Build the engine's facts for every SQS event source mapping of plans and states."""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from safe_queue.engine import RULES, limits
from safe_queue.engine.acknowledge import acknowledgement
from safe_queue.engine.facts import (
    Acknowledgement,
    FunctionFacts,
    MappingFacts,
    ProvisionedFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
)
from safe_queue.terraform._links import Resolved, resolve
from safe_queue.terraform._load import (
    AFTER_APPLY,
    Document,
    Instance,
    TerraformError,
    has_unknown_inside,
)

__all__ = ["ACKNOWLEDGE_TAG", "TerraformMapping", "build_mappings"]

ACKNOWLEDGE_TAG: Final = "safe-queue:acknowledge:"
"""Tag key prefix: ``safe-queue:acknowledge:<rule>`` = ``<reason>`` acknowledges a finding."""

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
_LATER = "is known only after apply"
_RULE_IDS: Final = frozenset(entry.id for entry in RULES)


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
    extra
        What the report shows beside each finding: ``queue`` and ``function`` (resource
        addresses, or the queue's ARN when this run does not manage it) and ``terraform``
        (``plan`` or ``state``).

    The acknowledgements (``safe-queue:acknowledge:<rule>`` tags on the mapping, its
    function and its source queue) are in ``facts.acknowledgements``.
    """

    path: str
    address: str
    facts: MappingFacts
    extra: dict[str, Any] = field(default_factory=dict)


def _integer(value: Any, what: str) -> int | Unknown | None:
    if value is AFTER_APPLY:
        return Unknown(what, _LATER)
    if value is None:
        return None
    if isinstance(value, bool):
        return Unknown(what, f"is {value!r}, not a number")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value)
        except ValueError:
            pass
    return Unknown(what, f"is {value!r}, not a whole number")


def _name_in_arn(arn: str, service: str) -> str | None:
    """Return the resource name of an ``arn:<partition>:<service>:...`` ARN."""
    parts = arn.split(":")
    if len(parts) < 6 or parts[0] != "arn" or parts[2] != service:
        return None
    if service == "lambda":
        return parts[6] if len(parts) > 6 and parts[5] == "function" else None
    return parts[5]


def _function_name(value: str) -> str:
    """Return a function's name from any form Lambda accepts (name, ARN, partial, qualified).

    Examples
    --------
    >>> [_function_name(v) for v in ("render", "render:live",
    ...     "arn:aws:lambda:eu-west-1:123456789012:function:render:live",
    ...     "123456789012:function:render")]
    ['render', 'render', 'render', 'render']
    """
    parts = value.split(":")
    if value.startswith("arn:") and len(parts) > 6:
        return parts[6]
    if len(parts) >= 3 and parts[1] == "function":
        return parts[2]
    return parts[0]


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
        name = _name_in_arn(arn, "sqs")
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
        name = _function_name(value)
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
            f"{_LATER}, and function_name of {instance.address} refers to"
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
                visibility_timeout=_integer(
                    queue.get("visibility_timeout_seconds"),
                    what.format("visibility_timeout_seconds"),
                ),
                retention_period=_integer(
                    queue.get("message_retention_seconds"),
                    what.format("message_retention_seconds"),
                ),
                fifo=_boolean(queue.get("fifo_queue"), what.format("fifo_queue")),
                redrive=self.redrive(document, queue) if with_redrive else None,
                queue_name=_queue_name(queue, what.format("name")),
                content_based_deduplication=_boolean(
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
                + f", whose queue_url {_LATER} and could not be linked",
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
        count = _integer(policy.get("maxReceiveCount"), f"the maxReceiveCount in {what}")
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
            return Unknown(what, _LATER)
        single = resolved.single()
        if single is None or single.type != QUEUE:
            return Unknown(
                what,
                f"{_LATER}, and it refers to {resolved.describe()}, not to one dead-letter queue",
            )
        return RedriveFacts(
            max_receive_count=Unknown(
                f"the maxReceiveCount in {what}",
                f"{_LATER} (the policy's JSON holds the ARN of {single.address}; a state, or a"
                " plan once the queues exist, has it)",
            ),
            dead_letter_queue=self.queue(document, single, with_redrive=False),
        )

    # --- mappings ---------------------------------------------------------------------

    def source(self, document: Document, mapping: Instance) -> Instance | Unknown | None:
        """Find the mapping's source queue; ``None`` when the source is not an SQS queue."""
        value, resolved = self.linked(document, mapping, "event_source_arn")
        if isinstance(value, str):
            if _name_in_arn(value, "sqs") is None:
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
            f"{_LATER}, and event_source_arn refers to {resolved.describe()}, not to one queue",
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
            batch_size=_integer(mapping.get("batch_size"), "the batch_size"),
            batching_window=_integer(
                mapping.get("maximum_batching_window_in_seconds"),
                "the maximum_batching_window_in_seconds",
            ),
            report_batch_item_failures=_response_types(mapping),
            max_concurrency=_scaling(mapping),
            has_filters=_filters(mapping),
            notes=tuple(notes),
            provisioned=_provisioned(mapping),
            acknowledgements=_acknowledgements(
                document,
                [mapping, *(f for f in (function_found, queue_found) if isinstance(f, Instance))],
            ),
        )
        extra: dict[str, Any] = {
            "queue": (
                queue_found.address
                if isinstance(queue_found, Instance)
                else mapping.get("event_source_arn")
                if isinstance(mapping.get("event_source_arn"), str)
                else None
            ),
            "function": function_found.address if isinstance(function_found, Instance) else None,
            "terraform": document.kind,
        }
        return TerraformMapping(
            path=document.path, address=mapping.address, facts=facts, extra=extra
        )

    @staticmethod
    def function_facts(document: Document, function: Instance) -> FunctionFacts:
        what = f"the function's {{}} ({function.address})"
        reserved = _integer(
            function.get("reserved_concurrent_executions"),
            what.format("reserved_concurrent_executions"),
        )
        return FunctionFacts(
            name=function.address,
            timeout=_integer(function.get("timeout"), what.format("timeout")),
            # -1, the provider's default, is "no reserved concurrency"
            reserved_concurrency=None if isinstance(reserved, int) and reserved < 0 else reserved,
            # one function, one key: its SQS mappings share its reserved concurrency
            key=f"{document.path}::{function.address}",
        )


def _response_types(mapping: Instance) -> bool | Unknown | None:
    types = mapping.get("function_response_types")
    if types is AFTER_APPLY or has_unknown_inside(mapping.unknown.get("function_response_types")):
        return Unknown("the function_response_types", _LATER)
    if types is None:
        return None
    return isinstance(types, list) and limits.REPORT_BATCH_ITEM_FAILURES in types


def _block(mapping: Instance, name: str) -> tuple[dict[str, Any] | None, Any]:
    """Return a nested block's value (``scaling_config { ... }``) and its unknown marks."""
    value = mapping.get(name)
    marks = mapping.unknown.get(name)
    if value is AFTER_APPLY:
        return None, True
    block = value[0] if isinstance(value, list) and value and isinstance(value[0], dict) else None
    mark = marks[0] if isinstance(marks, list) and marks else None
    return block, mark


def _scaling(mapping: Instance) -> int | Unknown | None:
    block, marks = _block(mapping, "scaling_config")
    what = "the scaling_config's maximum_concurrency"
    if marks is True or (isinstance(marks, dict) and marks.get("maximum_concurrency") is True):
        return Unknown(what, _LATER)
    return _integer(block.get("maximum_concurrency"), what) if block else None


def _filters(mapping: Instance) -> bool | Unknown | None:
    block, marks = _block(mapping, "filter_criteria")
    if marks is True or (isinstance(marks, dict) and marks.get("filter") is True):
        return Unknown("the filter_criteria", _LATER)
    if block is None:
        return None
    filters = block.get("filter")
    return isinstance(filters, list) and len(filters) > 0


def _provisioned(mapping: Instance) -> ProvisionedFacts | Unknown | None:
    block, marks = _block(mapping, "provisioned_poller_config")
    what = "the provisioned_poller_config"
    if marks is True:
        return Unknown(what, _LATER)
    if block is None:
        return None
    marks = marks if isinstance(marks, dict) else {}

    def pollers(key: str) -> int | Unknown | None:
        argument = f"{key}_pollers"
        if marks.get(argument) is True:
            return Unknown(f"the provisioned_poller_config's {argument}", _LATER)
        return _integer(block.get(argument), f"the provisioned_poller_config's {argument}")

    return ProvisionedFacts(minimum_pollers=pollers("minimum"), maximum_pollers=pollers("maximum"))


def _boolean(value: Any, what: str) -> bool | Unknown | None:
    if value is AFTER_APPLY:
        return Unknown(what, _LATER)
    if value is None or isinstance(value, bool):
        return value
    return Unknown(what, f"is {value!r}, not true or false")


def _queue_name(queue: Instance, what: str) -> str | Unknown | None:
    """Return the queue's name; ``None`` when Terraform generates it (no ``name``)."""
    name = queue.get("name")
    if isinstance(name, str):
        return name
    expression = queue.expression("name")
    if name is AFTER_APPLY and expression is not None and "constant_value" not in expression:
        return Unknown(what, _LATER)
    # not set (or name_prefix): the provider makes a valid name, with .fifo for FIFO queues
    return None


def _tags(instance: Instance) -> dict[str, Any]:
    for attribute in ("tags_all", "tags"):
        tags = instance.get(attribute)
        if isinstance(tags, dict):
            return tags
    return {}


def _acknowledgements(document: Document, owners: list[Instance]) -> tuple[Acknowledgement, ...]:
    found: list[Acknowledgement] = []
    for owner in owners:
        for key, reason in _tags(owner).items():
            if not isinstance(key, str) or not key.startswith(ACKNOWLEDGE_TAG):
                continue
            rule_id = f"safe-queue:{key[len(ACKNOWLEDGE_TAG) :]}"
            if rule_id not in _RULE_IDS:
                raise TerraformError(
                    document.path,
                    f"{owner.address}: tag {key!r} names no safe-queue rule. Fix: write"
                    f" {ACKNOWLEDGE_TAG}<rule> with a rule of the rules reference, without its"
                    f" safe-queue: prefix (e.g. {ACKNOWLEDGE_TAG}filter-deletes-unmatched)",
                )
            if not isinstance(reason, str) or not reason.strip():
                raise TerraformError(
                    document.path,
                    f"{owner.address}: tag {key!r} has no reason. Fix: give the tag a value"
                    " that says why the finding is acceptable",
                )
            source = f"tag {key} on {owner.address}"
            found.append(acknowledgement(rule_id, reason, source=source))
    return tuple(found)


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
