"""The CDK side of safe_queue (constructs, aspects): everything here imports aws_cdk."""

from safe_queue.cdk.config_rule import SafeQueueConfigRule

__all__ = ["SafeQueueConfigRule"]
