"""The hook's entry point: one request in, one response out, always, within the time it has.

CloudFormation waits at most 30 seconds for a hook invocation ("Hooks have a 30-second
timeout limit per invocation", CloudFormation Hooks User Guide, Concepts). The evaluation
runs in a worker thread; if it has not finished after :data:`BUDGET_SECONDS` (or the
function's remaining time less :data:`MARGIN_SECONDS`, whichever is shorter) the handler
answers ``InternalFailure`` saying so, instead of letting the invocation time out. Every
AWS client retries as :func:`safe_queue.retries.client_config` sets it for the ``hook``
caller (3 attempts, 2 s to connect, 5 s to read: at most 24 s for one call).

Nothing raises out of :func:`handler`: a request that is not a hook request, a payload
that cannot be read, a template that cannot be parsed, an AWS error after the retries and
a bug each become ``FAILED`` with ``errorCode: InternalFailure`` and a one-line reason
(a bug's traceback goes to the function's log).
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any, Final

import boto3
from botocore.exceptions import BotoCoreError, ClientError, NoCredentialsError

from safe_queue.arn import Arn
from safe_queue.engine import AcknowledgementError
from safe_queue.hook.payload import PayloadError, fetch_payload
from safe_queue.hook.request import CHANGE_SET, STACK, HookRequest, RequestError
from safe_queue.hook.resource import ProposedReader, evaluate_resource
from safe_queue.hook.response import (
    CLOUD_CONTROL_MESSAGE_MAX,
    MESSAGE_MAX,
    Outcome,
    failure,
    respond,
)
from safe_queue.hook.stack import MAX_WORKERS, ExportsError, evaluate_template
from safe_queue.live.aws_errors import describe
from safe_queue.live.reader import AccountReader, AuditError
from safe_queue.template import TemplateError

__all__ = [
    "BUDGET_SECONDS",
    "MARGIN_SECONDS",
    "evaluate",
    "handler",
    "session_for",
    "subject_of",
]

BUDGET_SECONDS: Final = 25.0
"""The longest an evaluation may take: CloudFormation's 30 s per invocation, less room to
answer."""
MARGIN_SECONDS: Final = 2.0
"""Kept free of the function's own remaining time (its timeout may be shorter than 30 s)."""

logger = logging.getLogger(__name__)


def subject_of(request: HookRequest) -> str:
    """Name what the request evaluates, in words that end a sentence.

    Examples
    --------
    >>> subject_of(HookRequest("t", "STACK", "UPDATE", logical_id="orders"))
    'stack orders'
    >>> subject_of(HookRequest("t", "AWS::SQS::Queue", "UPDATE", logical_id="Queue"))
    'the update of AWS::SQS::Queue Queue'
    """
    stack = Arn.parse(request.stack_id)
    stack_name = stack.resource.split("/")[1] if stack and "/" in stack.resource else ""
    if request.target == STACK:
        return f"stack {request.logical_id or stack_name}".strip()
    if request.target == CHANGE_SET:
        change_set = Arn.parse(request.logical_id)
        name = change_set.resource.split("/")[1] if change_set else request.logical_id
        return f"change set {name} of stack {stack_name}".strip()
    return f"the {request.action.lower() or 'change'} of {request.target} {request.logical_id}"


def _templated(request: HookRequest, reader: AccountReader, subject: str) -> Outcome:
    payload = fetch_payload(request.payload)
    template = payload.get("template")
    if isinstance(template, Mapping):
        template = json.dumps(template)
    if not isinstance(template, str) or not template.strip():
        note = "The payload has no template (a stack deletion): nothing to check."
        return Outcome(subject, note=note)
    return evaluate_template(request, template, reader, subject)


def session_for(request: HookRequest) -> boto3.Session:
    """Return the boto3 session of one evaluation (the function's credentials, the region)."""
    return boto3.Session(region_name=request.region or None)


