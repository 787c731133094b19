#!/usr/bin/env python3
"""Example CDK app: `npx cdk synth` (see README) synthesizes it offline."""

from aws_cdk import App

from example.stack import InvoiceRenderingStack

app = App()
InvoiceRenderingStack(app, "InvoiceRendering")
app.synth()
