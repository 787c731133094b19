"""The rule engine: facts about mappings in, findings out. No CDK, no boto3, no I/O.

Every surface (the construct, the CDK validation plugin, ``safe-queue check``,
``safe-queue audit``, the AWS Config rule, the CloudFormation hook, the cfn-lint rules,
the Terraform reader) builds :class:`MappingFacts` and calls :func:`evaluate_all`; the
rules (one declaration each, :data:`RULES`), AWS's limits and its defaults live here once.

Examples
--------
>>> from safe_queue.engine import FunctionFacts, MappingFacts, QueueFacts, evaluate
>>> [f.rule_id for f in evaluate(MappingFacts(QueueFacts(visibility_timeout=30),
...     FunctionFacts(timeout=60)))]
['safe-queue:visibility-below-function-timeout', 'safe-queue:no-dead-letter-queue', \
'safe-queue:no-report-batch-item-failures']
"""

from safe_queue.engine import limits
from safe_queue.engine.acknowledge import AcknowledgementError, acknowledgement
from safe_queue.engine.budget import (
    backoff_delay,
    recommended_visibility_timeout,
    time_to_dead_letter,
)
from safe_queue.engine.evaluate import evaluate, evaluate_all, rule_inputs
from safe_queue.engine.example import Example
from safe_queue.engine.facts import (
    Acknowledgement,
    FailureBackoffFacts,
    FunctionFacts,
    MappingFacts,
    ProvisionedFacts,
    QueueFacts,
    RedriveFacts,
    Unknown,
)
from safe_queue.engine.rule import UNCHECKED, Finding, Level, Role, Rule, Violation
from safe_queue.engine.rules import RULES, rule
from safe_queue.engine.rules.unchecked import unchecked

__all__ = [
    "RULES",
    "UNCHECKED",
    "Acknowledgement",
    "AcknowledgementError",
    "Example",
    "FailureBackoffFacts",
    "Finding",
    "FunctionFacts",
    "Level",
    "MappingFacts",
    "ProvisionedFacts",
    "QueueFacts",
    "RedriveFacts",
    "Role",
    "Rule",
    "Unknown",
    "Violation",
    "acknowledgement",
    "backoff_delay",
    "evaluate",
    "evaluate_all",
    "limits",
    "recommended_visibility_timeout",
    "rule",
    "rule_inputs",
    "time_to_dead_letter",
    "unchecked",
]