def evaluate(request: HookRequest, session: boto3.Session | None = None) -> Outcome:
    """Evaluate one request (no time limit; :func:`handler` adds it).

    Raises
    ------
    PayloadError, TemplateError, AcknowledgementError, ExportsError, AuditError
        The evaluation cannot be done (:func:`handler` answers ``InternalFailure``).
    """
    session = session or session_for(request)
    subject = subject_of(request)
    if request.templated:
        return _templated(request, AccountReader(session, "hook", MAX_WORKERS), subject)
    return evaluate_resource(request, ProposedReader(session))


def _budget(context: object) -> float:
    remaining = getattr(context, "get_remaining_time_in_millis", None)
    if callable(remaining):
        left = float(remaining()) / 1000 - MARGIN_SECONDS
        return max(1.0, min(BUDGET_SECONDS, left))
    return BUDGET_SECONDS


def _reason(error: BaseException) -> str | None:
    """One line for an error that stops the evaluation; ``None`` for a bug."""
    if isinstance(error, PayloadError | AuditError):
        return str(error)
    if isinstance(error, TemplateError):
        return f"the template cannot be read: {error}"
    if isinstance(error, AcknowledgementError):
        return f"an acknowledgement is malformed: {error}"
    if isinstance(error, ExportsError):
        return error.failure.sentence()
    if isinstance(error, NoCredentialsError):
        return "no AWS credentials (the function's role gives them in AWS Lambda)"
    if isinstance(error, ClientError | BotoCoreError):
        failure_ = describe(error, "an AWS call", "the request", expected_only=False)
        return failure_.sentence() if failure_ else f"{type(error).__name__}: {error}"
    return None


def handler(event: Any, context: object) -> dict[str, Any]:
    """Lambda entry point of the CloudFormation hook (``safe_queue.hook.handler``).

    Returns the hook response: ``hookStatus``, ``errorCode`` (on failure), ``message``,
    ``clientRequestToken`` and ``annotations``.
    """
    started = time.monotonic()
    token = ""
    if isinstance(event, Mapping):
        token = str(event.get("clientRequestToken") or event.get("clientRequesttoken") or "")
    try:
        request = HookRequest.parse(event)
    except RequestError as error:
        logger.error("safe-queue hook: %s", error)
        return failure(token, f"the request: {error}")
    subject = subject_of(request)
    limit = CLOUD_CONTROL_MESSAGE_MAX if request.cloud_control else MESSAGE_MAX
    budget = _budget(context)
    result: dict[str, Any] = {}

    def run() -> None:
        try:
            result["outcome"] = evaluate(request)
        except Exception as error:  # reported below, never raised out of the handler
            result["error"] = error

    worker = threading.Thread(target=run, name="safe-queue-hook", daemon=True)
    worker.start()
    worker.join(budget)
    elapsed = time.monotonic() - started
    if worker.is_alive():
        logger.error("safe-queue hook: %s not evaluated after %.1f s", subject, elapsed)
        return failure(
            request.token,
            f"{subject}: the evaluation took longer than {budget:.0f} s (AWS calls answering"
            " slowly or throttled); the hook answers before CloudFormation's 30 s run out."
            " Fix: retry the operation",
            limit=limit,
        )
    stopped: BaseException | None = result.get("error")
    if stopped is not None:
        reason = _reason(stopped)
        if reason is None:
            logger.error("safe-queue hook: bug while evaluating %s", subject, exc_info=stopped)
            reason = (
                f"a safe-queue bug ({type(stopped).__name__}: {stopped}); the traceback is in"
                " the function's log. Fix: report it"
            )
        else:
            logger.error("safe-queue hook: %s: %s", subject, reason)
        return failure(request.token, f"{subject}: {reason}", limit=limit)
    outcome: Outcome = result["outcome"]
    response = respond(request.token, outcome, limit=limit)
    logger.info(
        "safe-queue hook: %s: %s in %.2f s (%d mappings, %d findings, %d failed reads)",
        subject,
        response.get("errorCode") or response["hookStatus"],
        elapsed,
        outcome.checked,
        len(outcome.findings),
        len(outcome.unreadable),
    )
    for finding in outcome.findings:
        logger.info(
            "safe-queue hook: %s %s at %s: %s",
            finding.level.name,
            finding.rule_id,
            finding.resource,
            finding.message,
        )
    return response
