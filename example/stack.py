"""The example stack: SafeQueueConsumer queues feeding an invoice renderer and a FIFO ledger.

- ``RenderInvoice`` (180 s timeout, the seed incident's function) consumes a standard queue
  with batches of 5 and a 2 s batching window, and renders idempotently.
- ``PostLedgerEntry`` (30 s timeout) consumes a FIFO queue, one message group per account,
  with Powertools' ``SqsFifoPartialProcessor`` so an account's entries keep their order
  through failures (README: "FIFO consumers").
"""

from __future__ import annotations

from pathlib import Path

from aws_cdk import Aws, Duration, Stack
from aws_cdk import aws_lambda as lambda_
from aws_cdk import aws_sns as sns
from constructs import Construct

from safe_queue import SafeQueueConsumer
from safe_queue.cdk.bundling import RUNTIME_MODULES, package_code
from safe_queue.runtime import FailureBackoff

HANDLER_DIR = Path(__file__).parent / "handler"

# Powertools for AWS Lambda (Python) v3 public layer; its version number is listed in the
# Powertools installation docs. Deployments pick it up by region.
POWERTOOLS_LAYER_VERSION = 27


class InvoiceRenderingStack(Stack):
    """Renders invoices and posts ledger entries; each queue's settings derive from its function."""

    def __init__(self, scope: Construct, construct_id: str, **kwargs: object) -> None:
        super().__init__(scope, construct_id, **kwargs)  # type: ignore[arg-type]
        powertools = lambda_.LayerVersion.from_layer_version_arn(
            self,
            "Powertools",
            f"arn:{Aws.PARTITION}:lambda:{Aws.REGION}:017000801446:layer:"
            f"AWSLambdaPowertoolsPythonV3-python313-x86_64:{POWERTOOLS_LAYER_VERSION}",
        )
        # The handlers and the CDK-free part of safe_queue they import (safe_queue.runtime),
        # bundled locally at synth: no Docker, no aws-cdk-lib in the functions.
        handler_code = package_code(RUNTIME_MODULES, HANDLER_DIR)
        self.render_function = lambda_.Function(
            self,
            "RenderInvoice",
            runtime=lambda_.Runtime.PYTHON_3_13,
            handler="render_invoices.handler",
            code=handler_code,
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
            # The handler backs off failed invoices (FailureBackoff.from_env() reads these
            # settings); 7 receives ride out an outage of about 15 minutes with it.
            failure_backoff=FailureBackoff(base=30, cap=900),
            max_receive_count=7,
        )
        # FIFO: no batching window (AWS refuses one on FIFO queues), batches of at most 10.
        self.ledger_function = lambda_.Function(
            self,
            "PostLedgerEntry",
            runtime=lambda_.Runtime.PYTHON_3_13,
            handler="ledger_fifo.handler",
            code=handler_code,
            layers=[powertools],
            timeout=Duration.seconds(30),
            memory_size=256,
            tracing=lambda_.Tracing.ACTIVE,
        )
        self.ledger_consumer = SafeQueueConsumer(
            self,
            "LedgerEntries",
            function=self.ledger_function,
            fifo=True,
            batch_size=10,
            alarm_topic=self.alarm_topic,
        )
