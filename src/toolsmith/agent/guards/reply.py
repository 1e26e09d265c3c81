"""Reminders about the shape of the model's last reply: cut off at the output limit, or empty."""

from __future__ import annotations

from typing import ClassVar

from toolsmith.agent import prompts
from toolsmith.agent.context import TaskContext
from toolsmith.agent.guards.base import Draft, Guard


class Truncated(Guard[None]):
    """A reply cut off at the model's output limit is not an answer: ask once for a shorter one."""

    name: ClassVar[str] = "truncated"
    limit: ClassVar[int | None] = 1

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        return prompts.TRUNCATED_NOTE if draft.finish_reason == "length" else None


class EmptyReply(Guard[None]):
    """A reply with neither text nor a tool call gets two reminders, then ends the task."""

    name: ClassVar[str] = "empty_reply"
    limit: ClassVar[int | None] = 2

    def before_answer(self, ctx: TaskContext, draft: Draft) -> str | None:
        return None if draft.text else prompts.EMPTY_REPLY_NOTE
