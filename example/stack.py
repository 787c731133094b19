"""The example stack: an invoice renderer (180 s timeout) consuming a SafeQueueConsumer queue."""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Aws, Duration, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from constructs import Construct

from safe_queue import SafeQueueConsumer

HANDLER_DIR = Path(__file__).parent / "handler"

# Powertools for AWS Lambda (Python) v3 public layer; its version number is listed in the
# Powertools installation docs. Deployments pick it up by region.
POWERTOOLS_LAYER_VERSION = 27


class InvoiceRenderingStack(Stack):
    """Renders invoices from a queue; the queue's settings derive from the function."""

    def __init__(self, scope: Construct, construct_id: str, **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        powertools = lambda_.LayerVersion.from_layer_version_arn(
            self,
            "Powertools",
            f"arn:{Aws.PARTITION}:lambda:{Aws.REGION}:017000801446:layer:"
            f"AWSLambdaPowertoolsPythonV3-python313-x86_64:{POWERTOOLS_LAYER_VERSION}",
        )
        self.render_function = lambda_.Function(
            self,
            "RenderInvoice",
            runtime=lambda_.Runtime.PYTHON_3_13,
            handler="render_invoices.handler",
            code=lambda_.Code.from_asset(
                str(HANDLER_DIR), exclude=["__pycache__", "*.pyc", "__init__.py"]
            ),
            layers=[powertools],
            timeout=Duration.seconds(180),
            memory_size=1024,
            tracing=lambda_.Tracing.ACTIVE,
        )
        self.alarm_topic = sns.Topic(self, "Alarms", enforce_ssl=True)
        self.consumer = SafeQueueConsumer(
            self,
            "RenderInvoices",
            function=self.render_function,
            batch_size=5,
            max_batching_window=Duration.seconds(2),
            alarm_topic=self.alarm_topic,
            idempotency=True,
        )
