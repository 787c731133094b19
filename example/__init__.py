"""The example app: an invoice renderer fed by a SafeQueueConsumer."""
