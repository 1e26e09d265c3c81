"""``toolsmith mcp`` under the conditions a team server meets (issue #22), through the SDK's own client.

* results of every size up to the sandbox's result cap reach the official client with its
  default settings, over streamable HTTP in both protocol eras and over stdio, and each is
  sent once (text only above the structured-content size), so the tool's health record
  (a success) is what the client saw;
* a result that does not reach the client (it closed the connection, or cancelled the
  call, before the result was sent) counts as the tool's failure in its health record,
  and one that does counts as a success;
* the warm path under concurrency and faults is covered in ``tests/sandbox`` and
  ``tests/test_serving_admission.py``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest

pytest.importorskip("mcp")

import mcp.types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError

from test_mcp import authorized, http_server, server_env
from toolsmith.config import Settings
from toolsmith.isolation.harness import MAX_RESULT_BYTES
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.mcp.results import STRUCTURED_MAX_CHARS

BLOB_CODE = '''\
"""A text of the asked size."""


def run(size: int) -> dict:
    return {"blob": "x" * size}
'''
# The tool's result file holds {"ok": true, "value": {"blob": "..."}}: a few dozen bytes of
# envelope around the text, so this is as near the cap as a result gets.
NEAR_CAP = MAX_RESULT_BYTES - 100
SIZES = (200_000, 600_000, 1_000_000, NEAR_CAP)


def blob_spec() -> ToolSpec:
    return ToolSpec(
        name="blob",
        description="Return a text of the given size.",
        parameters={"type": "object", "properties": {"size": {"type": "integer"}}, "required": ["size"]},
        code=BLOB_CODE,
        test_args={"size": 10},
    )


SLEEPER_CODE = '''\
"""Sleep a while, then say so."""
import time


def run(seconds: float) -> dict:
    time.sleep(seconds)
    return {"slept": seconds}
'''


def sleeper_spec() -> ToolSpec:
    return ToolSpec(
        name="sleeper",
        description="Sleep for the given number of seconds.",
        parameters={"type": "object", "properties": {"seconds": {"type": "number"}}, "required": ["seconds"]},
        code=SLEEPER_CODE,
        test_args={"seconds": 0},
    )


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    return home_serving(tmp_path, blob_spec())


def home_serving(tmp_path: Path, spec: ToolSpec) -> Path:
    """A toolsmith home whose library has ``spec`` active, and nothing else."""
    home = tmp_path / "home"
    with ToolLibrary.open(Settings(home=home)) as library:
        library.add(spec, provenance=Provenance(origin="test"), gate={"passed": True}, status=Status.ACTIVE)
    return home


def received(result: types.CallToolResult, size: int) -> None:
    """The whole result arrived, as one JSON text, and (when large) only once."""
    assert result.is_error is False, result.content
    assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
    data = json.loads(result.content[0].text)
    assert data["ok"] is True and data["result"]["blob"] == "x" * size
    if size > STRUCTURED_MAX_CHARS:
        assert result.structured_content is None
    else:
        assert result.structured_content == data


async def call_every_size(client: Client, sizes: tuple[int, ...]) -> None:
    for size in sizes:
        received(await client.call_tool("blob", {"size": size}), size)


def health(home: Path) -> tuple[int, int]:
    with ToolLibrary(home / "library.db") as library:
        stats = library.get("blob").stats
    return stats.calls, stats.failures


@pytest.mark.slow
def test_results_up_to_the_cap_reach_the_official_client_over_http(home: Path) -> None:
    """200 kB to the cap, both eras, the client's default 1 MiB event limit left as it is."""
    with http_server(server_env(home)) as target:

        async def main() -> None:
            for mode in ("legacy", "auto"):
                async with Client(authorized(target.url, target.token), mode=mode, read_timeout_seconds=120) as client:
                    await call_every_size(client, SIZES)

        anyio.run(main)
    # Every call reached the client, and every one is recorded as the success it was.
    assert health(home) == (2 * len(SIZES), 0)


@pytest.mark.slow
def test_a_result_near_the_cap_reaches_the_official_client_over_stdio(home: Path) -> None:
    params = StdioServerParameters(command=sys.executable, args=["-m", "toolsmith", "mcp"], env=server_env(home))

    async def main() -> None:
        for mode in ("legacy", "auto"):
            async with Client(params, mode=mode, read_timeout_seconds=120) as client:
                await call_every_size(client, (1_000, NEAR_CAP))

    anyio.run(main)
    assert health(home) == (4, 0)


