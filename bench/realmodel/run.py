"""Run a suite through ``toolsmith run`` against an OpenAI-compatible endpoint (the rig).

    python bench/realmodel/run.py --suite day_of_use --first 14 --home /tmp/day-home --output day.json
    python bench/realmodel/run.py --suite pairs --ids pair-01,pair-02 --home /tmp/p --output pairs.json
    python bench/realmodel/run.py --suite day_of_use --distractors 60 --home /tmp/d60 --output d60.json

The tasks run in order in one ``toolsmith run`` process, so they share one library (the
home's). With ``--distractors N`` the home is first seeded with N distractor tools
through the save-time gate. The endpoint defaults to the rig's (``bridge.py``): start
it and its player first, see README.md. After the run, the output gets the suite's name
and the task ids, which ``tally.py`` reads.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

from toolsmith.evals.checks import SuiteTask, load_suite

RIG_URL = "http://127.0.0.1:8765/v1"


def select(tasks: list[SuiteTask], *, first: int | None, ids: list[str] | None) -> list[SuiteTask]:
    """The tasks to run, in the suite's order: the first N, or the ones named."""
    if ids:
        known = {t.id for t in tasks}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise SystemExit(f"unknown task ids: {', '.join(unknown)}")
        wanted = set(ids)
        return [t for t in tasks if t.id in wanted]
    return tasks[:first] if first else tasks


def command(tasks: list[SuiteTask], output: Path, *, no_create: bool, verbose: bool) -> list[str]:
    """The ``toolsmith run`` command line for these tasks (each task one argument)."""
    cmd = [sys.executable, "-m", "toolsmith", "run", *(t.input for t in tasks), "--output", str(output)]
    if no_create:
        cmd.append("--no-create")
    if verbose:
        cmd.append("--verbose")
    return cmd


def environment(args: argparse.Namespace) -> dict[str, str]:
    """The endpoint, the model and a home of the run's own (nothing else is touched)."""
    env = dict(os.environ)
    env.update(
        {
            "OPENAI_API_KEY": args.api_key,
            "OPENAI_BASE_URL": args.base_url,
            "LLM_MODEL": args.model,
            "LLM_PROVIDER": "openai",
            "TOOLSMITH_HOME": str(args.home.resolve()),
        }
    )
    env.pop("TOOLSMITH_LIBRARY_URL", None)  # the home's own SQLite library, not a shared one
    return env


def seed(home: Path, n: int) -> list[str]:
    from toolsmith.config import Settings
    from toolsmith.evals.distractors import seed_library
    from toolsmith.library import ToolLibrary
    from toolsmith.library.fresh import library_in_use
    from toolsmith.sandbox import Sandbox

    settings = Settings.load(home=home.resolve())
    with library_in_use(settings), ToolLibrary.open(settings) as library:
        sandbox = Sandbox(settings)
        try:
            return seed_library(library, n, sandbox=sandbox)
        finally:
            sandbox.close()


def record_suite(output: Path, suite: str, tasks: list[SuiteTask], distractors: int) -> None:
    """Name the suite and the task ids in the output, for tally.py."""
    if not output.exists():
        return
    data = json.loads(output.read_text(encoding="utf-8"))
    data.update({"suite": suite, "suite_ids": [t.id for t in tasks], "distractors": distractors})
    output.write_text(json.dumps(data, ensure_ascii=False, indent=2), encoding="utf-8")


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Run a suite through toolsmith against a real model (the rig).")
    parser.add_argument("--suite", default="day_of_use", help="day_of_use, pairs, or a .jsonl file")
    parser.add_argument("--first", type=int, help="only the first N tasks")
    parser.add_argument("--ids", help="only these task ids, comma-separated (run in the suite's order)")
    parser.add_argument("--home", type=Path, required=True, help="TOOLSMITH_HOME of the run (its library)")
    parser.add_argument("--distractors", type=int, default=0, help="seed the home with N distractor tools first")
    parser.add_argument("--output", type=Path, required=True, help="where toolsmith run writes its record")
    parser.add_argument("--base-url", default=RIG_URL, help=f"the endpoint (default {RIG_URL})")
    parser.add_argument("--model", default="brain", help="the model name (default brain)")
    parser.add_argument("--api-key", default="sk-rig", help="the endpoint's key (default sk-rig)")
    parser.add_argument("--no-create", action="store_true", help="the control: no create_tool")
    parser.add_argument("--verbose", action="store_true", help="toolsmith run --verbose")
    parser.add_argument("--dry-run", action="store_true", help="print the tasks and the command, run nothing")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse(argv)
    tasks = select(load_suite(args.suite), first=args.first, ids=args.ids.split(",") if args.ids else None)
    cmd = command(tasks, args.output, no_create=args.no_create, verbose=args.verbose)
    if args.dry_run:
        for t in tasks:
            print(f"{t.id}\t{t.kind}\t{t.family}\t{t.input}")
        print(" ".join(cmd[:4]), f"<{len(tasks)} tasks>", " ".join(cmd[4 + len(tasks) :]))
        return 0
    args.home.mkdir(parents=True, exist_ok=True)
    if args.distractors:
        print(f"seeded {len(seed(args.home, args.distractors))} distractor tools into {args.home}", file=sys.stderr)
    done = subprocess.run(cmd, env=environment(args), check=False)
    record_suite(args.output, args.suite, tasks, args.distractors)
    print(
        f"toolsmith run exited {done.returncode}; tally: python bench/realmodel/tally.py {args.output}", file=sys.stderr
    )
    return done.returncode


if __name__ == "__main__":
    raise SystemExit(main())
