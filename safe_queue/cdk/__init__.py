"""The CDK constructs (imports aws_cdk): the consumer, its dashboard, the Config rule, the hook.

These modules import only the engine, the report model and leaf modules (``keys``,
``errors``, ``live.actions``), so ``pip install 'safe-queue[cdk]'`` is all they need. The
synth-time plugin, which reads templates, is :mod:`safe_queue.plugin`.
"""

from safe_queue.cdk.config_rule import SafeQueueConfigRule
from safe_queue.cdk.consumer import SafeQueueConsumer, derive_visibility_timeout
from safe_queue.cdk.dashboard import SafeQueueDashboard
from safe_queue.cdk.hook import SafeQueueHook
from safe_queue.cdk.hook_stack_set import SafeQueueHookStackSet
from safe_queue.cdk.organization_rule import SafeQueueOrganizationConfigRule

__all__ = [
    "SafeQueueConfigRule",
    "SafeQueueConsumer",
    "SafeQueueDashboard",
    "SafeQueueHook",
    "SafeQueueHookStackSet",
    "SafeQueueOrganizationConfigRule",
    "derive_visibility_timeout",
]
