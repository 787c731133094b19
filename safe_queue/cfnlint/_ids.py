"""safe-queue's cfn-lint rule ids, written once: engine rule id -> cfn-lint number.

cfn-lint ids are a letter for the level (``E`` error, ``W`` warning, ``I`` informational)
and four digits; cfn-lint reserves ``9xxx`` for users' rules and uses none of it itself.
safe-queue takes the block 9500-9599:

========= ==========================================================================
numbers   what
========= ==========================================================================
9500-9509 the module's own: ``E9500`` the template could not be read,
          ``I9501`` a finding acknowledged in the template
9510-9539 AWS's limits (``kind="aws-limit"``): AWS rejects the configuration
9540-9579 guidance (``kind="guidance"``): AWS accepts it, messages are duplicated or lost
9580-9589 drift (``kind="drift"``)
9590-9599 the engine's own (``safe-queue:unchecked``)
========= ==========================================================================

A rule keeps its number for good: a new rule takes the next free number of its block, a
removed rule's number is not reused. The letter is the finding's level, so a rule that gives
errors and warnings (``safe-queue:dead-letter-retention-too-short``) has two cfn-lint ids
with one number, ``E9544`` and ``W9544``.

Examples
--------
>>> from safe_queue.engine import Level
>>> cfn_lint_id("safe-queue:visibility-below-function-timeout", Level.ERROR)
'E9540'
>>> cfn_lint_ids("safe-queue:dead-letter-retention-too-short")
('E9544', 'W9544')
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

from safe_queue.engine import RULES, Level, rule

__all__ = [
    "ACKNOWLEDGED",
    "BLOCKS",
    "LETTERS",
    "NUMBERS",
    "UNREADABLE",
    "cfn_lint_id",
    "cfn_lint_ids",
]

UNREADABLE: Final = "E9500"
"""The template could not be read by safe-queue (the message says why, as ``check`` does)."""
ACKNOWLEDGED: Final = "I9501"
"""A finding that an acknowledgement in the template covers (the message has the reason)."""

LETTERS: Final = MappingProxyType({Level.ERROR: "E", Level.WARNING: "W", Level.INFO: "I"})
"""A finding's level -> the letter of its cfn-lint id."""

BLOCKS: Final = MappingProxyType(
    {
        "module": range(9500, 9510),
        "aws-limit": range(9510, 9540),
        "guidance": range(9540, 9580),
        "drift": range(9580, 9590),
        "engine": range(9590, 9600),
    }
)
"""The numbers of each kind of rule (``Rule.kind``), and of the module's own ids."""

NUMBERS: Final = MappingProxyType(
    {
        # AWS's limits
        "safe-queue:visibility-timeout-out-of-range": 9510,
        "safe-queue:retention-period-out-of-range": 9511,
        "safe-queue:max-receive-count-out-of-range": 9512,
        "safe-queue:dead-letter-queue-type-mismatch": 9513,
        "safe-queue:content-based-deduplication-on-standard-queue": 9514,
        "safe-queue:queue-name-invalid": 9515,
        "safe-queue:function-timeout-out-of-range": 9516,
        "safe-queue:batch-size-out-of-range": 9517,
        "safe-queue:batching-window-out-of-range": 9518,
        "safe-queue:batching-window-on-fifo": 9519,
        "safe-queue:max-concurrency-out-of-range": 9520,
        "safe-queue:provisioned-pollers-out-of-range": 9521,
        "safe-queue:provisioned-mode-with-max-concurrency": 9522,
        # guidance
        "safe-queue:visibility-below-function-timeout": 9540,
        "safe-queue:visibility-below-guidance": 9541,
        "safe-queue:no-dead-letter-queue": 9542,
        "safe-queue:max-receive-count-below-guidance": 9543,
        "safe-queue:dead-letter-retention-too-short": 9544,
        "safe-queue:retention-below-retry-budget": 9545,
        "safe-queue:no-report-batch-item-failures": 9546,
        "safe-queue:reserved-concurrency-without-max-concurrency": 9547,
        "safe-queue:max-concurrency-above-reserved-concurrency": 9548,
        "safe-queue:max-concurrency-sum-above-reserved-concurrency": 9549,
        "safe-queue:filter-deletes-unmatched": 9550,
        # drift
        "safe-queue:function-timeout-changed": 9580,
        # the engine's own
        "safe-queue:unchecked": 9590,
    }
)
"""Every engine rule id -> its cfn-lint number (the one place they are written)."""

_MISSING = [entry.id for entry in RULES if entry.id not in NUMBERS]
if _MISSING:  # a new engine rule without a number: refuse to load rather than drop findings
    raise ImportError(
        f"safe_queue.cfnlint: engine rule(s) {', '.join(_MISSING)} have no cfn-lint number."
        " Fix: add them to NUMBERS in safe_queue/cfnlint/_ids.py (next free number of the"
        " rule's block)."
    )


def cfn_lint_id(rule_id: str, level: Level) -> str:
    """Return the cfn-lint id of ``rule_id``'s findings at ``level``.

    Raises
    ------
    KeyError
        ``rule_id`` is not an engine rule.
    """
    return f"{LETTERS[level]}{NUMBERS[rule_id]}"


def cfn_lint_ids(rule_id: str) -> tuple[str, ...]:
    """Return every cfn-lint id of ``rule_id``: one per level it gives, the most serious first.

    Raises
    ------
    KeyError
        ``rule_id`` is not an engine rule.
    """
    return tuple(cfn_lint_id(rule_id, level) for level in rule(rule_id).levels)
