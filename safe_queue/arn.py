"""Amazon Resource Names of queues and functions: one parser for every surface.

``arn:<partition>:<service>:<region>:<account>:<resource>``. The audit, the hook, redrive,
the handler helpers and the template reader all read ARNs; they read them here. A leaf
module: it imports no other safe_queue module (botocore only inside :func:`queue_url`).

Examples
--------
>>> arn = Arn.parse("arn:aws:lambda:eu-west-1:123456789012:function:render:live")
>>> arn.service, arn.region, arn.name, arn.unqualified
('lambda', 'eu-west-1', 'render:live', 'arn:aws:lambda:eu-west-1:123456789012:function:render')
>>> Arn.parse("arn:aws:sqs:eu-west-1:123456789012:invoice-render").name
'invoice-render'
>>> Arn.parse("invoice-render") is None
True
>>> queue_url("arn:aws:sqs:eu-west-1:123456789012:invoice-render")
'https://sqs.eu-west-1.amazonaws.com/123456789012/invoice-render'
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

__all__ = ["Arn", "queue_arn", "queue_url", "service_of", "unqualified_function_arn"]


@dataclass(frozen=True)
class Arn:
    """The six parts of an ARN.

    Attributes
    ----------
    partition, service, region, account
        As written (``aws``, ``sqs``, ``eu-west-1``, ``123456789012``); a part may be a
        template placeholder such as ``${AWS::Region}``.
    resource
        Everything after the account: ``invoice-render`` for a queue,
        ``function:render:live`` for a function.
    """

    partition: str
    service: str
    region: str
    account: str
    resource: str

    @classmethod
    def parse(cls, text: str) -> Arn | None:
        """Return the ARN's parts, or ``None`` when ``text`` is not an ARN."""
        if not isinstance(text, str) or not text.startswith("arn:"):
            return None
        parts = text.split(":", 5)
        if len(parts) != 6 or not parts[2]:
            return None
        return cls(parts[1], parts[2], parts[3], parts[4], parts[5])

    @property
    def name(self) -> str:
        """The resource's name: a queue's name; a function's name with its qualifier, if any."""
        if self.service == "lambda" and self.resource.startswith("function:"):
            return self.resource.removeprefix("function:")
        return self.resource.rsplit("/", 1)[-1]

    @property
    def unqualified(self) -> str:
        """The ARN without a function's alias or version (reserved concurrency is per function)."""
        if self.service == "lambda" and self.resource.startswith("function:"):
            name = self.resource.split(":")[1]
            return f"arn:{self.partition}:lambda:{self.region}:{self.account}:function:{name}"
        return str(self)

    def __str__(self) -> str:
        return ":".join(
            ("arn", self.partition, self.service, self.region, self.account, self.resource)
        )


def service_of(text: str | None) -> str:
    """Return the service an ARN names (``sqs``, ``kinesis``...), ``""`` for a non-ARN."""
    arn = Arn.parse(text or "")
    return "" if arn is None else arn.service


def unqualified_function_arn(function_arn: str) -> str:
    """Drop an alias or version from a function ARN (a non-ARN is returned as given)."""
    arn = Arn.parse(function_arn)
    return function_arn if arn is None else arn.unqualified


def queue_arn(text: str) -> Arn:
    """Parse an SQS queue ARN, refusing anything else with a sentence saying what is expected.

    Raises
    ------
    ValueError
        ``text`` is not ``arn:<partition>:sqs:<region>:<account>:<name>``.
    """
    arn = Arn.parse(text)
    if arn is None or arn.service != "sqs" or not (arn.region and arn.account and arn.resource):
        raise ValueError(
            f"queue ARN {text!r} is not an SQS queue ARN; expected"
            " arn:<partition>:sqs:<region>:<account>:<name>, such as"
            " arn:aws:sqs:eu-west-1:123456789012:my-queue"
        )
    return arn


@functools.cache
def _dns_suffixes() -> dict[str, str]:
    import botocore.loaders

    partitions = botocore.loaders.create_loader().load_data("partitions")["partitions"]
    return {p["id"]: p["outputs"]["dnsSuffix"] for p in partitions}


def queue_url(text: str) -> str:
    """Build a queue's URL from its ARN, without a ``GetQueueUrl`` call.

    The URL is ``https://sqs.<region>.<partition's DNS suffix>/<account>/<name>``. SQS finds
    the queue by the account and name in the URL's path (the request itself goes to the
    client's endpoint), so this saves one call per queue and also works for a queue in
    another account. It is also the resource id AWS Config records for an
    ``AWS::SQS::Queue``.

    Raises
    ------
    ValueError
        ``text`` is not an SQS queue ARN.
    """
    arn = queue_arn(text)
    suffix = _dns_suffixes().get(arn.partition, "amazonaws.com")
    return f"https://sqs.{arn.region}.{suffix}/{arn.account}/{arn.resource}"
