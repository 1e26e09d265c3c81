"""``python -m toolsmith.evals.distractors --home DIR --n 60``: seed a library with distractors."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from toolsmith.config import Settings
from toolsmith.errors import ToolsmithError
from toolsmith.evals.distractors import CATALOGUE, MAX_DISTRACTORS, seed_library
from toolsmith.fresh import library_in_use
from toolsmith.library import ToolLibrary
from toolsmith.runtime import Sandbox


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m toolsmith.evals.distractors",
        description="Store real, working tools from unrelated domains in a library, through the save-time gate.",
    )
    parser.add_argument("--home", type=Path, help="the toolsmith home (default: TOOLSMITH_HOME or the usual one)")
    parser.add_argument("--n", type=int, default=60, help=f"how many tools, 0 to {MAX_DISTRACTORS} (default 60)")
    parser.add_argument("--list", action="store_true", help="only list the catalogue, store nothing")
    args = parser.parse_args(argv)
    if args.list:
        for entry in CATALOGUE[: args.n]:
            print(f"{entry.name}\t{entry.family}\t{entry.description}")
        return 0
    try:
        settings = Settings.load(home=args.home)
        with library_in_use(settings), ToolLibrary.open(settings) as library:
            sandbox = Sandbox(settings)
            try:
                names = seed_library(library, args.n, sandbox=sandbox)
            finally:
                sandbox.close()
    except ToolsmithError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"stored {len(names)} distractor tools in {library!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
