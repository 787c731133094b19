"""AWS limits and defaults for SQS -> Lambda, in whole seconds unless named otherwise.

Every bound here is enforced by AWS (a value outside is rejected at deploy time) or
is AWS's own default for an unset property. Sources are given per constant; see also
the table in the README.
"""

from typing import Final

# Lambda Developer Guide, "Configure Lambda function timeout": 1..900 s, default 3 s.
FUNCTION_TIMEOUT_MIN: Final = 1
FUNCTION_TIMEOUT_MAX: Final = 900
FUNCTION_TIMEOUT_DEFAULT: Final = 3

# SQS API Reference, SetQueueAttributes: VisibilityTimeout 0..43,200 s (12 h), default 30 s.
VISIBILITY_TIMEOUT_MIN: Final = 0
VISIBILITY_TIMEOUT_MAX: Final = 43_200
VISIBILITY_TIMEOUT_DEFAULT: Final = 30

# SQS API Reference, CreateQueue: QueueName 1..80 alphanumerics, hyphens and underscores;
# a FIFO queue's name ends with ".fifo", which counts towards the 80.
QUEUE_NAME_MAX_LENGTH: Final = 80
QUEUE_NAME_CHARACTERS: Final = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
)
FIFO_SUFFIX: Final = ".fifo"

# SQS API Reference, SetQueueAttributes: MessageRetentionPeriod 60..1,209,600 s, default 4 days.
RETENTION_MIN: Final = 60
RETENTION_MAX: Final = 1_209_600
RETENTION_DEFAULT: Final = 345_600

# SQS Developer Guide, "Configuring a dead-letter queue": maxReceiveCount 1..1,000.
MAX_RECEIVE_COUNT_MIN: Final = 1
MAX_RECEIVE_COUNT_MAX: Final = 1_000
# Lambda Developer Guide, "Using Lambda with Amazon SQS": at least 5.
MAX_RECEIVE_COUNT_GUIDANCE: Final = 5

# Lambda API Reference, CreateEventSourceMapping.
BATCHING_WINDOW_MIN: Final = 0
BATCHING_WINDOW_MAX: Final = 300
BATCHING_WINDOW_DEFAULT: Final = 0
BATCH_SIZE_MIN: Final = 1
BATCH_SIZE_DEFAULT: Final = 10
BATCH_SIZE_MAX_WITHOUT_WINDOW: Final = 10
BATCH_SIZE_MAX_STANDARD: Final = 10_000
BATCH_SIZE_MAX_FIFO: Final = 10
# Lambda API Reference, ScalingConfig.MaximumConcurrency: 2..1,000.
MAX_CONCURRENCY_MIN: Final = 2
MAX_CONCURRENCY_MAX: Final = 1_000

# Lambda Developer Guide, "Using Lambda with Amazon SQS": visibility timeout of at least
# six times the function timeout, plus MaximumBatchingWindowInSeconds.
VISIBILITY_MULTIPLIER: Final = 6

# Lambda Developer Guide, "Lambda event filtering": an SQS message that matches no filter
# is deleted. Lambda API Reference, FunctionResponseTypes.
REPORT_BATCH_ITEM_FAILURES: Final = "ReportBatchItemFailures"

# Lambda Developer Guide, "Configure Lambda function timeout" (and cfn-lint E3717): a function
# on Lambda Managed Instances (CapacityProviderConfig) may have a Timeout up to 5,400 s for
# asynchronous and event source mapping invocations (SQS included; Amazon MQ and DocumentDB
# excepted); "Lambda Managed Instances quotas" lists SQS among their event sources.
FUNCTION_TIMEOUT_MAX_MANAGED_INSTANCES: Final = 5_400

# Provisioned mode (ProvisionedPollerConfig) for SQS. Lambda Developer Guide, "Parameters for
# SQS event source mappings": MinimumPollers 2-200 (default 2). MaximumPollers: the API
# Reference (ProvisionedPollerConfig, and botocore since June 2026) accepts 2-10,000 for SQS
# (default 200); the CloudFormation resource reference and schema still say at most 2,000,
# which cfn-lint enforces on templates. The engine judges every surface (the API included)
# by the API's bound, so a live mapping the API accepted is never called invalid.
# "Configuring scaling behavior for SQS event source mappings": provisioned mode and
# ScalingConfig.MaximumConcurrency are mutually exclusive.
POLLERS_MIN: Final = 2
MINIMUM_POLLERS_DEFAULT: Final = 2
MINIMUM_POLLERS_MAX: Final = 200
MAXIMUM_POLLERS_DEFAULT: Final = 200
MAXIMUM_POLLERS_MAX: Final = 10_000
