"""Every rule, one module each, in the order findings are reported.

AWS's limits come first (a template that breaks one cannot be deployed at all), then the
guidance (AWS accepts it, but messages are duplicated or lost), the drift check, and the
engine's own ``safe-queue:unchecked``. Adding a rule is adding a module that declares
``RULE`` and listing it here; the docs, SARIF, the CDK plugin, the cfn-lint rules and the
tests pick it up from :data:`RULES`.

Examples
--------
>>> rule("safe-queue:visibility-below-function-timeout").level.value
'error'
>>> len(RULES) == len({entry.id for entry in RULES})
True
"""

from __future__ import annotations

from types import MappingProxyType

from safe_queue.engine.rule import Rule
from safe_queue.engine.rules import (
    batch_size_out_of_range,
    batching_window_on_fifo,
    batching_window_out_of_range,
    content_based_deduplication_on_standard_queue,
    dead_letter_queue_type_mismatch,
    dead_letter_retention_too_short,
    filter_deletes_unmatched,
    function_timeout_changed,
    function_timeout_out_of_range,
    max_concurrency_above_reserved_concurrency,
    max_concurrency_out_of_range,
    max_concurrency_sum_above_reserved_concurrency,
    max_receive_count_below_guidance,
    max_receive_count_out_of_range,
    no_dead_letter_queue,
    no_report_batch_item_failures,
    provisioned_mode_with_max_concurrency,
    provisioned_pollers_out_of_range,
    queue_name_invalid,
    reserved_concurrency_without_max_concurrency,
    retention_below_retry_budget,
    retention_period_out_of_range,
    unchecked,
    visibility_below_function_timeout,
    visibility_below_guidance,
    visibility_timeout_out_of_range,
)

__all__ = ["RULES", "rule"]

RULES: tuple[Rule, ...] = tuple(
    module.RULE
    for module in (
        # AWS's limits: the template or API call is rejected.
        visibility_timeout_out_of_range,
        retention_period_out_of_range,
        max_receive_count_out_of_range,
        dead_letter_queue_type_mismatch,
        content_based_deduplication_on_standard_queue,
        queue_name_invalid,
        function_timeout_out_of_range,
        batch_size_out_of_range,
        batching_window_out_of_range,
        batching_window_on_fifo,
        max_concurrency_out_of_range,
        provisioned_pollers_out_of_range,
        provisioned_mode_with_max_concurrency,
        # Guidance: accepted, but messages are duplicated or lost.
        visibility_below_function_timeout,
        visibility_below_guidance,
        no_dead_letter_queue,
        max_receive_count_below_guidance,
        dead_letter_retention_too_short,
        retention_below_retry_budget,
        no_report_batch_item_failures,
        reserved_concurrency_without_max_concurrency,
        max_concurrency_above_reserved_concurrency,
        max_concurrency_sum_above_reserved_concurrency,
        filter_deletes_unmatched,
        # Drift, and the engine's own.
        function_timeout_changed,
        unchecked,
    )
)
"""Every rule, in the order findings are reported."""

_BY_ID = MappingProxyType({entry.id: entry for entry in RULES})


def rule(rule_id: str) -> Rule:
    """Return the declaration of ``rule_id``.

    Raises
    ------
    KeyError
        ``rule_id`` is not a rule, with the known ids.
    """
    try:
        return _BY_ID[rule_id]
    except KeyError:
        raise KeyError(f"{rule_id!r} is not a safe-queue rule; known: {sorted(_BY_ID)}") from None