def test_small_results_carry_structured_content_and_large_ones_text_only() -> None:
    from toolsmith.mcp.results import payload_result

    small: dict[str, Any] = {"ok": True, "result": {"n": 1}}
    result = payload_result(small)
    assert result.structured_content == small and json.loads(result.content[0].text) == small  # type: ignore[union-attr]
    large = {"ok": True, "result": "y" * (STRUCTURED_MAX_CHARS + 1)}
    result = payload_result(large)
    assert result.structured_content is None and json.loads(result.content[0].text) == large  # type: ignore[union-attr]


# --- delivery: a result the client never got is the tool's failure ------------------------

SLOW_S = 2.0  # how long the slow call runs: well past the client's patience below
PATIENCE_S = 0.3


@pytest.fixture()
def sleeper_home(tmp_path: Path) -> Path:
    return home_serving(tmp_path, sleeper_spec())


def sleeper_stats(home: Path) -> Any:
    with ToolLibrary(home / "library.db") as library:
        return library.get("sleeper").stats


def wait_for_failures(home: Path, failures: int) -> Any:
    """The sleeper's health once ``failures`` are recorded (a lost result is known after the call)."""
    for _ in range(1200):  # about a minute: a bound for a broken server, not a timing assertion
        if (stats := sleeper_stats(home)).failures >= failures:
            return stats
        time.sleep(0.05)
    raise AssertionError(f"only {stats.failures} of {failures} failures were recorded")


def impatient(url: str, token: str) -> Any:
    """The SDK's HTTP transport whose HTTP client gives up on a response after PATIENCE_S."""
    client = httpx2.AsyncClient(
        headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=PATIENCE_S)
    )
    return streamable_http_client(url, http_client=client)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["legacy", "auto"])
def test_a_result_the_client_left_before_is_a_failure_in_the_tools_health(sleeper_home: Path, mode: str) -> None:
    with http_server(server_env(sleeper_home)) as target:

        async def main() -> None:
            # The HTTP client gives up and closes the connection (its transport fails, and with
            # it the client); the server still runs the call, and sends its result to nobody.
            with pytest.raises(BaseException) as failed:
                async with Client(impatient(target.url, target.token), mode=mode, read_timeout_seconds=60) as client:
                    await client.call_tool("sleeper", {"seconds": SLOW_S})
            assert "ReadTimeout" in repr(failed.value) or failed.group_contains(httpx2.ReadTimeout)
            stats = await anyio.to_thread.run_sync(wait_for_failures, sleeper_home, 1)
            assert (stats.calls, stats.failures) == (1, 1)
            assert "not delivered" in (stats.last_error or "") and "closed the connection" in stats.last_error
            # A quick call of a client that waits arrives, and counts as the success it was.
            async with Client(authorized(target.url, target.token), mode=mode) as client:
                result = await client.call_tool("sleeper", {"seconds": 0})
                assert result.is_error is False and json.loads(result.content[0].text)["result"] == {"slept": 0}  # type: ignore[union-attr]

        anyio.run(main)
        stats = sleeper_stats(sleeper_home)  # the quick call's success was recorded before it was sent
        assert (stats.calls, stats.failures, stats.consecutive_failures) == (2, 1, 0)


@pytest.mark.slow
def test_a_result_whose_client_gave_up_and_left_is_a_failure_in_the_tools_health(sleeper_home: Path) -> None:
    """The SDK's own timeout (handshake era), then the client ends its session: the result goes nowhere."""
    with http_server(server_env(sleeper_home)) as target:

        async def main() -> None:
            async with Client(authorized(target.url, target.token), mode="legacy") as client:
                with pytest.raises(MCPError):
                    await client.call_tool("sleeper", {"seconds": SLOW_S}, read_timeout_seconds=PATIENCE_S)

        anyio.run(main)
        stats = wait_for_failures(sleeper_home, 1)
        assert (stats.calls, stats.failures) == (1, 1)
        assert "not delivered" in (stats.last_error or "")
