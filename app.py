#!/usr/bin/env python3
"""Example CDK app: `scripts/synth` (see README) synthesizes it offline."""

from aws_cdk import App, Validations

from example.stack import InvoiceRenderingStack
from safe_queue import SafeQueueChecks

app = App()
InvoiceRenderingStack(app, "InvoiceRendering")
# Check every SQS -> Lambda mapping of the app after synthesis, hand-wired ones and those
# inside Stages included: errors fail `cdk synth`, warnings are reported.
Validations.of(app).add_plugins(SafeQueueChecks())
app.synth()
