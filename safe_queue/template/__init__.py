"""Check CloudFormation, SAM and cdk.out templates: the adapter behind ``safe-queue check``.

Every path given is read (JSON or YAML templates with the short-form tags, SAM templates,
``cdk.out`` cloud assemblies with their nested stages) and treated as one deployment:
``Fn::ImportValue`` is resolved against the ``Export`` names of all their outputs. Each
SQS event source mapping (``AWS::Lambda::EventSourceMapping``, or a SAM function's
``Type: SQS`` event) becomes :class:`~safe_queue.engine.MappingFacts`, which the engine
evaluates. No CDK, no boto3.

Examples
--------
>>> import tempfile, pathlib
>>> template = '''
... Resources:
...   Queue:
...     Type: AWS::SQS::Queue
...     Properties: {VisibilityTimeout: 60}
...   Fn:
...     Type: AWS::Lambda::Function
...     Properties: {Timeout: 180}
...   Mapping:
...     Type: AWS::Lambda::EventSourceMapping
...     Properties:
...       EventSourceArn: !GetAtt Queue.Arn
...       FunctionName: !Ref Fn
...       BatchSize: 1
... '''
>>> with tempfile.TemporaryDirectory() as directory:
...     path = pathlib.Path(directory, "template.yaml")
...     _ = path.write_text(template)
...     report = check_paths([path])
>>> report.mappings_checked
1
>>> [(f.rule_id, f.resource, f.line, f.where.queue) for f in report.findings]
... # doctest: +NORMALIZE_WHITESPACE
[('safe-queue:visibility-below-function-timeout', 'Mapping', 9, 'Queue'),
 ('safe-queue:no-dead-letter-queue', 'Mapping', 9, 'Queue')]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from safe_queue.engine import Finding, evaluate_all
from safe_queue.report import Report, ReportedFinding
from safe_queue.template._acknowledge import attach_all
from safe_queue.template._deployment import Deployment
from safe_queue.template._facts import CheckedMapping, MappingSource, build_mapping, find_mappings
from safe_queue.template._language import expand
from safe_queue.template._load import (
    TemplateError,
    TemplateFile,
    TemplateLimitWarning,
    expand_paths,
    load_template,
    warn_over_limits,
)
from safe_queue.template._parameters import ParameterError, check_parameters

__all__ = [
    "CheckedMapping",
    "Judged",
    "MappingSource",
    "ParameterError",
    "TemplateError",
    "TemplateFile",
    "TemplateLimitWarning",
    "check_paths",
    "judge",
    "load_template",
    "mappings",
]


def mappings(
    paths: Sequence[str | Path], parameters: Mapping[str, str] | None = None
) -> tuple[list[TemplateFile], list[CheckedMapping]]:
    """Read ``paths`` as one deployment and build the facts of every SQS mapping in them.

    Returns
    -------
    tuple
        The templates read, and one :class:`CheckedMapping` per SQS event source mapping
        (mappings of streams, Kafka, MQ and DocumentDB are left out).

    Raises
    ------
    TemplateError
        A path is missing, unreadable, unparseable or not a template, or an acknowledgement
        in it is malformed, has no reason or names no rule.
    ParameterError
        ``parameters`` names a parameter that no template declares, or gives a value that
        is not a number to a ``Number`` parameter.
    """
    templates = expand_paths(paths)
    check_parameters(templates, parameters or {})
    deployment = Deployment(templates, parameters)
    for template in templates:  # AWS::LanguageExtensions: Fn::ForEach loops, before anything
        expand(deployment, template)
    warn_over_limits(templates)
    # Find every mapping first: SAM's generated queues are added to their templates here.
    sources = [source for template in templates for source in find_mappings(template)]
    checked: list[CheckedMapping] = []
    for source in sources:
        mapping = build_mapping(deployment, source)
        if mapping is not None:
            checked.append(mapping)
    return templates, attach_all(templates, checked)


@dataclass(frozen=True)
class Judged:
    """A run's templates, and each SQS mapping with the engine's findings on it."""

    templates: list[TemplateFile]
    mappings: list[tuple[CheckedMapping, list[Finding]]]


def judge(paths: Sequence[str | Path], parameters: Mapping[str, str] | None = None) -> Judged:
    """Read ``paths`` as one deployment and judge every SQS mapping.

    :func:`mappings`, then the engine's :func:`~safe_queue.engine.evaluate_all`: what the
    CDK plugin and :func:`check_paths` report from.

    Raises
    ------
    TemplateError, ParameterError
        As :func:`mappings`.
    """
    templates, checked = mappings(paths, parameters)
    verdicts = evaluate_all([mapping.facts for mapping in checked])
    return Judged(templates, list(zip(checked, verdicts, strict=True)))


def check_paths(
    paths: Sequence[str | Path],
    parameters: Mapping[str, str] | None = None,
    *,
    skip_reported_by_construct: bool = False,
) -> Report:
    """Check every SQS -> Lambda mapping in the given templates, as one deployment.

    Parameters
    ----------
    paths
        Template files (JSON or YAML, SAM included) and ``cdk.out`` directories.
    parameters
        Template parameter values by name (``--parameter``); a parameter not given takes
        its ``Default``, and the findings say which value was assumed.
    skip_reported_by_construct
        Drop findings whose rule id the mapping's ``Metadata["safe-queue:reported"]``
        lists: the ``SafeQueueConsumer`` already reported them (one verdict, not two).

    Returns
    -------
    Report
        One :class:`~safe_queue.report.ReportedFinding` per finding: ``resource`` is the
        mapping's logical id, ``template`` the template file, ``line`` its line where
        known, and ``where`` has ``queue`` and ``function`` (logical ids, or the queue's
        ARN when it is not in the run, else ``None``), ``stack`` (the cloud assembly
        artifact id, for ``cdk.out``) and ``parameters`` (the values assumed).

    Raises
    ------
    TemplateError
        A path is missing, unreadable, unparseable or not a template.
    ParameterError
        ``parameters`` names a parameter that no template declares.
    """
    judged = judge(paths, parameters)
    report = Report(sources=[template.path for template in judged.templates])
    for mapping, findings in judged.mappings:
        report.mappings_checked += 1
        skipped = mapping.reported_by_construct if skip_reported_by_construct else frozenset()
        source = mapping.source
        for finding in findings:
            if finding.rule_id in skipped:
                continue
            report.findings.append(
                ReportedFinding(
                    finding,
                    resource=source.logical_id,
                    template=source.template.path,
                    line=source.line,
                    where=mapping.where,
                )
            )
    return report
