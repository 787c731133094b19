"""Fuzzing the template reader: any file is checked or refused as input, never a crash.

Generated and hostile template files (``tests/template_fuzz.py``) go through ``check_paths``.
Each must give a report or an input error (exit 2) within the time allowed; a crash (any
other exception) or a hang fails. This run draws a sample; ``benchmarks/fuzz_loader.py``
runs 10,000 and more under a memory limit (results in ``benchmarks/README.md``).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from tests.template_fuzz import outcome, template_files


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(template_files())
def test_any_file_is_checked_or_refused_as_input_never_a_crash(data: bytes) -> None:
    # GIVEN any file WHEN it is checked THEN a report or an input error, in bounded time
    result, seconds, _ = outcome(data, seconds=5.0)
    assert result in ("report", "input error")
    assert seconds < 5.0


def test_the_fuzzer_reaches_both_outcomes() -> None:
    # The run above is only worth its inputs: valid templates are checked, hostile refused.
    assert outcome(b"Resources:\n  Q: {Type: AWS::SQS::Queue}\n")[0] == "report"
    result, _, message = outcome(b'{"Resources": ' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert (result, "nested more than 100 levels deep" in message) == ("input error", True)
