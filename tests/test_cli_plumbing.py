"""The CLI's one exit-code table, its one error map, its one way to fail, and crashes."""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

import toolsmith
from toolsmith import cli
from toolsmith.cli import common, review, tools
from toolsmith.errors import (
    ConfigError,
    CorruptLibraryError,
    InstallError,
    MissingKeyError,
    ModelConfigError,
    ModelRetryExhausted,
    PackageRefused,
    SandboxUnavailableError,
    ToolNotFoundError,
)

README = Path(__file__).resolve().parents[1] / "README.md"


def test_the_readme_documents_every_exit_code_and_no_other() -> None:
    rows = re.findall(r"^\| (\d+) \| (.+) \|$", README.read_text(encoding="utf-8"), flags=re.MULTILINE)
    assert {int(code) for code, _ in rows} == set(common.EXIT_CODES)
    assert len(rows) == len(common.EXIT_CODES)


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (ConfigError("bad", setting="review"), common.EXIT_CONFIG),
        (MissingKeyError("openai", "OPENAI_API_KEY"), common.EXIT_CONFIG),
        (ModelConfigError("401", setting="LLM_API_KEY"), common.EXIT_CONFIG),
        (CorruptLibraryError(Path("x.db"), "damaged"), common.EXIT_CONFIG),
        (SandboxUnavailableError("no bwrap"), common.EXIT_CONFIG),
        (PermissionError(13, "denied"), common.EXIT_CONFIG),
        (PackageRefused("x", "not allowed"), common.EXIT_PACKAGES),
        (InstallError("failed"), common.EXIT_PACKAGES),
        (ToolNotFoundError("nope"), common.EXIT_FAILED),
        (ModelRetryExhausted("gave up", attempts=3, last_error="503"), common.EXIT_FAILED),
        (KeyboardInterrupt(), common.EXIT_INTERRUPTED),
        (ValueError("a bug"), common.EXIT_CRASH),
    ],
)
def test_one_map_from_errors_to_exit_codes(error: BaseException, code: int) -> None:
    assert common.exit_code_for(error) == code


def test_exit_codes_are_distinct() -> None:
    codes = [common.EXIT_OK, common.EXIT_FAILED, common.EXIT_CONFIG, common.EXIT_PACKAGES]
    codes += [common.EXIT_CRASH, common.EXIT_INTERRUPTED, common.EXIT_STOPPED]
    assert len(set(codes)) == len(codes) == len(common.EXIT_CODES)


def test_a_failure_is_one_line_and_a_json_object(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path))
    result = CliRunner().invoke(tools.app, ["show", "missing[tool]", "--json"])
    assert result.exit_code == common.EXIT_FAILED
    assert result.stderr == "error: No tool named 'missing[tool]' in the library.\n"  # no markup eaten
    data = json.loads(result.stdout)
    assert data == {
        "ok": False,
        "error": "No tool named 'missing[tool]' in the library.",
        "error_type": "failed",
        "exit_code": common.EXIT_FAILED,
    }


def test_a_bug_exits_70_with_one_line_and_the_traceback_in_a_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-crash-secret-0123456789")

    def broken(as_json: bool = False, *, browse: bool = False) -> None:
        raise ZeroDivisionError("sk-crash-secret-0123456789 in a message")

    monkeypatch.setattr(tools, "open_library", broken)
    monkeypatch.setattr(sys, "argv", ["toolsmith", "tools", "list"])
    with pytest.raises(SystemExit) as exited:
        cli.main()
    assert exited.value.code == common.EXIT_CRASH
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith("error: internal error (ZeroDivisionError:")
    crash_file = Path(err.split("the traceback is in ")[1].split(". Please")[0])
    assert crash_file.parent == tmp_path / "crashes"
    text = crash_file.read_text(encoding="utf-8")
    assert "Traceback (most recent call last)" in text and "in broken" in text
    assert "sk-crash-secret" not in text + err


def test_version() -> None:
    result = CliRunner().invoke(cli.app, ["--version"])
    assert result.exit_code == 0 and result.stdout == f"toolsmith {toolsmith.__version__}\n"


def test_the_review_commands_do_not_import_the_tools_module() -> None:
    """No import cycle: cli.review imports only the shared plumbing; cli.tools registers it."""
    tree = ast.parse(Path(review.__file__).read_text(encoding="utf-8"))
    imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    assert "toolsmith.cli.common" in imported and "toolsmith.cli.tools" not in imported
    names = {c.name for c in tools.app.registered_commands}
    assert {"approve", "reject", "quarantine", "review", "test", "sync", "list", "import"} <= names
