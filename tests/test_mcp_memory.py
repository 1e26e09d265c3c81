"""The MCP server gives large results' memory back to the system (``toolsmith.mcp.memory``)."""

from __future__ import annotations

import contextlib
import platform
import subprocess
import sys
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from toolsmith.config import Settings
from toolsmith.library import ToolLibrary
from toolsmith.mcp import server as mcp_server
from toolsmith.mcp.server import ServeOptions

GLIBC = platform.libc_ver()[0] == "glibc"

# Eight 8 MiB blocks freed with something newer above them on the heap: how many MiB stay.
RETAINED = textwrap.dedent(
    """
    import sys
    from toolsmith.mcp.memory import release_large_blocks

    def rss_mib():
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) // 1024

    if sys.argv[1] == "fixed":
        assert release_large_blocks()
    first = b"x" * (8 << 20)
    del first  # glibc raises its mmap threshold to this block's size on the free
    base = rss_mib()
    blocks = [b"x" * (8 << 20) for _ in range(8)]
    above = b"y" * (200 << 10)
    del blocks
    print(rss_mib() - base)
    """
)


def _retained(mode: str) -> int:
    out = subprocess.run([sys.executable, "-c", RETAINED, mode], capture_output=True, text=True, check=True)
    return int(out.stdout)


@pytest.mark.skipif(not GLIBC, reason="glibc's allocator only")
def test_large_blocks_go_back_to_the_system_once_the_threshold_is_fixed() -> None:
    assert _retained("dynamic") >= 48  # the fault: 64 MiB kept after a burst of large results
    assert _retained("fixed") <= 8


def test_serving_fixes_the_threshold_before_opening_the_library(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    order: list[str] = []

    def release() -> bool:
        order.append("release")
        return True

    def no_library(settings: Settings) -> None:
        order.append("open")
        raise RuntimeError("stop here")

    monkeypatch.setattr(mcp_server, "release_large_blocks", release)
    monkeypatch.setattr(ToolLibrary, "open", no_library)
    with pytest.raises(RuntimeError, match="stop here"):
        mcp_server.serve(Settings(home=tmp_path), ServeOptions(transport="stdio"))
    assert order == ["release", "open"]


# Start-up objects, then settle_heap(): how many a full collection still walks, and
# whether a cycle made afterwards is still collected.
SETTLED = textwrap.dedent(
    """
    import gc, weakref
    from toolsmith.mcp.memory import settle_heap

    start_up = [[i] for i in range(50_000)]
    before = len(gc.get_objects())
    frozen = settle_heap()
    after = len(gc.get_objects())

    class Node:
        pass

    node = Node()
    node.me = node
    alive = weakref.ref(node)
    del node
    gc.collect()
    print(before, frozen, after, alive() is None)
    """
)


def test_settling_the_heap_keeps_start_up_objects_out_of_later_collections() -> None:
    out = subprocess.run([sys.executable, "-c", SETTLED], capture_output=True, text=True, check=True)
    before, frozen, after, collected = out.stdout.split()
    assert int(before) > 50_000
    assert int(frozen) > 50_000
    assert int(after) < 1_000  # a full collection walks what was made since, not the start-up heap
    assert collected == "True"  # later garbage is still collected


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_serving_settles_the_heap_once_set_up_and_before_the_first_request(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, transport: str
) -> None:
    import uvicorn

    order: list[str] = []

    async def serving(*args: object, **kwargs: object) -> None:
        order.append("serve")

    def settle() -> int:
        order.append("settle")
        return 0

    monkeypatch.setattr(mcp_server, "settle_heap", settle)
    monkeypatch.setattr(uvicorn.Server, "serve", serving)
    monkeypatch.setattr(mcp_server.LibraryServer, "run", serving)
    monkeypatch.setattr(mcp_server, "pipe_stdio", _no_pipes)
    monkeypatch.setattr(mcp_server, "stdio_server", _no_streams)
    options = ServeOptions(transport=transport, port=0, no_auth=True)
    mcp_server.serve(Settings(home=tmp_path), options)
    assert order == ["settle", "serve"]


@contextlib.asynccontextmanager
async def _no_pipes() -> AsyncIterator[tuple[None, None]]:
    yield None, None


@contextlib.asynccontextmanager
async def _no_streams(stdin: object, stdout: object) -> AsyncIterator[tuple[None, None]]:
    yield None, None
