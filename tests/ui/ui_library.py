"""A tool library and trajectories made by the real agent, for the UI tests.

Scripted models (no real model is ever called) drive the real agent loop, gate and
sandbox through four runs in one TOOLSMITH_HOME:

1. the offline self-test's evolve task: ``days_between@1`` is built and stored active;
2. its reuse task: the stored tool answers;
3. with ``review = "required"``, a repair of ``days_between`` that adds weeks: ``@2``
   waits for review, with a diff against ``@1``;
4. with review required, a new ``word_count`` whose description carries a ``<script>``
   element, so the pages must show it as text.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from toolsmith.agent import offline
from toolsmith.agent.session import SessionReport, run_session
from toolsmith.config import Settings
from toolsmith.model import ModelReply
from toolsmith.testing import ScriptedModel, final, reply, tool_call

TOKEN = "test-token-0123456789abcdef"
BASE = "http://127.0.0.1:8765"
HOSTILE = (
    'Count words. <script>window.__pwned = 1; document.title = "pwned";</script> <img src=x onerror="window.__pwned=2">'
)
WORDS_CODE = '''\
"""Count the words in a text."""


def run(text: str) -> dict:
    return {"words": len(text.split())}
'''
WEEKS_CODE = offline.WORKING_TOOL.replace(
    'return {"start": start, "end": end, "days": (last - first).days}',
    'days = (last - first).days\n    return {"start": start, "end": end, "days": days, "weeks": days // 7}',
)
assert WEEKS_CODE != offline.WORKING_TOOL


def _stored(messages: list[dict[str, Any]]) -> bool:
    return any(m["role"] == "tool" and "is stored" in str(m.get("content")) for m in messages)


def _creator(spec: dict[str, Any], answer: str, *, rush: bool = False) -> Any:
    """Try the code once with code_interpreter (the agent insists), then create the tool.

    ``rush`` first offers the tool untried, so the verify-before-create guard fires.
    """
    trial = spec["code"] + f"\nprint(run(**{spec['test_args']!r}))\n"

    def policy(messages: list[dict[str, Any]], tools: Any = None) -> ModelReply:
        if rush and not any(m["role"] == "tool" and "create_tool refused" in str(m.get("content")) for m in messages):
            return reply(tool_call("create_tool", spec))
        if not any(m["role"] == "tool" and '"exit_code": 0' in str(m.get("content")) for m in messages):
            return reply(tool_call("code_interpreter", {"code": trial}))
        if _stored(messages):
            return final(answer)
        return reply(tool_call("create_tool", spec))

    return policy


def _session(settings: Settings, task: str, policy: Any) -> SessionReport:
    model = ScriptedModel([policy] * settings.max_steps, name="scripted-ui")
    return run_session([task], settings=settings, model=model)


def build(home: Path, *, library_url: str | None = None) -> Settings:
    """Fill ``home`` with the library (there, or at ``library_url``) and the four trajectories."""
    settings = replace(Settings.load(home=home, env={}), network=False, max_steps=8, library_url=library_url)
    evolve = _session(settings, offline.TASKS[0], offline.evolve_policy)
    assert evolve.results[0].created == ["days_between@1"], evolve.results[0].summary()
    _session(settings, offline.TASKS[1], offline.reuse_policy)
    review = replace(settings, review="required")
    weeks = {
        "name": "days_between",
        "description": offline.DESCRIPTION + " Also gives whole weeks.",
        "parameters": offline.PARAMETERS,
        "code": WEEKS_CODE,
        "test_args": {"start": "2020-01-01", "end": "2020-03-01"},
    }
    repaired = _session(
        review, "Days and weeks between 2020-01-01 and 2020-03-01?", _creator(weeks, "Stored for review.")
    )
    assert repaired.results[0].created == ["days_between@2"], repaired.results[0].summary()
    words = {
        "name": "word_count",
        "description": HOSTILE,
        "parameters": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]},
        "code": WORDS_CODE,
        "test_args": {"text": "one two three"},
        "tests": [{"args": {"text": "a b"}, "expect": {"words": 2}}, {"args": {"text": "x"}, "contains": {"words": 1}}],
    }
    counted = _session(
        review, "How many words are in 'one two three'?", _creator(words, "Stored for review.", rush=True)
    )
    assert counted.results[0].created == ["word_count@1"], counted.results[0].summary()
    return settings
