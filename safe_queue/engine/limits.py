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
VISIBILITY_TIMEOUT_MAX: Final = 43_200
VISIBILITY_TIMEOUT_DEFAULT: Final = 30

# SQS API Reference, CreateQueue: QueueName 1..80 alphanumerics, hyphens and underscores;
# a FIFO queue's name ends with ".fifo", which counts towards the 80.
QUEUE_NAME_MAX_LENGTH: Final = 80

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
BATCHING_WINDOW_MAX: Final = 300
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
