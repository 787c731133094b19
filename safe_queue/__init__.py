"""safe_queue: SQS -> Lambda consumers that cannot process a message twice by misconfiguration.

``SafeQueueConsumer`` derives the queue's settings from the consuming function;
``derive_visibility_timeout`` is the formula on its own; ``SafeQueueChecks`` checks every
SQS -> Lambda mapping of a CDK app; ``SafeQueueConfigRule`` keeps checking a live account
with AWS Config; ``SafeQueueHook`` checks every stack operation with a CloudFormation hook
(``SafeQueueHookStackSet``: in every account of an organization). The CDK names are resolved
lazily, so the CDK-free parts (:mod:`safe_queue.engine`, :mod:`safe_queue.runtime`, the
``safe-queue`` command) import neither aws-cdk-lib, constructs nor jsii.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from safe_queue._version import __version__ as __version__
from safe_queue.errors import SafeQueueConfigError

if TYPE_CHECKING:
    from safe_queue.cdk.config_rule import SafeQueueConfigRule
    from safe_queue.cdk.consumer import SafeQueueConsumer, derive_visibility_timeout
    from safe_queue.cdk.dashboard import SafeQueueDashboard
    from safe_queue.cdk.hook import SafeQueueHook
    from safe_queue.cdk.hook_stack_set import SafeQueueHookStackSet
    from safe_queue.cdk.organization_rule import SafeQueueOrganizationConfigRule
    from safe_queue.plugin import SafeQueueChecks

__all__ = [
    "SafeQueueChecks",
    "SafeQueueConfigError",
    "SafeQueueConfigRule",
    "SafeQueueConsumer",
    "SafeQueueDashboard",
    "SafeQueueHook",
    "SafeQueueHookStackSet",
    "SafeQueueOrganizationConfigRule",
    "derive_visibility_timeout",
]


# Public CDK names and the module that defines each; imported on first use.
_LAZY = {
    "SafeQueueChecks": "safe_queue.plugin",
    "SafeQueueConfigRule": "safe_queue.cdk.config_rule",
    "SafeQueueConsumer": "safe_queue.cdk.consumer",
    "SafeQueueDashboard": "safe_queue.cdk.dashboard",
    "SafeQueueHook": "safe_queue.cdk.hook",
    "SafeQueueHookStackSet": "safe_queue.cdk.hook_stack_set",
    "SafeQueueOrganizationConfigRule": "safe_queue.cdk.organization_rule",
    "derive_visibility_timeout": "safe_queue.cdk.consumer",
}


_CDK_MODULES = frozenset({"aws_cdk", "constructs", "jsii"})


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'safe_queue' has no attribute {name!r}")
    try:
        value = getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as missing:
        if missing.name is None or missing.name.split(".")[0] not in _CDK_MODULES:
            raise
        raise ModuleNotFoundError(
            f"safe_queue.{name} needs aws-cdk-lib and constructs, which are not installed"
            f" ({missing.name!r} is missing). Fix: pip install 'safe-queue[cdk]'.",
            name=missing.name,
        ) from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
