"""A CloudFormation Lambda hook's request, as the CloudFormation Hooks User Guide documents it.

CloudFormation invokes the hook's function with one JSON object per target
("Create Lambda functions to evaluate resources for Lambda Hooks",
https://docs.aws.amazon.com/cloudformation-cli/latest/hooks-userguide/lambda-hooks-create-lambda-function.html):

- ``clientRequestToken`` (the stack-target syntax block spells it ``clientRequesttoken``;
  its example, and the resource and change-set examples, ``clientRequestToken``: both are
  read), ``awsAccountId``, ``stackId``, ``changeSetId``, ``hookTypeName``,
  ``actionInvocationPoint`` (``CREATE_PRE_PROVISION``, ``UPDATE_PRE_PROVISION`` or
  ``DELETE_PRE_PROVISION``) and ``requestContext`` (``invocation``, ``callbackContext``);
- ``requestData.targetType``: ``STACK`` or ``CHANGE_SET`` (then ``requestData.payload`` is
  a presigned S3 URL of a JSON object with ``template``, and ``previousTemplate`` or
  ``changedResources``), else the resource's type (``RESOURCE`` for Cloud Control API);
  ``targetName`` is the resource type (``STACK``/``CHANGE_SET`` for those targets),
  ``targetLogicalId`` the logical id (the stack name, the change set's ARN), and
  ``targetModel`` holds ``resourceProperties`` and ``previousResourceProperties``.

Examples
--------
>>> request = HookRequest.parse({
...     "clientRequestToken": "t-1", "awsAccountId": "123456789012",
...     "stackId": "arn:aws:cloudformation:eu-west-1:123456789012:stack/orders/1a2b",
...     "actionInvocationPoint": "UPDATE_PRE_PROVISION",
...     "requestData": {"targetName": "STACK", "targetType": "STACK",
...                     "targetLogicalId": "orders", "payload": "https://s3.example/p"}})
>>> request.target, request.action, request.region, request.partition
('STACK', 'UPDATE', 'eu-west-1', 'aws')
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Final

from safe_queue.arn import Arn

__all__ = [
    "CHANGE_SET",
    "FUNCTION_TYPE",
    "MAPPING_TYPE",
    "QUEUE_TYPE",
    "STACK",
    "HookRequest",
    "RequestError",
]

STACK: Final = "STACK"
CHANGE_SET: Final = "CHANGE_SET"
MAPPING_TYPE: Final = "AWS::Lambda::EventSourceMapping"
QUEUE_TYPE: Final = "AWS::SQS::Queue"
FUNCTION_TYPE: Final = "AWS::Lambda::Function"
_ACTIONS: Final = ("CREATE", "UPDATE", "DELETE")


class RequestError(ValueError):
    """The event is not a CloudFormation Lambda hook request (a field is missing or wrong)."""


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _properties(value: Any) -> dict[str, Any]:
    return dict(value) if isinstance(value, Mapping) else {}


@dataclass(frozen=True)
class HookRequest:
    """The fields of a hook request that the handler uses.

    Attributes
    ----------
    token
        ``clientRequestToken``, echoed in the response.
    target
        ``STACK``, ``CHANGE_SET``, or the resource type (``AWS::SQS::Queue``...).
    action
        ``CREATE``, ``UPDATE`` or ``DELETE`` (from ``actionInvocationPoint``).
    logical_id
        ``targetLogicalId``: the stack name, the change set ARN, or the resource's logical id.
    account
        ``awsAccountId``.
    stack_id
        ``stackId`` (empty for Cloud Control API).
    region, partition
        From ``stackId``, else the function's own (``AWS_REGION``).
    payload
        ``requestData.payload``: the presigned URL of stack and change-set targets.
    properties, previous_properties
        ``targetModel.resourceProperties`` and ``previousResourceProperties``.
    cloud_control
        The operation comes from Cloud Control API (``targetType`` ``RESOURCE``).
    """

    token: str
    target: str
    action: str
    logical_id: str = ""
    account: str = ""
    stack_id: str = ""
    region: str = ""
    partition: str = "aws"
    payload: str = ""
    properties: dict[str, Any] = field(default_factory=dict)
    previous_properties: dict[str, Any] = field(default_factory=dict)
    cloud_control: bool = False

    @property
    def templated(self) -> bool:
        """A stack or change-set target: the payload holds the template."""
        return self.target in (STACK, CHANGE_SET)

    @classmethod
    def parse(cls, event: Any) -> HookRequest:
        """Read a hook request.

        Raises
        ------
        RequestError
            ``event`` is not an object, or has no ``requestData.targetType``/``targetName``.
        """
        if not isinstance(event, Mapping):
            raise RequestError(f"the event is {type(event).__name__}, not a hook request object")
        token = _text(event.get("clientRequestToken")) or _text(event.get("clientRequesttoken"))
        data = event.get("requestData")
        if not isinstance(data, Mapping):
            raise RequestError("the event has no requestData: it is not a hook request")
        target_type = _text(data.get("targetType"))
        target_name = _text(data.get("targetName"))
        if not (target_type or target_name):
            raise RequestError("requestData has no targetType or targetName")
        cloud_control = target_type == "RESOURCE"
        target = target_type if target_type in (STACK, CHANGE_SET) else target_name or target_type
        point = _text(event.get("actionInvocationPoint"))
        action = next((a for a in _ACTIONS if point.startswith(a)), "")
        if target == CHANGE_SET and not action:
            action = "CREATE"  # change sets are evaluated when they are created
        stack_id = _text(event.get("stackId")) or _text(event.get("stackID"))
        arn = Arn.parse(stack_id)
        region = (arn.region if arn else "") or os.environ.get("AWS_REGION", "")
        model = data.get("targetModel")
        model = model if isinstance(model, Mapping) else {}
        return cls(
            token=token,
            target=target,
            action=action,
            logical_id=_text(data.get("targetLogicalId")),
            account=_text(event.get("awsAccountId")) or (arn.account if arn else ""),
            stack_id=stack_id,
            region=region,
            partition=arn.partition if arn else "aws",
            payload=_text(data.get("payload")),
            properties=_properties(model.get("resourceProperties")),
            previous_properties=_properties(model.get("previousResourceProperties")),
            cloud_control=cloud_control,
        )
