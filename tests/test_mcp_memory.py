"""The MCP server gives large results' memory back to the system (``toolsmith.mcp.memory``)."""

from __future__ import annotations

import platform
import subprocess
import sys
import textwrap
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
