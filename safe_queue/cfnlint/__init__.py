"""safe-queue's rules inside cfn-lint: ``cfn-lint --append-rules safe_queue.cfnlint``.

Every finding ``safe-queue check <template>`` gives becomes a cfn-lint match on the
mapping's line (for a SAM function's SQS event, the event's line), with the safe-queue
rule id first in its message. Each engine rule is a cfn-lint rule (``cfn-lint
--list-rules``) with its id, short description, description, docs page and tags; errors
are ``E95xx``, warnings ``W95xx`` and ``safe-queue:unchecked`` is informational ``I9590``
(shown with ``--include-checks I95``). The numbers are in :data:`NUMBERS`.

To turn it on for a repository, install ``safe-queue[cfn-lint]`` beside cfn-lint and add
to ``.cfnlintrc``::

    append_rules:
      - safe_queue.cfnlint
    include_checks:
      - I95

- Each template is judged alone, as ``safe-queue check <template>`` judges it (an
  ``Fn::ImportValue`` of another template is ``unchecked``), once per template.
- An acknowledged finding (``Metadata: safe-queue: acknowledge`` on the mapping, function or
  queue) is informational :data:`ACKNOWLEDGED` (``I9501``) with its reason: shown with
  ``--include-checks I95``, never an error or a warning.
- A template the adapter refuses (``check`` exits 2) is one error :data:`UNREADABLE`
  (``E9500``) with the reason.
- cfn-lint's own ``Metadata: cfn-lint: config: ignore_checks`` (template or resource; for a
  SAM event, its function) and ``--ignore-checks`` work on these ids as on any other.

Examples
--------
>>> from cfnlint.api import ManualArgs, lint
>>> template = '''
... Resources:
...   Queue:
...     Type: AWS::SQS::Queue
...     Properties: {VisibilityTimeout: 60}
...   Mapping:
...     Type: AWS::Lambda::EventSourceMapping
...     Properties:
...       EventSourceArn: !GetAtt Queue.Arn
...       FunctionName: my-function
...       BatchSize: 1
... '''
>>> matches = lint(template, config=ManualArgs(append_rules=["safe_queue.cfnlint"],
...     include_checks=["I95"]))
>>> [(m.rule.id, m.linenumber, m.message.split()[0]) for m in matches
...  if m.rule.id.startswith(("E95", "W95", "I95"))]
[('W9542', 6, 'safe-queue:no-dead-letter-queue'), ('I9590', 6, 'safe-queue:unchecked')]
"""

from __future__ import annotations

from safe_queue.cfnlint._ids import (
    ACKNOWLEDGED,
    NUMBERS,
    UNREADABLE,
    cfn_lint_id,
    cfn_lint_ids,
)
from safe_queue.cfnlint._rules import RULE_CLASSES

__all__ = [
    "ACKNOWLEDGED",
    "NUMBERS",
    "RULE_CLASSES",
    "UNREADABLE",
    "cfn_lint_id",
    "cfn_lint_ids",
]

# cfn-lint loads the CloudFormationLintRule subclasses it finds in this module's namespace
# (cfnlint.helpers.create_rules); they are generated from the engine's declarations.
globals().update({rule_class.__name__: rule_class for rule_class in RULE_CLASSES})
