"""The CDK surface: constructs and the synth-time checks (imports aws_cdk)."""

from safe_queue.cdk.checks import SafeQueueChecks
from safe_queue.cdk.config_rule import SafeQueueConfigRule
from safe_queue.cdk.consumer import SafeQueueConsumer, derive_visibility_timeout
from safe_queue.cdk.dashboard import SafeQueueDashboard

__all__ = [
    "SafeQueueChecks",
    "SafeQueueConfigRule",
    "SafeQueueConsumer",
    "SafeQueueDashboard",
    "derive_visibility_timeout",
]
