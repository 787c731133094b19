"""The CloudFormation Lambda hook: the same rules, when CloudFormation is about to deploy.

``safe_queue.hook.handler`` is the function a ``SafeQueueHook`` (or any
``AWS::CloudFormation::LambdaHook``) invokes before provisioning. It needs no CDK:

- a **stack** or **change set** target: the template in the request's payload (JSON or
  YAML text, SAM included) is read as ``safe-queue check`` reads it, what it references
  outside itself (an imported queue, a function named by ARN) is read live, and every SQS
  mapping is judged (:mod:`safe_queue.hook.stack`);
- a **resource** target: a mapping against its live queue and function; an update of a
  queue or a function against the mappings that already use it (:mod:`safe_queue.hook.resource`).

The answer (:mod:`safe_queue.hook.response`) is ``FAILED`` with ``NonCompliant`` on an
error that is not acknowledged, ``SUCCESS`` otherwise (warnings in the message), and
``FAILED`` with ``InternalFailure`` and a one-line reason when the evaluation cannot be
done (:mod:`safe_queue.hook.entry`). The read-only IAM actions it calls are
:data:`safe_queue.live.actions.HOOK_IAM_ACTIONS`.
"""

from safe_queue.hook.entry import evaluate, handler
from safe_queue.hook.request import HookRequest, RequestError
from safe_queue.hook.response import MESSAGE_MAX, Outcome, respond

__all__ = [
    "MESSAGE_MAX",
    "HookRequest",
    "Outcome",
    "RequestError",
    "evaluate",
    "handler",
    "respond",
]
