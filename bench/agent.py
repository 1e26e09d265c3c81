"""Benchmark: what agent tasks cost in model calls, with #10's behaviour and pre-retrieval on and off.

Part 1, the scenario (``agent_scenario.py``): seven tasks on one growing library, one per
failure mode of issue #10 (cross-lingual reuse, an out-of-scope pre-retrieval, an
enum-default tool, a run that printed only errors, a composed task), run with the new
behaviour and with it switched off, in the same run. Printed: model calls and prompt
characters per task, before and after. Targets: every reuse task 2 model calls, every
evolve task at most 5.

Part 2, what an evolve task and a reuse task cost, with pre-retrieval on and off.

A scripted model, served over a real local OpenAI-compatible endpoint and called through
the real SDK, drives the real agent, gate, sandbox and library. The script adapts to what
the program already did (with pre-retrieval, the library search has happened before the
first model call), so both settings run the same pipeline. Printed per task kind and
setting: model calls, prompt characters sent, tokens, and median wall time.

    python bench/agent.py [--repeats N] [--scenario-only]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_scenario import run_scenario
from toolsmith.agent.loop import Agent
from toolsmith.agent.offline import TASKS, evolve_policy, no_web, reuse_policy
from toolsmith.config import Settings
from toolsmith.config.providers import ProviderConfig
from toolsmith.library import ToolLibrary
from toolsmith.model import ModelReply
from toolsmith.model.client import ChatModel
from toolsmith.records import TaskResult
from toolsmith.sandbox import Sandbox
from toolsmith.testing import ScriptedModel, ScriptedServer

EVOLVE_TASK, REUSE_TASK = TASKS


def policy(messages: list[dict[str, Any]], tools: Any) -> ModelReply:
    """The offline self-test's scripts, minus its deliberately broken tool."""
    if str(messages[1]["content"]).startswith(EVOLVE_TASK):
        return evolve_policy(messages, tools, offer_broken=False)
    return reuse_policy(messages, tools)


def run_pair(pre_retrieval: bool) -> tuple[TaskResult, TaskResult]:
    with tempfile.TemporaryDirectory(prefix="toolsmith-bench-") as tmp:
        settings = replace(Settings(home=Path(tmp)), network=False)
        model = ScriptedModel([policy] * 40, name="scripted")
        with ScriptedServer(model) as server, ToolLibrary.open(settings) as library:
            chat = ChatModel(ProviderConfig("custom", "scripted", server.base_url, "bench", None))
            agent = Agent(
                model=chat,
                library=library,
                sandbox=Sandbox(settings),
                settings=settings,
                web=no_web(),
                pre_retrieval=pre_retrieval,
            )
            evolve = agent.run_task(EVOLVE_TASK, index=0)
            reuse = agent.run_task(REUSE_TASK, index=1)
    for result in (evolve, reuse):
        if result.status != "answered":
            raise SystemExit(f"benchmark task failed: {result.answer}")
    return evolve, reuse


def scenario() -> bool:
    """Part 1: print the scenario's figures; True when its targets hold."""
    after, before = run_scenario(new=True), run_scenario(new=False)
    print("Scenario: model calls per task, #10 and #18 behaviour off (before) and on (after), same run")
    print(f"{'#':<3}{'task':<48}{'before':>8}{'after':>7}{'prompt chars before':>21}{'after':>9}{'1st request':>13}")
    ok = True
    for i, (new, old) in enumerate(zip(after, before, strict=True)):
        kind = new.task.kind
        target = 2 if kind.startswith("reuse") else 5 if kind.startswith("evolve") else None
        held = target is None or new.result.model_calls <= target
        ok &= held and new.result.status == "answered"
        print(
            f"{i + 1:<3}{kind:<48}{old.result.model_calls:>8}{new.result.model_calls:>7}"
            f"{old.result.prompt_chars:>21}{new.result.prompt_chars:>9}"
            f"{new.first_request_chars - old.first_request_chars:>+13}"
            f"{'' if held else '  (target ' + str(target) + ' missed)'}"
        )
    total_old = sum(r.result.model_calls for r in before)
    total_new = sum(r.result.model_calls for r in after)
    chars_old = sum(r.result.prompt_chars for r in before)
    chars_new = sum(r.result.prompt_chars for r in after)
    print(
        f"total: {total_old} -> {total_new} model calls ({total_new / total_old:.2f}x); prompt chars "
        f"{chars_old} -> {chars_new} ({chars_new / chars_old:.2f}x). '1st request': extra characters in a "
        "task's first request after (the catalogue and the longer prompt)."
    )
    print(f"targets (reuse tasks 2 calls, evolve tasks <= 5): {'PASS' if ok else 'FAIL'}\n")
    return ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--scenario-only", action="store_true", help="run part 1 only")
    args = parser.parse_args(argv)
    held = scenario()
    if args.scenario_only:
        return 0 if held else 1
    rows: dict[tuple[str, bool], list[TaskResult]] = {}
    for pre in (True, False):
        for _ in range(max(args.repeats, 1)):
            evolve, reuse = run_pair(pre)
            rows.setdefault(("evolve", pre), []).append(evolve)
            rows.setdefault(("reuse", pre), []).append(reuse)
    print(
        f"toolsmith agent benchmark ({args.repeats} runs each, median wall time; sandbox "
        f"{Sandbox(Settings(home=Path(tempfile.gettempdir()))).backend.name})"
    )
    print(f"{'task':<8}{'pre-retrieval':>15}{'model calls':>13}{'prompt chars':>14}{'tokens':>9}{'wall ms':>10}")
    for (kind, pre), results in rows.items():
        first = results[0]
        wall = statistics.median(r.wall_s for r in results) * 1000
        print(
            f"{kind:<8}{'on' if pre else 'off':>15}{first.model_calls:>13}{first.prompt_chars:>14}"
            f"{first.total_tokens:>9}{wall:>10.1f}"
        )
    on, off = rows[("reuse", True)][0], rows[("reuse", False)][0]
    ratio = on.prompt_chars / off.prompt_chars
    print(
        f"\nreuse with pre-retrieval: {on.model_calls} model calls (target <= 2), "
        f"{off.model_calls - on.model_calls} fewer than without; prompt chars {ratio:.2f}x"
    )
    return 0 if on.model_calls <= 2 and held else 1


if __name__ == "__main__":
    started = time.monotonic()
    code = main()
    print(f"(benchmark took {time.monotonic() - started:.1f}s)", file=sys.stderr)
    raise SystemExit(code)
