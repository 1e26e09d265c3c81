"""``toolsmith mcp`` end to end, through the MCP SDK's own client.

The server runs as a real subprocess over a real library (tools stored after passing the
real gate), once over stdio and once over streamable HTTP on loopback, and in both
protocol eras the SDK speaks: the handshake era (``mode="legacy"``, what desktop
clients use) and the 2026 era (``mode="auto"`` against this server), where change
notifications ride a ``subscriptions/listen`` stream. The test process changes the
library behind the server's back, as ``toolsmith tools`` would, and waits (with a
deadline, never a fixed sleep) for the list-changed notification.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp")

import httpx2
import mcp.types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client

from library_backends import postgres_schema
from toolsmith.cli import common
from toolsmith.config import Settings
from toolsmith.gate.core import Gate
from toolsmith.isolation import bwrap, cgroups
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.mcp.server import LibraryTools, ListChangeWatcher
from toolsmith.sandbox import Sandbox

DAYS_CODE = '''\
"""Days between two ISO dates, with Python's datetime."""
from datetime import date


def run(start: str, end: str) -> dict:
    return {"start": start, "end": end, "days": (date.fromisoformat(end) - date.fromisoformat(start)).days}
'''
DAYS_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "start": {"type": "string", "description": "First date, YYYY-MM-DD."},
        "end": {"type": "string", "description": "Second date, YYYY-MM-DD."},
    },
    "required": ["start", "end"],
}
DIVIDE_CODE = '''\
"""Divide two numbers."""


def run(a: float, b: float) -> dict:
    return {"quotient": a / b}
'''
DIVIDE_PARAMS: dict[str, Any] = {
    "type": "object",
    "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
    "required": ["a", "b"],
}
WAIT_S = 15.0  # generous deadline for a notification; the server polls every 0.5 s


def days_spec(description: str = "Count the days between two ISO dates (end minus start).") -> ToolSpec:
    return ToolSpec(
        name="days_between",
        description=description,
        parameters=DAYS_PARAMS,
        code=DAYS_CODE,
        test_args={"start": "2020-01-01", "end": "2020-03-01"},
        keywords=("dates",),
    )


def divide_spec() -> ToolSpec:
    return ToolSpec(
        name="divide",
        description="Divide a by b.",
        parameters=DIVIDE_PARAMS,
        code=DIVIDE_CODE,
        test_args={"a": 1, "b": 4},
    )


FEED_CODE = '''\
"""A feed whose upstream has gone away since the tool was stored."""


def run(symbol: str) -> dict:
    raise RuntimeError("upstream answered 410 Gone")
