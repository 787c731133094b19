"""Build and synthesize one benchmark app, as `cdk synth` runs `python app.py`.

python -m benchmarks.run_app COUNT [--per-stack N] [--hand-wired] [--checks] [--nag] [--split]
    [--seed-mistake]

Run by the CDK CLI (``cdk synth --app "python -m benchmarks.run_app ..."``), it writes the
cloud assembly where the CLI says (``CDK_OUTDIR``); run alone, into a temporary directory.
"""

from __future__ import annotations

import argparse
import os
import tempfile

from benchmarks.apps import consumers_app


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("count", type=int)
    parser.add_argument("--per-stack", type=int, default=40)
    parser.add_argument("--hand-wired", action="store_true")
    parser.add_argument("--checks", action="store_true")
    parser.add_argument("--nag", action="store_true")
    parser.add_argument("--split", action="store_true")
    parser.add_argument("--seed-mistake", action="store_true")
    args = parser.parse_args()
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
