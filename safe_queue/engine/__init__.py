"""The rule engine: facts about a mapping in, findings out. No CDK, no boto3, no I/O.

Every surface (the construct, the CDK validation plugin, ``safe-queue check``,
``safe-queue audit``, the AWS Config rule) builds :class:`MappingFacts` and calls
:func:`evaluate`; the rules, AWS's limits and its defaults live here once.

Examples
--------
>>> from safe_queue.engine import FunctionFacts, MappingFacts, QueueFacts, evaluate
>>> [f.rule_id for f in evaluate(MappingFacts(QueueFacts(visibility_timeout=30),
...     FunctionFacts(timeout=60)))]
['safe-queue:visibility-below-function-timeout', 'safe-queue:no-dead-letter-queue', \
'safe-queue:no-report-batch-item-failures']
"""

from safe_queue.engine import limits
from safe_queue.engine.evaluate import evaluate, rule_inputs
from safe_queue.engine.facts import FunctionFacts, MappingFacts, QueueFacts, RedriveFacts, Unknown
from safe_queue.engine.rules import RULES, UNCHECKED, Finding, Level, Rule, rule

__all__ = [
    "RULES",
    "UNCHECKED",
    "Finding",
    "FunctionFacts",
    "Level",
    "MappingFacts",
    "QueueFacts",
    "RedriveFacts",
    "Rule",
    "Unknown",
    "evaluate",
    "limits",
    "rule",
    "rule_inputs",
]
