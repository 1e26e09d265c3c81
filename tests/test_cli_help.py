"""``--help`` of every command reads cleanly: no Python type tags such as ``<bool>``."""

from __future__ import annotations

import re
from typing import Any

import pytest

from toolsmith import cli

# What recent typer versions print for a parameter without a metavar: <bool>, <list[str]>, <path>.
TYPE_TAG = re.compile(r"<[a-z_]+(\[[^\]]*\])?>")


def _commands(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [path]
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        found += _commands(sub, (*path, name))
    return found


COMMAND = cli.build_command()


def _help(args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> str:
    monkeypatch.setenv("COLUMNS", "200")  # a wide terminal: no option wraps
    assert cli.run([*args, "--help"]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("path", _commands(COMMAND), ids=lambda p: " ".join(p) or "toolsmith")
def test_help_shows_no_type_tags(
    path: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(list(path), monkeypatch, capsys)
    assert "Usage: toolsmith" in text
    assert not TYPE_TAG.search(text), text


def test_values_are_named_and_flags_are_bare(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    text = _help(["run"], monkeypatch, capsys)
    lines = {line.split()[1]: line for line in text.splitlines() if line.startswith("│ --")}
    assert "OUTPUT" in lines["--output"] and "MODEL" in lines["--model"]
    assert lines["--json"].split()[2] == "Print"  # the help text follows the flag directly