'''


def feed_spec() -> ToolSpec:
    params = {"type": "object", "properties": {"symbol": {"type": "string"}}, "required": ["symbol"]}
    return ToolSpec(
        name="price_feed",
        description="Latest value of a feed symbol.",
        parameters=params,
        code=FEED_CODE,
        test_args={"symbol": "X"},
    )


def store(library: ToolLibrary, settings: Settings, spec: ToolSpec, status: Status = Status.ACTIVE) -> None:
    """Store ``spec`` the way create_tool does: only after the real gate passed it."""
    report = Gate(Sandbox(settings)).check(spec)
    assert report.ok, report.reason
    spec = replace(spec, parameters=report.parameters or spec.parameters)
    library.add(spec, provenance=Provenance(task="mcp test", origin="test"), gate=report.to_dict(), status=status)


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    settings = replace(Settings(home=home), network=False)
    with ToolLibrary.open(settings) as library:
        store(library, settings, days_spec())
        store(library, settings, divide_spec())
        # It passed its gate when its upstream still answered; stored here as it was then.
        library.add(feed_spec(), provenance=Provenance(task="mcp test", origin="test"), gate={"ok": True})
    return home


def server_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("LLM_")}
    env.update({"TOOLSMITH_HOME": str(home), "TOOLSMITH_NETWORK": "false"})
    return env


# --- watching for list-changed ---------------------------------------------------------


class Changes:
    """Counts ``notifications/tools/list_changed`` seen by the client's message handler."""

    def __init__(self) -> None:
        self.count = 0
        self.listen_events = 0
        self._event = anyio.Event()

    async def handler(self, message: Any) -> None:
        if isinstance(message, types.ToolListChangedNotification):
            self.count += 1
            self._event.set()
            self._event = anyio.Event()

    async def after(self, seen: int) -> None:
        """Wait until more than ``seen`` notifications arrived."""
        with anyio.fail_after(WAIT_S):
            while self.count <= seen:
                await self._event.wait()


def authorized(url: str, token: str) -> Any:
    """The SDK's HTTP transport sending ``Authorization: Bearer <token>`` on every request."""
    client = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=300))
    return streamable_http_client(url, http_client=client)


@asynccontextmanager
async def connected(target: Any, mode: str, changes: Changes) -> AsyncIterator[Client]:
    """A client session; in the 2026 era it also opens the subscriptions/listen stream."""
    if isinstance(target, HttpTarget):
        target = authorized(target.url, target.token)
    async with Client(target, mode=mode, message_handler=changes.handler, read_timeout_seconds=60) as client:
        if mode == "legacy":
            yield client
            return
        async with anyio.create_task_group() as group:

            async def listen(*, task_status: Any = anyio.TASK_STATUS_IGNORED) -> None:
                async with client.listen(tools_list_changed=True) as subscription:
                    task_status.started()
                    async for _event in subscription:
                        changes.listen_events += 1

            await group.start(listen)
            yield client
            group.cancel_scope.cancel()


@dataclass(frozen=True)
class HttpTarget:
    """A running HTTP server's endpoint and the bearer token it printed (or was given)."""

    url: str
    token: str
    log: list[str]
    proc: subprocess.Popen[str]


@contextmanager
def http_server(env: dict[str, str], *extra: str) -> Iterator[HttpTarget]:
    """``toolsmith mcp --transport http --port 0`` as a subprocess; yields its URL and token."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolsmith", "mcp", "--transport", "http", "--port", "0", *extra],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    ready = threading.Event()

    def drain() -> None:  # keeps the pipe from filling, and finds the URL line
        assert proc.stderr is not None
        for line in proc.stderr:
            lines.append(line)
            # A generated token is printed on the line after the URL.
            if "Bearer" in line or ("http://" in line and ("TOOLSMITH_MCP_TOKEN" in env or "--no-auth" in extra)):
                ready.set()
        ready.set()

    threading.Thread(target=drain, daemon=True).start()
    try:
        assert ready.wait(30), "server did not start"
        match = re.search(r"at (http://127\.0\.0\.1:\d+/mcp)", "".join(lines))
        assert match, "".join(lines)
        printed = re.search(r"Authorization: Bearer (\S+?)'", "".join(lines))
        token = printed.group(1) if printed else env.get("TOOLSMITH_MCP_TOKEN", "")
        yield HttpTarget(match.group(1), token, lines, proc)
        assert proc.poll() is None, "server died:\n" + "".join(lines)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(5)
    assert "Traceback" not in "".join(lines), "".join(lines)


# --- the scenario every transport and era runs ----------------------------------------


def payload(result: types.CallToolResult) -> dict[str, Any]:
    assert result.structured_content is not None
    text = result.content[0]
    assert isinstance(text, types.TextContent) and '"ok"' in text.text
    return result.structured_content


async def listed(client: Client) -> dict[str, types.Tool]:
    return {tool.name: tool for tool in (await client.list_tools()).tools}


async def exercise(client: Client, changes: Changes, library: ToolLibrary) -> None:
    capabilities = client.server_capabilities.tools
    assert capabilities is not None and capabilities.list_changed is True

    # The active tools, with the schema the library stores.
    tools = await listed(client)
    assert set(tools) == {"days_between", "divide", "price_feed"}
    stored = library.get("days_between")
    assert tools["days_between"].input_schema == stored.spec.parameters
    assert tools["days_between"].input_schema["required"] == ["start", "end"]
    assert tools["days_between"].description == stored.spec.description

    # A real call, run in the sandbox and recorded as the tool's health.
    result = await client.call_tool("days_between", {"start": "2020-01-01", "end": "2020-03-01"})
    assert result.is_error is False
    data = payload(result)
    assert data["result"]["days"] == 60 and data["source"] == "library tool days_between@1"
    assert library.get("days_between").stats.calls == 1

    # Bad arguments are MCP errors, refused before the tool runs; the server keeps serving.
    missing = await client.call_tool("days_between", {"start": "2020-01-01"})
    assert missing.is_error is True
    assert payload(missing)["error_type"] == "bad_arguments" and "'end'" in payload(missing)["error"]
    wrong_type = await client.call_tool("days_between", {"start": 20200101, "end": "2020-03-01"})
    assert wrong_type.is_error is True and "type string" in payload(wrong_type)["error"]
    unknown = await client.call_tool("no_such_tool", {})
    assert unknown.is_error is True and payload(unknown)["error_type"] == "unknown_tool"
    assert library.get("days_between").stats.calls == 1  # none of those counted against the tool
    again = await client.call_tool("days_between", {"start": "2021-01-01", "end": "2021-12-31"})
    assert again.is_error is False and payload(again)["result"]["days"] == 364

    # A tool that fails at run time: an isError result with the error, recorded.
    broken = await client.call_tool("days_between", {"start": "yesterday", "end": "2020-01-01"})
    assert broken.is_error is True
    assert payload(broken)["error_type"] == "exception" and "yesterday" in payload(broken)["error"]
    stats = library.get("days_between").stats
    assert (stats.calls, stats.failures, stats.consecutive_failures) == (3, 1, 1)

    # Quarantined behind the server's back: it leaves tools/list, with a notification.
    seen = changes.count
    library.set_status("days_between", 1, Status.QUARANTINED, reason="flagged in review", actor="user:test")
    await changes.after(seen)
    assert set(await listed(client)) == {"divide", "price_feed"}
    refused = await client.call_tool("days_between", {"start": "2020-01-01", "end": "2020-03-01"})
    assert refused.is_error is True and payload(refused)["error_type"] == "not_active"
    assert "quarantined" in payload(refused)["error"] and "flagged in review" in payload(refused)["error"]

    # A new version stored for review, then approved: it appears, again with a notification.
    library.add(
        days_spec("Days from start to end (ISO dates)."),
        provenance=Provenance(origin="test"),
        gate={"passed": True},
        status=Status.PENDING,
    )
    seen = changes.count
    library.set_status("days_between", 2, Status.ACTIVE, reason="approved", actor="user:test")
    await changes.after(seen)
    tools = await listed(client)
    assert set(tools) == {"days_between", "divide", "price_feed"}
    assert tools["days_between"].description == "Days from start to end (ISO dates)."
    assert (tools["days_between"].meta or {}).get("toolsmith/version") == 2
    fresh = await client.call_tool("days_between", {"start": "2020-01-01", "end": "2020-03-01"})
    assert payload(fresh)["result"]["days"] == 60 and payload(fresh)["version"] == 2


async def repeat_failures_quarantine(client: Client, changes: Changes, library: ToolLibrary) -> None:
    """Three failures in a row, and the tool's own test fails too: it is quarantined, exactly
    as in the agent, and clients are told."""
    seen = changes.count
    results = [await client.call_tool("price_feed", {"symbol": "ACME"}) for _ in range(3)]
    assert all(r.is_error for r in results)
    assert "410 Gone" in payload(results[0])["error"]
    assert "quarantined" not in payload(results[1]) and payload(results[2])["quarantined"] is True
    assert library.get("price_feed").status is Status.QUARANTINED
    audit = library.audit_log("price_feed")[-1]
    assert audit.details["to"] == "quarantined" and audit.actor.startswith("mcp")
    await changes.after(seen)
    assert "price_feed" not in await listed(client)


async def caller_failures_keep_the_tool(client: Client, library: ToolLibrary) -> None:
    """Issue 18 §7: a correct tool called three times with a bad input ('yesterday' is no ISO
    date) fails each time, but its own tests pass: it stays served, for this client and every other."""
    results = [await client.call_tool("divide", {"a": 1, "b": 0}) for _ in range(3)]
    assert all(r.is_error for r in results) and "division by zero" in payload(results[0])["error"]
    last = payload(results[2])
    assert "quarantined" not in last and "own tests still pass" in last["hint"]
    assert library.get("divide").status is Status.ACTIVE and "divide" in await listed(client)
    assert [e.action for e in library.audit_log("divide")][-1] == "kept"


# --- the tests --------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.slow
def test_stdio(home: Path, mode: str) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "toolsmith", "mcp"], env=server_env(home))
    changes = Changes()

    async def main() -> None:
        with ToolLibrary(home / "library.db") as library:
            async with connected(params, mode, changes) as client:
                assert client.protocol_version == ("2025-11-25" if mode == "legacy" else "2026-07-28")
                await exercise(client, changes, library)
                await caller_failures_keep_the_tool(client, library)
                await repeat_failures_quarantine(client, changes, library)

    anyio.run(main)
    assert changes.count >= 3
    if mode != "legacy":
        assert changes.listen_events >= 3


@pytest.mark.parametrize("mode", ["legacy", "auto"])
@pytest.mark.slow
def test_streamable_http_on_loopback(home: Path, mode: str) -> None:
    changes = Changes()
    with http_server(server_env(home)) as target:

        async def main() -> None:
            with ToolLibrary(home / "library.db") as library:
                async with connected(target, mode, changes) as client:
                    await exercise(client, changes, library)
                    await caller_failures_keep_the_tool(client, library)
                # A second client after the first left: the server is still serving.
                async with connected(target, mode, Changes()) as client:
                    result = await client.call_tool("divide", {"a": 1, "b": 4})
                    assert payload(result)["result"] == {"quotient": 0.25}

        anyio.run(main)
    assert changes.count >= 2


@pytest.mark.slow
def test_a_stopped_http_server_stops_its_workers_and_removes_their_cgroups(home: Path) -> None:
    """SIGTERM (a service manager's stop) still runs the server's cleanup, and the usual status comes back."""
    cpu = cgroups.support()["cpu"]  # the server is our child, in the same groups
    if not cpu.usable or not bwrap.probe()[0]:
        pytest.skip("needs bwrap and a usable cpu cgroup (warm workers in their own groups)")
    assert cpu.parent is not None
    with http_server(server_env(home)) as target:

        async def main() -> None:
            async with connected(target, "legacy", Changes()) as client:
                assert payload(await client.call_tool("divide", {"a": 1, "b": 4}))["result"] == {"quotient": 0.25}

        anyio.run(main)
        runs = cpu.parent / f"toolsmith-{target.proc.pid}-runs"
        assert [p for p in (runs / "warm").iterdir() if p.is_dir()], "the warm worker has a group of its own"
    assert target.proc.returncode == common.EXIT_STOPPED == 128 + signal.SIGTERM
    assert not runs.exists()


@pytest.mark.slow
def test_a_stopped_stdio_server_stops_its_workers_and_removes_their_cgroups(home: Path) -> None:
    """Over stdio too, SIGTERM (what a host sends when stdin's close is not enough) runs the cleanup."""
    cpu = cgroups.support()["cpu"]
    if not cpu.usable or not bwrap.probe()[0]:
        pytest.skip("needs bwrap and a usable cpu cgroup (warm workers in their own groups)")
    assert cpu.parent is not None
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolsmith", "mcp"],
        env=server_env(home),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        hello = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}
        assert "result" in _rpc(proc, 1, "initialize", hello)
        _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        called = _rpc(proc, 2, "tools/call", {"name": "divide", "arguments": {"a": 1, "b": 4}})
        assert called["result"]["structuredContent"]["result"] == {"quotient": 0.25}
        runs = cpu.parent / f"toolsmith-{proc.pid}-runs"
        assert [p for p in (runs / "warm").iterdir() if p.is_dir()], "the warm worker has a group of its own"
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == common.EXIT_STOPPED
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert not runs.exists()


def _send(proc: subprocess.Popen[str], message: dict[str, Any]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(message) + "\n")
    proc.stdin.flush()


def _rpc(proc: subprocess.Popen[str], ident: int, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """One request over the server's stdio, and its response (notifications before it are skipped)."""
    _send(proc, {"jsonrpc": "2.0", "id": ident, "method": method, "params": params})
    assert proc.stdout is not None
    for line in proc.stdout:
        message: dict[str, Any] = json.loads(line)
        if message.get("id") == ident:
            return message
    raise AssertionError(f"the server closed stdout before answering {method}")


def test_watcher_notifies_only_when_the_served_set_changes(home: Path) -> None:
    """Audit rows that leave the active set alone (a pending version) wake no client."""
    settings = replace(Settings(home=home), network=False)

    async def main() -> None:
        with ToolLibrary(home / "library.db") as library:
            watcher = ListChangeWatcher(LibraryTools(settings, library, Sandbox(settings)))
            await watcher.prime()
            assert await watcher.check() is False  # nothing happened
            library.add(
                days_spec("A pending rewrite."),
                provenance=Provenance(origin="test"),
                gate={"passed": True},
                status=Status.PENDING,
            )
            assert await watcher.check() is False and watcher.notifications_sent == 0
            library.set_status("days_between", 2, Status.ACTIVE, reason="approved", actor="user:test")
            assert await watcher.check() is True and watcher.notifications_sent == 1
            assert await watcher.check() is False  # told once per change

    anyio.run(main)


# --- bearer-token authentication over HTTP ------------------------------------------------

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "probe", "version": "1"}},
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def test_http_refuses_requests_without_the_printed_token(home: Path) -> None:
    with http_server(server_env(home)) as target:
        assert len(target.token) >= 32, "".join(target.log)
        bare = httpx.post(target.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=30)
        wrong = httpx.post(
            target.url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": "Bearer " + "x" * 43}, timeout=30
        )
        right = httpx.post(
            target.url, json=INITIALIZE, headers={**MCP_HEADERS, "Authorization": f"Bearer {target.token}"}, timeout=30
        )
        assert bare.status_code == 401 and wrong.status_code == 401
        assert "invalid_token" in bare.headers.get("www-authenticate", "")
        assert right.status_code == 200, right.text

        async def main() -> None:  # the SDK's own client, with the token, works end to end
            async with connected(target, "legacy", Changes()) as client:
                result = await client.call_tool("divide", {"a": 1, "b": 4})
                assert payload(result)["result"] == {"quotient": 0.25}

        anyio.run(main)


def test_a_configured_token_is_used_and_never_printed(home: Path) -> None:
    token = "configured-" + "t" * 30
    with http_server({**server_env(home), "TOOLSMITH_MCP_TOKEN": token}) as target:
        assert token not in "".join(target.log) and "Bearer" not in "".join(target.log)
        headers = {**MCP_HEADERS, "Authorization": f"Bearer {token}"}
        assert httpx.post(target.url, json=INITIALIZE, headers=headers, timeout=30).status_code == 200
        assert httpx.post(target.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=30).status_code == 401


@pytest.mark.parametrize(
    ("extra", "env", "setting"),
    [
        (["--host", "0.0.0.0"], {}, "mcp.token"),
        (["--host", "0.0.0.0", "--no-auth"], {"TOOLSMITH_MCP_TOKEN": "z" * 40}, "--no-auth"),
        ([], {"TOOLSMITH_MCP_TOKEN": "short"}, "mcp.token"),
    ],
)
def test_unsafe_http_setups_are_refused_before_listening(
    home: Path, extra: list[str], env: dict[str, str], setting: str
) -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "toolsmith", "mcp", "--transport", "http", "--port", "0", *extra],
        env={**server_env(home), **env},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert setting in proc.stderr and "serving" not in proc.stderr and "Traceback" not in proc.stderr


def test_no_auth_is_allowed_on_loopback_only(home: Path) -> None:
    with http_server(server_env(home), "--no-auth") as target:
        assert httpx.post(target.url, json=INITIALIZE, headers=MCP_HEADERS, timeout=30).status_code == 200
        assert "--no-auth" in "".join(target.log)


# --- a team library on PostgreSQL --------------------------------------------------------


@pytest.mark.postgres
def test_stdio_serves_a_postgres_library(tmp_path: Path) -> None:
    """``toolsmith mcp`` with TOOLSMITH_LIBRARY_URL: tools come from PostgreSQL, changes made
    through another connection (another machine) reach the client, calls are recorded."""
    with postgres_schema() as url:
        settings = replace(Settings(home=tmp_path / "writer", library_url=url), network=False)
        with ToolLibrary.open(settings) as library:
            store(library, settings, days_spec())
            store(library, settings, divide_spec())
            library.add(feed_spec(), provenance=Provenance(task="mcp test", origin="test"), gate={"ok": True})
        env = {**server_env(tmp_path / "server-machine"), "TOOLSMITH_LIBRARY_URL": url}
        params = StdioServerParameters(command=sys.executable, args=["-m", "toolsmith", "mcp"], env=env)
        changes = Changes()

        async def main() -> None:
            with ToolLibrary(url) as library:
                async with connected(params, "legacy", changes) as client:
                    await exercise(client, changes, library)

        anyio.run(main)
        assert changes.count >= 2


@pytest.mark.postgres
def test_watcher_wakes_on_a_postgres_notice_not_on_its_poll(tmp_path: Path) -> None:
    """With a poll interval far longer than the wait, only the LISTEN/NOTIFY path can
    deliver the approval in time: this is what makes approvals reach servers at once."""
    with postgres_schema() as url:
        settings = replace(Settings(home=tmp_path, library_url=url), network=False)

        async def main() -> None:
            with ToolLibrary(url) as served, ToolLibrary(url) as elsewhere:
                elsewhere.add(days_spec(), provenance=Provenance(origin="test"), gate={}, status=Status.PENDING)
                watcher = ListChangeWatcher(LibraryTools(settings, served, Sandbox(settings)), interval_s=3600)
                watcher.always = True
                async with anyio.create_task_group() as group:
                    group.start_soon(watcher.run)
                    while served._backend._listener is None:  # type: ignore[attr-defined]
                        await anyio.sleep(0.01)
                    elsewhere.set_status("days_between", 1, Status.ACTIVE, reason="ok", actor="user:lead")
                    with anyio.fail_after(WAIT_S):
                        while watcher.notifications_sent == 0:
                            await anyio.sleep(0.02)
                    group.cancel_scope.cancel()

        anyio.run(main)
