# 100 consumers, 5 resources each (500): the plan benchmarks/bench_terraform.py checks.
# provider.tf comes from tests/fixtures/terraform/ (copied in by the benchmark).

locals {
  consumers = { for index in range(100) : format("c%03d", index) => index }
}

resource "aws_sqs_queue" "dlq" {
  for_each                  = local.consumers
  name                      = "bench-${each.key}-dlq"
  message_retention_seconds = 1209600
}

resource "aws_sqs_queue" "source" {
  for_each                   = local.consumers
  name                       = "bench-${each.key}"
  visibility_timeout_seconds = 60 + each.value
  redrive_policy = jsonencode({
    deadLetterTargetArn = aws_sqs_queue.dlq[each.key].arn
    maxReceiveCount     = 3
  })
}

resource "aws_iam_role" "consumer" {
  for_each = local.consumers
  name     = "bench-${each.key}"
  assume_role_policy = jsonencode({
    Version = "2012-10-17"
    Statement = [{
      Effect    = "Allow"
      Principal = { Service = "lambda.amazonaws.com" }
      Action    = "sts:AssumeRole"
    }]
  })
}

resource "aws_lambda_function" "consumer" {
  for_each      = local.consumers
  function_name = "bench-${each.key}"
  role          = aws_iam_role.consumer[each.key].arn
  runtime       = "python3.12"
  handler       = "index.handler"
  filename      = "${path.module}/handler.zip"
  timeout       = 90
}

resource "aws_lambda_event_source_mapping" "consumer" {
  for_each                           = local.consumers
  event_source_arn                   = aws_sqs_queue.source[each.key].arn
  function_name                      = aws_lambda_function.consumer[each.key].arn
  batch_size                         = 5
  maximum_batching_window_in_seconds = 2
}
