"""``python -m toolsmith.evals.groundtruth [--check] [--python PY]``: write or check the suites."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolsmith.errors import ToolsmithError
from toolsmith.evals.groundtruth.build import SUITE_DIR, build, differences, write


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolsmith.evals.groundtruth",
        description="Compute the suites' ground truth with the pinned packages and write the .jsonl files.",
    )
    parser.add_argument("--check", action="store_true", help="recompute and fail if a committed file differs")
    parser.add_argument("--python", type=Path, help="a Python that already holds the pinned packages")
    parser.add_argument("--suites", type=Path, default=SUITE_DIR, help="the folder of the .jsonl files")
    args = parser.parse_args(argv)
    try:
        texts = build(args.python, args.suites)
    except ToolsmithError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not args.check:
        for path in write(texts, args.suites):
            print(f"wrote {path}")
        return 0
    found = differences(texts, args.suites)
    for diff in found:
        print(f"{diff.path}: {diff.detail} from what the pinned packages compute", file=sys.stderr)
    if found:
        print("run `python -m toolsmith.evals.groundtruth` and review the diff", file=sys.stderr)
        return 1
    print(f"{len(texts)} suites match their computed ground truth")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
