"""``toolsmith sandbox run`` and ``describe`` through typer's CliRunner."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from toolsmith.cli.common import EXIT_CONFIG, EXIT_FAILED, EXIT_PACKAGES
from toolsmith.cli.sandbox import MAX_SOURCE_BYTES, app
from toolsmith.isolation import bwrap


@pytest.fixture
def invoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):  # type: ignore[no-untyped-def]
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("TOOLSMITH_CONFIG", raising=False)
    runner = CliRunner()

    def call(*args: str) -> Result:
        return runner.invoke(app, list(args))

    return call


@pytest.fixture
def script(tmp_path: Path) -> Path:
    path = tmp_path / "hello.py"
    path.write_text("import sys\nprint('hello', 6 * 7)\nprint('to stderr', file=sys.stderr)\n")
    return path


def test_run_prints_the_program_output(invoke, script: Path) -> None:  # type: ignore[no-untyped-def]
    result = invoke("run", str(script))
    assert result.exit_code == 0, result.output
    assert "hello 42" in result.stdout
    assert "to stderr" in result.stderr and "[sandbox:" in result.stderr


def test_run_json_is_one_line_with_the_structured_result(invoke, script: Path) -> None:  # type: ignore[no-untyped-def]
    result = invoke("run", str(script), "--json", "--no-network", "--timeout", "5")
    assert result.exit_code == 0
    lines = result.stdout.strip().splitlines()
    assert len(lines) == 1
    data = json.loads(lines[0])
    assert data["ok"] is True and data["stdout"] == "hello 42\n" and data["exit_code"] == 0
    assert data["network"] is False and data["installed"] == []
    assert {"stderr", "timed_out", "killed_by", "wall_s", "truncated", "backend"} <= set(data)
    if bwrap.probe()[0]:
        assert data["backend"] == "bwrap"


def test_a_failing_program_is_exit_1_with_its_own_code_reported(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    failing = tmp_path / "fail.py"
    failing.write_text("raise SystemExit(3)\n")
    result = invoke("run", str(failing))
    # Never passed through: a program's "exit 3" must not read as "package refused" (also 3).
    assert result.exit_code == EXIT_FAILED != EXIT_PACKAGES
    assert "exit 3" in result.stderr
    data = json.loads(invoke("run", str(failing), "--json").stdout)
    assert data["ok"] is False and data["exit_code"] == 3


def test_a_device_file_is_refused_without_reading_it(invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke("run", "/dev/zero", "--json")
    assert result.exit_code == EXIT_CONFIG
    assert "not a regular file" in json.loads(result.stdout)["error"]


def test_a_fifo_is_refused_without_hanging(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    fifo = tmp_path / "pipe.py"
    os.mkfifo(fifo)
    result = invoke("run", str(fifo))
    assert result.exit_code == EXIT_CONFIG and "not a regular file" in result.stderr


def test_an_oversized_file_is_refused(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    big = tmp_path / "big.py"
    with big.open("wb") as fh:
        fh.truncate(MAX_SOURCE_BYTES + 1)  # sparse: no disk used
    result = invoke("run", str(big))
    assert result.exit_code == EXIT_CONFIG and "larger than" in result.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "-1", "0"])
def test_the_timeout_must_be_finite_and_positive(invoke, script: Path, value: str) -> None:  # type: ignore[no-untyped-def]
    result = invoke("run", str(script), f"--timeout={value}")
    assert result.exit_code == EXIT_CONFIG and "finite, positive" in result.stderr


def test_run_timeout(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    slow = tmp_path / "slow.py"
    slow.write_text("import time\ntime.sleep(30)\n")
    result = invoke("run", str(slow), "--timeout", "0.5", "--json")
    data = json.loads(result.stdout)
    assert result.exit_code == 1 and data["killed_by"] == "timeout" and data["timed_out"] is True


def test_missing_file_is_a_clear_error(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    result = invoke("run", str(tmp_path / "nope.py"))
    assert result.exit_code == EXIT_CONFIG
    assert "does not exist" in result.stderr and "Traceback" not in result.output


def test_refused_package_is_a_clear_error(invoke, script: Path) -> None:  # type: ignore[no-untyped-def]
    result = invoke("run", str(script), "--pip=--index-url=http://127.0.0.1:9/", "--json")
    assert result.exit_code == EXIT_PACKAGES
    data = json.loads(result.stdout)
    assert data["ok"] is False and data["error_type"] == "refused"
    assert "installer options" in data["error"] and "Traceback" not in result.output


@pytest.mark.network
def test_typosquat_is_refused_with_a_suggestion(invoke, script: Path) -> None:  # type: ignore[no-untyped-def]
    result = invoke("run", str(script), "--pip", "reqeusts", "--json")
    assert result.exit_code == EXIT_PACKAGES
    data = json.loads(result.stdout)
    assert data["suggestion"] == "requests"


@pytest.mark.network
@pytest.mark.slow
def test_run_with_pip_reports_pins(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    code = tmp_path / "use.py"
    code.write_text("import humanize\nprint(humanize.intcomma(1000))\n")
    result = invoke("run", str(code), "--pip", "humanize", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    assert data["stdout"] == "1,000\n"
    assert [p["name"] for p in data["installed"]] == ["humanize"] and data["installed"][0]["sha256"]


def test_describe_json(invoke) -> None:  # type: ignore[no-untyped-def]
    result = invoke("describe", "--json")
    assert result.exit_code == 0
    report = json.loads(result.stdout)
    assert report["backend"] in ("bwrap", "process") and "cgroups" in report


def test_a_directory_is_refused_as_not_a_regular_file(invoke, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    folder = tmp_path / "scripts"
    folder.mkdir()
    result = invoke("run", str(folder), "--json")
    assert result.exit_code == EXIT_CONFIG, result.output
    assert "not a regular file" in json.loads(result.stdout)["error"]
    assert not (tmp_path / "home" / "crashes").exists()  # not a bug report


def test_describe_says_what_the_network_default_means(invoke, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.delenv("TOOLSMITH_NETWORK", raising=False)
    report = json.loads(invoke("describe", "--json").stdout)
    assert report["network_default"] is True
    shown = invoke("describe").stdout
    line = next(line for line in shown.splitlines() if line.startswith("network:"))
    if report["backend"] == "bwrap":
        assert "on by default (sandbox.network = true)" in line and "127.0.0.1" in line
        assert "sandbox.network = false" in line  # and how to turn it off
    else:
        assert "cannot take the network away" in line
    monkeypatch.setenv("TOOLSMITH_NETWORK", "false")
    off = json.loads(invoke("describe", "--json").stdout)
    assert off["network_default"] is False
    assert (
        off["network"].startswith("off (sandbox.network = false)") or "cannot take the network away" in off["network"]
    )
