"""The consumer's synth-time drift check: its function's final timeout, judged again.

A ``SafeQueueConsumer`` derives its queue from the function's timeout while it is built;
an escape hatch can change the timeout afterwards (``cfn_function.timeout = 900``). At
synth, CDK validates every construct: this validation gives the engine the consumer's
facts again with the function's final timeout, and every ``error`` (above all
``safe-queue:function-timeout-changed``) fails the synth, naming the consumer.
"""

from __future__ import annotations

import dataclasses

import jsii
from aws_cdk import aws_lambda as lambda_
from constructs import IValidation

from safe_queue.engine import FunctionFacts, Level, MappingFacts, evaluate

__all__ = ["FunctionTimeoutUnchanged"]


@jsii.implements(IValidation)
class FunctionTimeoutUnchanged:
    """Validation of one consumer: its facts, judged with the function's final timeout.

    Parameters
    ----------
    consumer_path
        The consumer's construct path, for messages.
    cfn_function
        The function's ``CfnFunction``, read at synth.
    facts
        The facts the engine accepted when the consumer was built, with
        ``derived_function_timeout`` set.
    """

    def __init__(
        self, consumer_path: str, cfn_function: lambda_.CfnFunction, facts: MappingFacts
    ) -> None:
        self._path = consumer_path
        self._cfn_function = cfn_function
        self._facts = facts

    def validate(self) -> list[str]:
        """Return the engine's errors on the consumer's facts with the final timeout."""
        final = self._cfn_function.timeout
        function = self._facts.function
        assert isinstance(function, FunctionFacts)
        if final == function.timeout:
            # The facts the engine judged when the consumer was built, which had no error
            # (an error refuses the consumer): nothing to judge again.
            return []
        facts = dataclasses.replace(
            self._facts,
            function=dataclasses.replace(function, timeout=None if final is None else int(final)),
        )
        return [
            f"SafeQueueConsumer {self._path}, function {self._cfn_function.node.path}:"
            f" {finding.message} [{finding.rule_id}]"
            for finding in evaluate(facts)
            if finding.level is Level.ERROR
        ]
