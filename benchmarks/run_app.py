"""Build and synthesize one benchmark app, as `cdk synth` runs `python app.py`.

python -m benchmarks.run_app COUNT [--per-stack N] [--hand-wired] [--checks] [--nag] [--split]
    [--seed-mistake] [--without record]

``--without record`` measures what one of SafeQueueConsumer's features costs (an experiment,
not a mode of the construct): the record the consumer leaves under its function, which lets
a second consumer of the function see the first and runs every consumer's synth-time check
of the function's final timeout. Without it the consumer only sets
``SAFE_QUEUE_VISIBILITY_TIMEOUT``.

Run by the CDK CLI (``cdk synth --app "python -m benchmarks.run_app ..."``), it writes the
cloud assembly where the CLI says (``CDK_OUTDIR``); run alone, into a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import tempfile
from typing import Any

from benchmarks.apps import consumers_app


def without(features: set[str]) -> None:
    """Switch off construct features for a cost experiment (see the module docstring)."""
    if "record" in features:
        from safe_queue import keys
        from safe_queue.cdk import consumer

        def set_visibility_env(
            _c: object, _p: str, function: Any, visibility: int, *_: object
        ) -> None:
            function.add_environment(keys.VISIBILITY_TIMEOUT_ENV, str(visibility))

        consumer.set_visibility_env = set_visibility_env  # type: ignore[assignment]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("count", type=int)
    parser.add_argument("--per-stack", type=int, default=40)
    parser.add_argument("--hand-wired", action="store_true")
    parser.add_argument("--checks", action="store_true")
    parser.add_argument("--nag", action="store_true")
    parser.add_argument("--split", action="store_true")
    parser.add_argument("--seed-mistake", action="store_true")
    parser.add_argument("--without", default="", help="record: see the docstring")
    args = parser.parse_args()
    without(set(filter(None, args.without.split(","))))
    with tempfile.TemporaryDirectory() as temporary:
        app = consumers_app(
            args.count,
            per_stack=args.per_stack,
            hand_wired=args.hand_wired,
            checks=args.checks,
            nag=args.nag,
            split=args.split,
            seed_mistake=args.seed_mistake,
            outdir=os.environ.get("CDK_OUTDIR") or temporary,
        )
        try:
            app.synth()
        except RuntimeError as error:
            # cdk-nag reports the benchmark functions' managed policies: the work is done
            # (under the CDK CLI the app does not raise: the CLI reads the report)
            if not (args.nag and str(error).startswith("ValidationFailed")):
                raise


if __name__ == "__main__":
    main()
