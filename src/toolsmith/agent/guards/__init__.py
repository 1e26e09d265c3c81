"""Guards the program enforces, whatever the prompt says.

Each guard is one module here holding one :class:`Guard` subclass; an agent is built
with a list of them (:func:`standard_guards` by default), and
:class:`~toolsmith.agent.guards.base.GuardSet` calls them at fixed hook points. The standard
set, in the order they are asked:

* before a tool call: ``turn_cap``, ``unlocking``, ``reuse_first``,
  ``verify_before_create``, ``repeat``;
* after a tool result: ``repeat``;
* before a final answer: ``truncated``, ``empty_reply``, ``nudge``, ``language``,
  ``grounding``.

Adding a guard means writing one module and listing it in :func:`standard_guards`.
"""

from __future__ import annotations

from typing import Any

from toolsmith.agent.guards.base import Call, Draft, Guard, GuardSet, call_key
from toolsmith.agent.guards.grounding import Grounding, source_names, ungrounded_numbers
from toolsmith.agent.guards.language import Language, task_language, wrong_language
from toolsmith.agent.guards.nudge import Nudge
from toolsmith.agent.guards.repeat import Repeat
from toolsmith.agent.guards.reply import EmptyReply, Truncated
from toolsmith.agent.guards.reuse_first import ReuseFirst
from toolsmith.agent.guards.turn_cap import TurnCap
from toolsmith.agent.guards.unlocking import Unlocking
from toolsmith.agent.guards.verify import VerifyBeforeCreate


def standard_guards() -> list[Guard[Any]]:
    """The guards every agent runs unless it is built with its own list."""
    return [
        TurnCap(),
        Unlocking(),
        ReuseFirst(),
        VerifyBeforeCreate(),
        Repeat(),
        Truncated(),
        EmptyReply(),
        Nudge(),
        Language(),
        Grounding(),
    ]


__all__ = [
    "Call",
    "Draft",
    "EmptyReply",
    "Grounding",
    "Guard",
    "GuardSet",
    "Language",
    "Nudge",
    "Repeat",
    "ReuseFirst",
    "Truncated",
    "TurnCap",
    "Unlocking",
    "VerifyBeforeCreate",
    "call_key",
    "source_names",
    "standard_guards",
    "task_language",
    "ungrounded_numbers",
    "wrong_language",
]
