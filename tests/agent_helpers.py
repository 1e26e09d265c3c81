"""Shared pieces for agent tests: a wired agent behind a real local HTTP model endpoint."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from toolsmith.agent.context import WebAccess
from toolsmith.agent.loop import Agent
from toolsmith.config import Settings
from toolsmith.config.providers import ProviderConfig
from toolsmith.events import Event
from toolsmith.library import ToolLibrary
from toolsmith.model.client import ChatModel
from toolsmith.sandbox import Sandbox
from toolsmith.testing import ScriptedModel, ScriptedServer, final, last_tool_result, reply, tool_call

DAYS_CODE = """\
from datetime import date


def run(start: str, end: str) -> dict:
    return {"days": (date.fromisoformat(end) - date.fromisoformat(start)).days}
"""
DAYS_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
    "required": ["start", "end"],
}
VERIFY = "from datetime import date\nprint((date(2020, 3, 1) - date(2020, 1, 1)).days)\n"


def make_settings(home: Path, **overrides: Any) -> Settings:
    settings = Settings(home=home)
    limits = replace(settings.limits, timeout_s=15.0)
    return replace(settings, network=False, limits=limits, **overrides)


@dataclass
class Web:
    """Recorded fake web access for loop tests (the web meta-tools have their own tests)."""

    searches: list[str] = field(default_factory=list)
    reads: list[str] = field(default_factory=list)

    def access(self) -> WebAccess:
        def search(query: str, n: Any) -> dict[str, Any]:
            self.searches.append(query)
            return {
                "ok": True,
                "backend": "fake",
                "results": [
                    {
                        "title": "python-dateutil",
                        "url": "http://127.0.0.1:9/project/python-dateutil/",
                        "snippet": "dates",
                    }
                ],
            }

        def read(url: str) -> dict[str, Any]:
            self.reads.append(url)
            return {"ok": True, "url": url, "final_url": url, "text": "docs", "untrusted": True}

        return WebAccess(search=search, read=read)


@dataclass
class Rig:
    """A ScriptedModel served over HTTP, the real ChatModel, library and sandbox."""

    model: ScriptedModel
    server: ScriptedServer
    library: ToolLibrary
    sandbox: Sandbox
    settings: Settings
    web: Web
    events: list[Event] = field(default_factory=list)

    def agent(self, **kwargs: Any) -> Agent:
        config = ProviderConfig(
            provider="custom", model="scripted", base_url=self.server.base_url, api_key="test-key", key_variable=None
        )
        chat = ChatModel(config, timeout=10.0)
        return Agent(
            model=chat,
            library=self.library,
            sandbox=self.sandbox,
            settings=self.settings,
            web=self.web.access(),
            on_event=self.events.append,
            **kwargs,
        )

    def of_type(self, kind: str) -> list[Event]:
        return [e for e in self.events if e.type == kind]

    def guards(self) -> list[str]:
        return [e.guard for e in self.of_type("guard_fired")]


@contextmanager
def rig(home: Path, **settings_overrides: Any) -> Iterator[Rig]:
    settings = make_settings(home, **settings_overrides)
    model = ScriptedModel(name="scripted")
    library = ToolLibrary.open(settings)
    try:
        with ScriptedServer(model, strict=True) as server:
            yield Rig(
                model=model, server=server, library=library, sandbox=Sandbox(settings), settings=settings, web=Web()
            )
    finally:
        library.close()


def create_days_tool(**overrides: Any) -> Any:
    args = {
        "name": "days_between",
        "description": "Count the days between two ISO dates.",
        "parameters": DAYS_PARAMS,
        "code": DAYS_CODE,
        "test_args": {"start": "2020-01-01", "end": "2020-03-01"},
        "keywords": ["dates", "日期"],
    }
    args.update(overrides)
    return tool_call("create_tool", args)


def answer_from_tool(messages: list[dict[str, Any]], tools: Any = None) -> Any:
    """A final answer whose number is read from the last tool result in the transcript."""
    result = last_tool_result(messages)
    return final(f"{result['result']['days']} days (source: {result['source']})")


def evolve_script() -> list[Any]:
    return [
        reply(tool_call("code_interpreter", {"code": VERIFY})),
        reply(create_days_tool()),
        reply(tool_call("days_between", {"start": "2020-01-01", "end": "2020-03-01"})),
        answer_from_tool,
    ]
