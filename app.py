#!/usr/bin/env python3
"""Example CDK app: `scripts/synth` (see README) synthesizes it offline."""

from aws_cdk import App, Aspects

from example.stack import InvoiceRenderingStack
from safe_queue import SafeQueueChecks

app = App()
InvoiceRenderingStack(app, "InvoiceRendering")
# Check every SQS -> Lambda mapping of the app, including hand-wired ones.
Aspects.of(app).add(SafeQueueChecks())
app.synth()
