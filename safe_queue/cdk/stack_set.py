"""Service-managed StackSets: how a template reaches every account of organizational units.

AWS's own multi-account machinery, no deployer of ours: an ``AWS::CloudFormation::StackSet``
with ``PermissionModel: SERVICE_MANAGED`` deploys a template to every account of the
organizational units it names, and with ``AutoDeployment`` to each account that joins them
later (and removes it from an account that leaves). The template is synthesized here, from
CDK constructs, in an app of its own (:func:`member_template`), and passed as
``TemplateBody`` (at most 51,200 bytes). Used by ``SafeQueueHookStackSet`` and by
``SafeQueueConfigRule``'s organization form.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import aws_cdk as cdk
from constructs import Construct

from safe_queue.errors import SafeQueueConfigError

__all__ = [
    "TEMPLATE_BODY_MAX",
    "check_call_as",
    "check_organization_id",
    "check_organizational_units",
    "check_stack_set_name",
    "member_template",
    "refuse",
    "stack_set",
    "stack_set_name",
]

TEMPLATE_BODY_MAX: Final = 51_200
"""``AWS::CloudFormation::StackSet`` ``TemplateBody``'s largest size, in bytes."""


def refuse(setting: str, value: object, allowed: str, fix: str) -> SafeQueueConfigError:
    """Return the error for a prop: the setting, the value, what is allowed, the fix."""
    return SafeQueueConfigError(f"{setting} is {value!r}; {allowed}. Fix: {fix}.")


_OU_PATTERN: Final = re.compile(r"^(ou-[a-z0-9]{4,32}-[a-z0-9]{8,32}|r-[a-z0-9]{4,32})$")
_ORGANIZATION_PATTERN: Final = re.compile(r"^o-[a-z0-9]{10,32}$")


def check_organizational_units(organizational_unit_ids: Sequence[str]) -> list[str]:
    """Validate OU (or root) ids, as AWS Organizations writes them."""
    ids = list(organizational_unit_ids) if not isinstance(organizational_unit_ids, str) else []
    wrong = [
        ou
        for ou in ids
        if not isinstance(ou, str) or not (_OU_PATTERN.match(ou) or cdk.Token.is_unresolved(ou))
    ]
    if not ids or wrong or len(set(ids)) != len(ids):
        raise refuse(
            "organizational_unit_ids",
            organizational_unit_ids,
            "a service-managed StackSet deploys to organizational units (ou-xxxx-xxxxxxxx) or"
            " the organization's root (r-xxxx), each named once",
            "pass the ids of the OUs to guard, such as ['ou-ab12-cd345678']",
        )
    return ids


def check_organization_id(organization_id: str) -> str:
    """Validate an AWS Organizations id (``o-`` and 10 to 32 letters or digits)."""
    if not isinstance(organization_id, str) or not (
        _ORGANIZATION_PATTERN.match(organization_id) or cdk.Token.is_unresolved(organization_id)
    ):
        raise refuse(
            "organization_id",
            organization_id,
            "an organization's id is o- and 10 to 32 lowercase letters or digits",
            "pass the id aws organizations describe-organization prints, such as 'o-a1b2c3d4e5'",
        )
    return organization_id


def member_template(scope: Construct, build: Callable[[cdk.Stack], None]) -> dict[str, Any]:
    """Synthesize a stack for member accounts in an app of its own; return its template.

    ``build(stack)`` adds the resources. The app has ``scope``'s feature flags; the stack
    has no assets and no bootstrap version rule: the member accounts of a StackSet are not
    CDK-bootstrapped.
    """
    flags = {
        key: value
        for key, value in scope.node.get_all_context().items()
        if key.startswith("@aws-cdk/")
    }
    app = cdk.App(analytics_reporting=False, context=flags)
    stack = cdk.Stack(
        app,
        "Member",
        synthesizer=cdk.DefaultStackSynthesizer(generate_bootstrap_version_rule=False),
    )
    build(stack)
    template: dict[str, Any] = app.synth().get_stack_artifact(stack.artifact_id).template
    return template


def stack_set(
    scope: Construct,
    id: str,
    *,
    template: Mapping[str, Any],
    parameters: Mapping[str, str],
    organizational_unit_ids: Sequence[str],
    stack_set_name: str,
    capabilities: Sequence[str],
    call_as: str,
    description: str,
) -> cdk.CfnStackSet:
    """Return a service-managed StackSet of ``template`` on the OUs, in the stack's region."""
    body = json.dumps(template, separators=(",", ":"))
    if len(body.encode()) > TEMPLATE_BODY_MAX:
        raise SafeQueueConfigError(
            f"{id}: the member accounts' template is {len(body.encode())} bytes; a StackSet's"
            f" TemplateBody holds at most {TEMPLATE_BODY_MAX}. Fix: report it (the template"
            " is safe-queue's own)."
        )
    check_call_as(call_as)
    return cdk.CfnStackSet(
        scope,
        id,
        stack_set_name=stack_set_name,
        permission_model="SERVICE_MANAGED",
        auto_deployment=cdk.CfnStackSet.AutoDeploymentProperty(
            enabled=True, retain_stacks_on_account_removal=False
        ),
        call_as=call_as,
        capabilities=list(capabilities),
        description=description,
        managed_execution={"Active": True},
        operation_preferences=cdk.CfnStackSet.OperationPreferencesProperty(
            failure_tolerance_percentage=10,
            max_concurrent_percentage=25,
            region_concurrency_type="PARALLEL",
        ),
        parameters=[
            cdk.CfnStackSet.ParameterProperty(parameter_key=key, parameter_value=value)
            for key, value in parameters.items()
        ],
        stack_instances_group=[
            cdk.CfnStackSet.StackInstancesProperty(
                deployment_targets=cdk.CfnStackSet.DeploymentTargetsProperty(
                    organizational_unit_ids=list(organizational_unit_ids)
                ),
                regions=[cdk.Aws.REGION],
            )
        ],
        template_body=body,
    )


def check_call_as(call_as: str) -> str:
    """Validate ``CallAs``: ``SELF`` or ``DELEGATED_ADMIN``."""
    if call_as not in ("SELF", "DELEGATED_ADMIN"):
        raise refuse(
            "call_as",
            call_as,
            "a StackSet is created from the management account (SELF) or a delegated"
            " administrator (DELEGATED_ADMIN)",
            "pass call_as='SELF' (the default) or 'DELEGATED_ADMIN'",
        )
    return call_as


def check_stack_set_name(given: str | None) -> str | None:
    """Validate a StackSet's name (a letter, then up to 127 letters, digits or hyphens)."""
    pattern = r"^[a-zA-Z][a-zA-Z0-9-]{0,127}$"
    if (
        given is not None
        and not cdk.Token.is_unresolved(given)
        and (not isinstance(given, str) or not re.match(pattern, given))
    ):
        raise refuse(
            "stack_set_name",
            given,
            "a StackSet's name starts with a letter, then up to 127 letters, digits or hyphens",
            "pass a name such as 'safe-queue-hook'",
        )
    return given


def stack_set_name(scope: Construct, given: str | None, prefix: str) -> str:
    """Return ``given`` (checked against a StackSet name's pattern), else one derived."""
    if check_stack_set_name(given) is not None:
        return str(given)
    return f"{prefix}{re.sub(r'[^A-Za-z0-9]', '', cdk.Names.unique_id(scope))}"[:128]
