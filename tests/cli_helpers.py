"""Running the CLI in tests: in process with typer's runner, or as the installed command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from toolsmith.cli import tools


def invoke(*args: str, input: str | None = None) -> Result:
    """Run ``toolsmith tools ARGS`` in process; a traceback or an unexpected exception fails the test."""
    # A wide terminal, so table cells are not wrapped in the middle of what tests look for.
    result = CliRunner().invoke(tools.app, list(args), input=input, env={"COLUMNS": "200"})
    assert "Traceback (most recent call last)" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def assert_error(result: Result, code: int, text: str) -> None:
    """Exactly one ``error: ...`` line on stderr containing ``text``, and exit ``code``."""
    assert result.exit_code == code, result.output
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert text in lines[0]


def run_toolsmith(
    args: list[str], home: Path, *, cwd: Path | None = None, timeout: float = 240, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run the installed ``toolsmith`` command as a user would, with no model keys inherited."""
    base = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("LLM_")}
    base.pop("OPENAI_BASE_URL", None)
    base.update({"TOOLSMITH_HOME": str(home), **env})
    script = Path(sys.executable).with_name("toolsmith")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "toolsmith"]
    return subprocess.run(command + args, capture_output=True, text=True, env=base, cwd=cwd, timeout=timeout)
