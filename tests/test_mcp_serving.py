"""``toolsmith mcp`` under the conditions a team server meets (issue #22), through the SDK's own client.

* results of every size up to the sandbox's result cap reach the official client with its
  default settings, over streamable HTTP in both protocol eras and over stdio, and each is
  sent once (text only above the structured-content size), so the tool's health record
  (a success) is what the client saw;
* the warm path under concurrency and faults is covered in ``tests/sandbox`` and
  ``tests/test_serving_admission.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

import mcp.types as types
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from test_mcp import authorized, http_server, server_env
from toolsmith.config import Settings
from toolsmith.isolation.harness import MAX_RESULT_BYTES
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec
from toolsmith.mcp.server import STRUCTURED_MAX_CHARS

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


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    with ToolLibrary.open(Settings(home=home)) as library:
        library.add(blob_spec(), provenance=Provenance(origin="test"), gate={"passed": True}, status=Status.ACTIVE)
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
    from toolsmith.mcp.server import payload_result

    small: dict[str, Any] = {"ok": True, "result": {"n": 1}}
    result = payload_result(small)
    assert result.structured_content == small and json.loads(result.content[0].text) == small  # type: ignore[union-attr]
    large = {"ok": True, "result": "y" * (STRUCTURED_MAX_CHARS + 1)}
    result = payload_result(large)
    assert result.structured_content is None and json.loads(result.content[0].text) == large  # type: ignore[union-attr]
