"""SAM differential on a fixed sample: verdicts on SAM input == verdicts on SAM's output.

    .venv/bin/python -m benchmarks.sam_differential               # 2,000 templates
    .venv/bin/python -m benchmarks.sam_differential --examples 5000

The same property and strategy as ``tests/test_template_sam_differential.py`` (which draws
50 templates each run, to keep the suite quick), on a fixed, derandomized sample: each
generated SAM template is transformed by ``aws-sam-translator`` and both are checked; the
(mapping id, rule id, level) sets and the mapping counts must be equal. Prints the counts,
any mismatch (the template and both verdict sets), and the time taken; exits 1 on a mismatch.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, given, settings

from tests.sam_differential import sam_templates, translate, verdicts


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=2_000)
    args = parser.parse_args()
    counts: Counter[str] = Counter()
    mismatches: list[dict[str, Any]] = []

    @settings(
        max_examples=args.examples,
        derandomize=True,
        database=None,
        deadline=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(sam_templates())
    def compare(template: dict[str, Any]) -> None:
        translated = translate(template)
        expected, actual = verdicts(template), verdicts(translated)
        counts["templates"] += 1
        counts["mappings"] += expected[0]
        counts["findings"] += len(expected[1])
        counts["templates with findings"] += bool(expected[1])
        if expected != actual:
            mismatches.append({"template": template, "sam": expected, "cloudformation": actual})

    started = time.perf_counter()
    compare()
    seconds = time.perf_counter() - started
    print(f"Python {platform.python_version()}, {platform.machine()}")
    print(
        f"{counts['templates']} templates, {counts['mappings']} SQS mappings,"
        f" {counts['findings']} findings ({counts['templates with findings']} templates with"
        f" findings): {len(mismatches)} mismatches, {seconds:.1f} s"
    )
    for mismatch in mismatches[:5]:
        print(json.dumps(mismatch, default=sorted))
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
