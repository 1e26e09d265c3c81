"""End to end against the real package index: a scripted model evolves a tool around a real
package (humanize), then a second task reuses it.

Everything but the model is real: the package-index search backend, reading the package page
through the index's JSON metadata, a checked and pinned install into the sandbox's package
environment, the gate's test run, and the library.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from toolsmith.agent.loop import Agent, default_web
from toolsmith.config import Settings
from toolsmith.config.providers import ProviderConfig
from toolsmith.library import ToolLibrary
from toolsmith.model import ModelReply
from toolsmith.model.client import ChatModel
from toolsmith.sandbox import Sandbox
from toolsmith.testing import ScriptedModel, ScriptedServer, final, last_tool_result, reply, tool_call

pytestmark = pytest.mark.network

TOOL_CODE = '''\
"""Human-readable file sizes, computed by the humanize library."""
import humanize


def run(num_bytes: int, binary: bool = False) -> dict:
    return {"bytes": num_bytes, "size": humanize.naturalsize(num_bytes, binary=binary)}
'''
PARAMS = {
    "type": "object",
    "properties": {
        "num_bytes": {"type": "integer", "description": "A size in bytes."},
        "binary": {"type": "boolean", "description": "Use powers of 1024 (KiB, MiB)."},
    },
    "required": ["num_bytes"],
}


def _tool_results(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [json.loads(m["content"]) for m in messages if m["role"] == "tool"]


def _number(messages: list[dict[str, Any]]) -> int:
    import re

    return int(re.findall(r"\b\d{6,}\b", str(messages[1]["content"]))[0])


def evolve(messages: list[dict[str, Any]], tools: Any) -> ModelReply:
    """The pipeline, one step per call, reading what each real tool returned."""
    results = _tool_results(messages)
    names = [t["function"]["name"] for t in tools]
    if "humanize_file_size" in names and not any(r.get("tool") == "humanize_file_size" for r in results):
        return reply(tool_call("humanize_file_size", {"num_bytes": _number(messages)}))
    if any(r.get("tool") == "humanize_file_size" and r.get("ok") for r in results):
        result = last_tool_result(messages)
        return final(f"{_number(messages)} bytes is {result['result']['size']} (source: {result['source']})")
    searched = [r for r in results if r.get("backend")]
    if not searched:
        return reply(tool_call("web_search", {"query": "python library humanize file size bytes", "num_results": 5}))
    read = [r for r in results if "final_url" in r or "text" in r]
    if not read:
        hit = next(h for h in searched[0]["results"] if h.get("package", "").lower() == "humanize")
        return reply(tool_call("read_webpage", {"url": hit["url"]}))
    ran = [r for r in results if "exit_code" in r]
    if not ran or ran[-1]["exit_code"] != 0:
        code = "import humanize\nprint(humanize.naturalsize(123456789))\n"
        return reply(tool_call("code_interpreter", {"code": code, "pip_install": "humanize"}))
    return reply(
        tool_call(
            "create_tool",
            {
                "name": "humanize_file_size",
                "description": "Format a number of bytes as a human-readable file size (such as 1.2 GB) with humanize.",
                "parameters": PARAMS,
                "code": TOOL_CODE,
                "test_args": {"num_bytes": 123456789},
                "keywords": ["file size", "bytes", "human readable", "文件大小"],
            },
        )
    )


@pytest.fixture()
def settings(tmp_path: Path) -> Settings:
    return replace(Settings.load(home=tmp_path / "home"), search_backends=("pypi",))


def test_evolve_around_a_real_package_then_reuse(settings: Settings) -> None:
    model = ScriptedModel([evolve] * 12, name="scripted")
    with ScriptedServer(model) as server, ToolLibrary.open(settings) as library:
        chat = ChatModel(ProviderConfig("custom", "scripted", server.base_url, "test", None), timeout=30)
        events: list[Any] = []
        agent = Agent(
            model=chat,
            library=library,
            sandbox=Sandbox(settings),
            settings=settings,
            web=default_web(settings),
            on_event=events.append,
        )
        first = agent.run_task("How large is 123456789 bytes in human-readable form?")
        assert first.status == "answered", first.answer
        assert "123.5 MB" in first.answer and first.created == ["humanize_file_size@1"]

        by_tool = {e.name: e.data for e in events if e.type == "tool_result"}
        assert by_tool["web_search"]["backend"] == "pypi"
        assert "humanize" in [r.get("package", "").lower() for r in by_tool["web_search"]["results"]]
        assert by_tool["read_webpage"]["ok"] and "naturalsize" in by_tool["read_webpage"]["text"]
        assert any(pin.startswith("humanize==") for pin in by_tool["code_interpreter"]["installed"])

        tool = library.get("humanize_file_size")
        pins = {r.name.lower(): r for r in tool.spec.requirements}
        assert "humanize" in pins and pins["humanize"].version and pins["humanize"].sha256
        assert len(pins["humanize"].sha256 or "") == 64
        assert any("humanize" in source for source in tool.provenance.sources)
        assert tool.gate["ok"] and tool.stats.calls == 1

        second = agent.run_task("How large is 987654321 bytes in human-readable form?", index=1)
        assert second.status == "answered" and "987.7 MB" in second.answer
        assert second.reuse_verdict()["reused"] and second.model_calls == 2
