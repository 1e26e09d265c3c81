"""Guards the program enforces, whatever the prompt says.

Each guard is a small pure decision over the task's :class:`TaskContext`: it returns a
message when it steps in and ``None`` otherwise. The toolbox and the agent loop call
them and emit :class:`~toolsmith.events.GuardFired`; this module never acts itself.

* ``reuse_first``: no ``web_search`` or ``create_tool`` before ``search_tools``, and
  one reminder when search found tools that were never tried;
* ``unlocking``: a library tool is callable only once search returned it in this task
  or the agent just created it (enforced by the toolbox, message here);
* ``verify_before_create``: lives in the ``create_tool`` meta-tool;
* ``nudge``: verified real data but answering without creating or reusing a tool;
* ``language``: a task in Chinese, Japanese or Korean answered without any such text;
* ``repeat``: the same failing call three times ends with an intervention.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from typing import Any

from toolsmith.context import TaskContext

REPEAT_LIMIT = 3
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]")


def reuse_first(ctx: TaskContext, name: str, reminded: set[str]) -> str | None:
    """Refuse building before searching; remind once about untried search hits."""
    if name not in ("web_search", "create_tool"):
        return None
    if not ctx.searched:
        return (
            f"{name} refused: call search_tools first. A stored tool may already do this task, "
            "and reusing it is cheaper and already verified."
        )
    untried = sorted(h for h in ctx.search_hits if h in ctx.unlocked and not ctx.called(h))
    if name == "web_search" and untried and "web_search" not in reminded and not ctx.library_calls:
        reminded.add("web_search")
        return (
            f"search_tools found {', '.join(untried)}, which you have not tried. If one fits the "
            "task, call it now. If none fits, call web_search again and it will run."
        )
    return None


def unlocking_message(name: str) -> str:
    return (
        f"{name} is in the tool library but locked in this task: call search_tools with what "
        "you need first, and call the tool once the search has returned it."
    )


def nudge(ctx: TaskContext, nudges_used: int, max_nudges: int) -> str | None:
    """A reminder to store or reuse a tool before answering with verified data."""
    if nudges_used >= max_nudges or not ctx.allow_create:
        return None
    if not ctx.verified or ctx.created or ctx.used_library_tool:
        return None
    return (
        "You verified real data with code_interpreter but have not saved a tool. Before "
        "answering, call create_tool to wrap the verified code as a general, parameterised "
        "tool, then call that tool and answer from its output."
    )


def language(task: str, answer: str, reminded: bool) -> str | None:
    """One reminder when a CJK task gets an answer with no CJK text."""
    if reminded or not _CJK.search(task) or _CJK.search(answer):
        return None
    return (
        "The task is not written in English: give the final answer in the task's own "
        "language, and keep naming the data source."
    )


class RepeatTracker:
    """Counts identical failing calls so a loop of the same mistake gets stopped."""

    def __init__(self, limit: int = REPEAT_LIMIT) -> None:
        self.limit = limit
        self.failures: Counter[str] = Counter()

    @staticmethod
    def key(name: str, arguments: Any) -> str:
        try:
            canonical = json.dumps(arguments, sort_keys=True, ensure_ascii=False, default=str)
        except (TypeError, ValueError):
            canonical = repr(arguments)
        return f"{name}:{canonical}"

    def record(self, name: str, arguments: Any, ok: bool) -> str | None:
        """Record an outcome; return an intervention once the limit is reached."""
        key = self.key(name, arguments)
        if ok:
            self.failures.pop(key, None)
            return None
        self.failures[key] += 1
        if self.failures[key] < self.limit:
            return None
        return (
            f"This exact {name} call has now failed {self.failures[key]} times. Stop repeating it: "
            "change the arguments, try a different library or approach, or tell the user "
            "honestly that it cannot be done."
        )
