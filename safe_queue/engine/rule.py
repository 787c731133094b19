"""What a rule is: one declaration (id, levels, words, AWS source, examples, check).

Each rule lives in a module of its own under :mod:`safe_queue.engine.rules` and declares
one :class:`Rule`. Its ``check`` is a pure function over plain values (whole seconds,
counts, flags; ``None`` for an absent setting) that returns a :class:`Violation` (what it
found and the fix, in words) or ``None``; :meth:`Rule.finding` turns a violation into the
:class:`Finding` every surface reports, with the rule's id and level. The docs' rules page,
the SARIF rule list, the CDK plugin's metadata, the cfn-lint rules and the tests all read
these declarations, so none of them can disagree with the check.

Examples
--------
>>> from safe_queue.engine import rule
>>> declared = rule("safe-queue:no-dead-letter-queue")
>>> declared.level.value, declared.inputs
('warning', ('has_dead_letter_queue',))
>>> declared.finding(declared.check(has_dead_letter_queue=False)).message
'Queue has no RedrivePolicy (no dead-letter queue): ... Fix: add a dead-letter queue ...'
"""

from __future__ import annotations

import enum
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final, Literal

if TYPE_CHECKING:
    from safe_queue.engine.example import Example
    from safe_queue.engine.facts import Acknowledgement

__all__ = [
    "DOCS_URL",
    "PREFIX",
    "UNCHECKED",
    "Finding",
    "Kind",
    "Level",
    "Role",
    "Rule",
    "Violation",
]

PREFIX: Final = "safe-queue:"
"""Every rule id starts with this."""
UNCHECKED: Final = f"{PREFIX}unchecked"
"""The engine's own finding for values it could not know."""
DOCS_URL: Final = "https://safe-queue.github.io/safe_queue/rules/"
"""The rules reference; each rule has an anchor there (its id without the prefix)."""

Role = Literal["mapping", "queue", "dead_letter_queue", "function"]
"""Which resource of a mapping a property belongs to."""
Kind = Literal["aws-limit", "guidance", "drift", "engine"]
"""``aws-limit``: AWS rejects the configuration; ``guidance``: AWS accepts it, but messages
are duplicated or lost; ``drift``: a value changed after it was derived; ``engine``: the
engine's own ``unchecked``."""


class Level(enum.Enum):
    """How serious a finding is: errors fail ``cdk synth`` and, by default, the CLI."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        """2 for errors, 1 for warnings, 0 for infos (for ``--fail-on``)."""
        return {"error": 2, "warning": 1, "info": 0}[self.value]


@dataclass(frozen=True)
class Violation:
    """What a rule's check found.

    Attributes
    ----------
    found
        The values found and why they break the rule, naming AWS's attributes.
    fix
        What to change, with the numbers, and possible within AWS's limits.
    level
        The level of this violation; ``None``: the rule's (first) level.
    """

    found: str
    fix: str
    level: Level | None = None


@dataclass(frozen=True)
class Finding:
    """One broken rule, as every surface reports it.

    Attributes
    ----------
    rule_id
        Stable identifier, prefixed ``safe-queue:``.
    level
        :class:`Level` of this finding (a rule may give a warning or an error).
    message
        The attributes and values found, the rule, and ``Fix: ...``.
    acknowledged
        The acknowledgement that covers it, if any: it is still reported, but never
        counts towards ``--fail-on`` or fails a synth.
    """

    rule_id: str
    level: Level
    message: str
    acknowledged: Acknowledgement | None = None


@dataclass(frozen=True)
class Rule:
    """One rule, declared once.

    Attributes
    ----------
    id
        Stable identifier (``safe-queue:...``); renaming one is a breaking change.
    levels
        The levels its findings can have, the most serious first.
    kind
        See :data:`Kind`.
    summary
        What it catches, in one sentence.
    why
        Why that loses or duplicates messages, or why AWS rejects it.
    fix
        What to change, in general (each finding states it with its numbers).
    source_url
        The AWS documentation page the rule rests on.
    compliant, non_compliant
        Examples: facts that pass it, and facts that break it (and no other rule).
    check
        The pure function; ``None`` for ``safe-queue:unchecked``, which the engine itself
        gives when an input is unknown.
    properties
        The properties it reads, per resource role (``("queue",
        "Properties/VisibilityTimeout")``): where a surface points at a finding.
    """

    id: str
    levels: tuple[Level, ...]
    kind: Kind
    summary: str
    why: str
    fix: str
    source_url: str
    compliant: Example | None = None
    non_compliant: Example | None = None
    check: Callable[..., Violation | None] | None = None
    properties: tuple[tuple[Role, str], ...] = field(default=())

    @property
    def level(self) -> Level:
        """The most serious level it gives."""
        return self.levels[0]

    @functools.cached_property
    def inputs(self) -> tuple[str, ...]:
        """The engine inputs the check reads: its keyword arguments (read once)."""
        if self.check is None:
            return ()
        return tuple(inspect.signature(self.check).parameters)

    @property
    def name(self) -> str:
        """The id without the ``safe-queue:`` prefix (the anchor of its docs section)."""
        return self.id.removeprefix(PREFIX)

    @property
    def docs_url(self) -> str:
        """Its section of the rules reference."""
        return f"{DOCS_URL}#{self.name}"

    @property
    def tags(self) -> tuple[str, ...]:
        """Tags for SARIF and cfn-lint: the services, its kind and its levels."""
        return ("aws", "sqs", "lambda", self.kind, *(level.value for level in self.levels))

    def finding(self, violation: Violation) -> Finding:
        """Return the finding for what the check found."""
        level = violation.level or self.level
        if level not in self.levels:
            raise ValueError(f"{self.id} gives {[v.value for v in self.levels]}, not {level}")
        return Finding(self.id, level, f"{violation.found} Fix: {violation.fix}")
