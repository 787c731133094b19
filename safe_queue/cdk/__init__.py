"""The CDK constructs (imports aws_cdk): the consumer, its dashboard, the Config rule, the hook.

These modules import only the engine, the report model and leaf modules (``keys``,
``errors``, ``live.actions``), so ``pip install 'safe-queue[cdk]'`` is all they need. The
synth-time plugin, which reads templates, is :mod:`safe_queue.plugin`.

Each name is imported on first use: an app of consumers does not load the Config rule's,
the hook's or the dashboard's modules (nor ``aws_cdk.aws_config``), which a whole
``cdk synth`` would otherwise pay for at every run.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

_LAZY = {
    "SafeQueueConfigRule": "safe_queue.cdk.config_rule",
    "SafeQueueConsumer": "safe_queue.cdk.consumer",
    "SafeQueueDashboard": "safe_queue.cdk.dashboard",
    "SafeQueueHook": "safe_queue.cdk.hook",
    "SafeQueueHookStackSet": "safe_queue.cdk.hook_stack_set",
    "SafeQueueOrganizationConfigRule": "safe_queue.cdk.organization_rule",
    "derive_visibility_timeout": "safe_queue.cdk.consumer",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'safe_queue.cdk' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
