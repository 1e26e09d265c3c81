"""Running `toolsmith ui` as a real process and driving Debian's Chromium at it.

No browser is ever downloaded: Playwright's driver launches the system ``chromium``
(``TOOLSMITH_CHROMIUM`` overrides the path) with a fresh profile directory. Tests skip
when there is no Chromium, unless ``TOOLSMITH_REQUIRE_BROWSER=1`` (set by ``.ci/run``)
turns that into a failure.
"""

from __future__ import annotations

import os
import select
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
ARTIFACTS = Path(os.environ.get("TOOLSMITH_TEST_ARTIFACTS") or Path(__file__).parents[2] / "test-artifacts") / "ui"


def chromium_path() -> str:
    """The system Chromium, or skip (fail in CI) when there is none."""
    found = os.environ.get("TOOLSMITH_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if found:
        return found
    if os.environ.get("TOOLSMITH_REQUIRE_BROWSER") == "1":
        pytest.fail("TOOLSMITH_REQUIRE_BROWSER=1 but no chromium is installed (apt-get install chromium)")
    pytest.skip("no system chromium (apt-get install chromium); the browser tests need it")


@dataclass
class Server:
    """A running ``toolsmith ui`` and what it printed."""

    process: subprocess.Popen[bytes]
    url: str
    output: list[str]

    def stop(self) -> str:
        """Stop it and return everything it wrote to stdout and stderr."""
        self.process.terminate()
        try:
            out, _ = self.process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            out, _ = self.process.communicate()
        return "".join(self.output) + out.decode("utf-8", "replace")


@contextmanager
def ui_server(home: Path, token: str | None, *, deadline_s: float = 60) -> Iterator[Server]:
    """``toolsmith ui --port 0`` on ``home``, with ``token`` given through the environment
    (None: the server generates one and prints it)."""
    env = {k: v for k, v in os.environ.items() if k != "TOOLSMITH_UI_TOKEN"}
    env["TOOLSMITH_HOME"] = str(home)
    if token is not None:
        env["TOOLSMITH_UI_TOKEN"] = token
    process = subprocess.Popen(
        [sys.executable, "-m", "toolsmith", "ui", "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
    )
    assert process.stdout is not None
    output: list[str] = []
    stop_at = time.monotonic() + deadline_s  # a bound on waiting, not a speed assertion
    url = ""
    while not url:
        ready, _, _ = select.select([process.stdout], [], [], max(stop_at - time.monotonic(), 0))
        line = process.stdout.readline().decode("utf-8", "replace") if ready else ""
        if not line:
            process.kill()
            pytest.fail(f"toolsmith ui did not start: {''.join(output)}{process.stdout.read().decode()}")
        output.append(line)
        if line.startswith("toolsmith ui: "):
            url = line.split()[2].split("?")[0].rstrip("/")
    server = Server(process, url, output)
    try:
        yield server
    finally:
        if process.poll() is None:
            server.stop()
