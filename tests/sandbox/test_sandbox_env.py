"""Package environments: creation with uv, pins with hashes, sync from pins, call-time sync."""

from __future__ import annotations

import json
import subprocess
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from packaging.tags import sys_tags

from toolsmith.config import Settings
from toolsmith.errors import InstallError, PackageRefused
from toolsmith.packages.env import PackageEnv, find_uv, scrubbed_env
from toolsmith.packages.index import PackageIndex, ProjectFiles
from toolsmith.packages.policy import Request
from toolsmith.packages.requirement import Requirement
from toolsmith.sandbox import Sandbox

HEX = set("0123456789abcdef")


def write_dist(site: Path, name: str, version: str, requires: list[str] = ()) -> None:  # type: ignore[assignment]
    info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    lines = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}"]
    lines += [f"Requires-Dist: {r}" for r in requires]
    (info / "METADATA").write_text("\n".join(lines) + "\n")


class ListingIndex:
    """An index answering from a fixed file listing."""

    simple_url = "http://127.0.0.1:9/simple/"

    def __init__(self, files: dict[str, list[dict[str, Any]]]) -> None:
        self.files = files

    def project(self, name: str) -> ProjectFiles | None:
        if name not in self.files:
            return None
        return ProjectFiles(name=name, versions=(), files=tuple(self.files[name]))

    def exists(self, name: str) -> bool:
        return name in self.files


def fake_env(settings: Settings, index: Any = None) -> PackageEnv:
    env = PackageEnv(settings, index=index)
    env.path.mkdir(parents=True)
    (env.path / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return env


# --- offline -----------------------------------------------------------------------------


def test_closure_follows_dependencies_extras_and_markers(settings: Settings) -> None:
    env = fake_env(settings)
    site = env.site_packages
    write_dist(site, "top", "1.0", ["mid>=1", "never; python_version < '3'", "opt; extra == 'fast'"])
    write_dist(site, "mid", "2.0", ["leaf"])
    write_dist(site, "leaf", "3.0")
    write_dist(site, "opt", "4.0")
    write_dist(site, "unrelated", "5.0")
    assert env.closure([Request("top")]) == [("leaf", "3.0"), ("mid", "2.0"), ("top", "1.0")]
    with_extra = env.closure([Request("top", extras=("fast",))])
    assert ("opt", "4.0") in with_extra and ("unrelated", "5.0") not in with_extra


def test_hash_is_that_of_the_wheel_this_platform_installs(settings: Settings) -> None:
    best = next(iter(sys_tags()))
    files = [
        {"filename": "demo-1.0-cp27-cp27m-macosx_10_9_x86_64.whl", "hashes": {"sha256": "a" * 64}},
        {"filename": f"demo-1.0-{best.interpreter}-{best.abi}-{best.platform}.whl", "hashes": {"sha256": "b" * 64}},
        {"filename": "demo-1.0-py3-none-any.whl", "hashes": {"sha256": "c" * 64}},
        {"filename": "demo-1.0.tar.gz", "hashes": {"sha256": "d" * 64}},
        {"filename": "demo-1.1-py3-none-any.whl", "hashes": {"sha256": "e" * 64}},
    ]
    env = fake_env(settings, ListingIndex({"demo": files}))
    assert env.file_hash("demo", "1.0") == "b" * 64
    env_any = fake_env(replace(settings, home=settings.home / "x"), ListingIndex({"demo": files[2:]}))
    assert env_any.file_hash("demo", "1.0") == "c" * 64
    env_sdist = fake_env(replace(settings, home=settings.home / "y"), ListingIndex({"demo": files[3:4]}))
    assert env_sdist.file_hash("demo", "1.0") == "d" * 64


def test_install_argv_is_wheels_only_with_explicit_index(settings: Settings) -> None:
    env = PackageEnv(settings, index=ListingIndex({}))  # type: ignore[arg-type]
    argv = env._install_argv(["humanize"])
    assert argv[argv.index("--index-url") + 1] == ListingIndex.simple_url
    assert argv[argv.index("--only-binary") + 1] == ":all:"
    assert "--no-config" in argv
    assert str(settings.cache_dir) in argv[argv.index("--cache-dir") + 1]
    permissive = PackageEnv(replace(settings, only_binary=False), index=ListingIndex({}))  # type: ignore[arg-type]
    assert "--only-binary" not in permissive._install_argv(["humanize"])
    pip = PackageEnv(settings, index=ListingIndex({}), installer="pip")  # type: ignore[arg-type]
    pip_argv = pip._install_argv(["humanize"])
    assert "--isolated" in pip_argv and "--index-url" in pip_argv


def test_installer_environment_is_scrubbed(tmp_path: Path) -> None:
    host = {
        "OPENAI_API_KEY": "sk-x",
        "PATH": "/evil",
        "SSL_CERT_FILE": "/etc/ssl/c.pem",
        "PIP_INDEX_URL": "x",
        "UV_INDEX_URL": "y",
        "HTTPS_PROXY": "http://proxy:3128",
        "AWS_SECRET_ACCESS_KEY": "z",
    }
    env = scrubbed_env(tmp_path, host)
    assert set(env) == {"PATH", "HOME", "LANG", "SSL_CERT_FILE", "HTTPS_PROXY"}
    assert env["HOME"] == str(tmp_path) and "/evil" not in env["PATH"]


@pytest.mark.parametrize(
    "requirement",
    [
        Requirement("--index-url", "1.0"),
        Requirement("evil", "1.0; python_version>'3'"),
        Requirement("evil", "1.0 --hash=sha256:00"),
        Requirement("evil", "1.0", sha256="not-hex"),
    ],
)
def test_stored_pins_are_validated_before_sync(settings: Settings, requirement: Requirement) -> None:
    env = PackageEnv(settings, index=ListingIndex({}))  # type: ignore[arg-type]
    env._run = lambda argv, what: pytest.fail("installer must not run")  # type: ignore[method-assign]
    with pytest.raises(PackageRefused):
        env.sync([requirement])


def test_sync_does_nothing_when_pins_are_present(settings: Settings) -> None:
    env = fake_env(settings)
    write_dist(env.site_packages, "demo", "1.0")
    env._run = lambda argv, what: pytest.fail("installer must not run")  # type: ignore[method-assign]
    report = env.sync([Requirement("demo", "1.0", "a" * 64)])
    assert not report.changed and [r.name for r in report.already] == ["demo"]


def test_sync_refuses_a_hash_the_index_does_not_list(settings: Settings) -> None:
    files = [{"filename": "demo-1.0-py3-none-any.whl", "hashes": {"sha256": "c" * 64}}]
    env = fake_env(settings, ListingIndex({"demo": files}))
    env._run = lambda argv, what: pytest.fail("installer must not run")  # type: ignore[method-assign]
    with pytest.raises(InstallError, match="tampered"):
        env.sync([Requirement("demo", "1.0", "f" * 64)])


@pytest.mark.slow
def test_env_is_created_with_uv(settings: Settings) -> None:
    if find_uv() is None:
        pytest.skip("uv missing")
    env = PackageEnv(settings)
    env.ensure()
    assert env.exists() and env.tool == "uv"
    cfg = (env.path / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg and "uv" in cfg
    assert env.installed() == {}


# --- against the real index --------------------------------------------------------------


@pytest.mark.network
@pytest.mark.slow
def test_install_records_pins_with_the_index_hash(settings: Settings) -> None:
    env = PackageEnv(settings)
    pins = env.install("python-slugify")
    names = {p.name for p in pins}
    assert names == {"python-slugify", "text-unidecode"}
    index = PackageIndex(settings.index_url)
    for pin in pins:
        assert pin.sha256 is not None and len(pin.sha256) == 64 and set(pin.sha256) <= HEX
        listed = {f["hashes"]["sha256"] for f in index.project(pin.name).files_for(pin.version)}  # type: ignore[union-attr]
        assert pin.sha256 in listed
    assert env.installed()["python-slugify"] == next(p.version for p in pins if p.name == "python-slugify")


@pytest.mark.network
@pytest.mark.bwrap
@pytest.mark.slow
def test_run_code_installs_then_imports_read_only(bwrap_sandbox: Sandbox) -> None:
    out = bwrap_sandbox.run_code(
        "import humanize, sys; print(humanize.intcomma(1234567)); print(sys.prefix)", pip_install="humanize"
    )
    assert out.exec.ok, out.exec.stderr
    assert out.exec.stdout.splitlines() == ["1,234,567", "/opt/toolsmith/env"]
    assert [r.name for r in out.installed] == ["humanize"]
    assert out.installed[0].sha256


@pytest.mark.network
@pytest.mark.slow
def test_a_package_without_wheels_names_the_setting_that_allows_builds(settings: Settings) -> None:
    # docopt has only ever been published as a source distribution.
    with pytest.raises(InstallError) as caught:
        PackageEnv(settings).install("docopt")
    assert "packages.only_binary = false" in str(caught.value)
    assert not PackageEnv(settings).installed().get("docopt")


@pytest.mark.network
@pytest.mark.slow
def test_sync_rebuilds_a_fresh_environment_from_pins(settings: Settings, tmp_path: Path) -> None:
    pins = PackageEnv(settings).install("python-slugify==8.0.4")
    fresh = replace(settings, home=tmp_path / "other-machine")
    env = PackageEnv(fresh)
    assert not env.exists()
    report = env.sync(pins)
    assert report.hash_checked and {r.name for r in report.installed} == {p.name for p in pins}
    assert env.installed()["python-slugify"] == "8.0.4"
    again = env.sync(pins)
    assert not again.changed


@pytest.mark.network
def test_sync_with_a_wrong_recorded_hash_installs_nothing(settings: Settings) -> None:
    pins = [Requirement("text-unidecode", "1.3", "0" * 64)]
    env = PackageEnv(settings)
    with pytest.raises(InstallError):
        env.sync(pins)
    assert "text-unidecode" not in env.installed()


@pytest.mark.network
@pytest.mark.bwrap
@pytest.mark.slow
def test_call_tool_syncs_missing_requirements_first(bwrap_sandbox: Sandbox, settings: Settings, tmp_path: Path) -> None:
    pins = PackageEnv(replace(settings, home=tmp_path / "elsewhere")).install("humanize")
    code = "import humanize\n\ndef run(n):\n    return humanize.intcomma(n)\n"
    result = bwrap_sandbox.call_tool(code, {"n": 1000}, requirements=pins)
    assert result.ok, result.error
    assert result.value == "1,000"
    assert [r["name"] for r in result.installed] == ["humanize"]
    second = bwrap_sandbox.call_tool(code, {"n": 2000}, requirements=pins)
    assert second.ok and second.installed == ()


@pytest.mark.network
def test_call_tool_reports_an_unsatisfiable_requirement(process_sandbox: Sandbox) -> None:
    result = process_sandbox.call_tool(
        "def run():\n    return 1\n", {}, requirements=[Requirement("humanize", "0.0.0.1")]
    )
    assert not result.ok and result.error_type == "install"


@pytest.mark.network
@pytest.mark.slow
def test_pip_fallback_creates_and_installs(settings: Settings) -> None:
    env = PackageEnv(settings, installer="pip")
    pins = env.install("humanize")
    assert env.tool == "pip" and [p.name for p in pins] == ["humanize"]
    done = subprocess.run(
        [str(env.python), "-c", "import humanize; print(humanize.__name__)"], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "humanize"
    assert json.loads(json.dumps([p.to_dict() for p in pins]))[0]["sha256"] == pins[0].sha256


@pytest.mark.bwrap
def test_installer_runs_isolated_from_home_and_library(settings: Settings, tmp_path: Path) -> None:
    from toolsmith.isolation.backend import base_python
    from toolsmith.isolation.bwrap import probe

    if not probe()[0]:
        pytest.skip("bwrap unavailable")
    secret = tmp_path / "home-secret.txt"
    secret.write_text("sk-installer-canary")
    settings.db_path.write_text("library")
    env = PackageEnv(settings)
    assert env.isolated
    report = settings.cache_dir / "home" / "report.txt"
    # Stand-in for a hostile build backend: it reports what it can reach.
    code = (
        "import os, pathlib\n"
        f"seen = [os.path.exists({str(secret)!r}), os.path.exists({str(settings.db_path)!r}),"
        f" 'OPENAI_API_KEY' in os.environ]\n"
        "try:\n"
        f"    open({str(settings.db_path)!r}, 'w').write('pwned'); seen.append('wrote-db')\n"
        "except OSError:\n"
        "    seen.append('db-refused')\n"
        f"pathlib.Path({str(report)!r}).write_text(repr(seen))\n"
    )
    env._run([str(base_python()), "-I", "-S", "-c", code], what="probe")
    # Nothing of the host is visible; a write to the library's path lands in the sandbox's
    # own tmpfs (the mount points' parents), never on the host.
    assert report.read_text().startswith("[False, False, False, ")
    assert settings.db_path.read_text() == "library"


@pytest.mark.bwrap
def test_installers_use_the_bwrap_the_settings_pin(settings: Settings, tmp_path: Path) -> None:
    """sandbox.bwrap_path names the bwrap for package installs too, not only for runs."""
    import shutil
    import stat

    from toolsmith.isolation.backend import base_python
    from toolsmith.isolation.bwrap import find_bwrap, probe

    real = find_bwrap()
    if real is None or not probe()[0]:
        pytest.skip("bwrap unavailable")
    log = tmp_path / "calls.log"
    log.touch(mode=0o666)
    log.chmod(0o666)  # the probe may run the wrapper as the sandbox's user
    wrapper = tmp_path / "bin" / "bwrap-wrapper"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\necho "$*" >> {log}\nexec {shutil.which(real) or real} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    tmp_path.chmod(0o755)
    wrapper.parent.chmod(0o755)
    env = PackageEnv(replace(settings, bwrap_path=str(wrapper)))
    assert env.isolated
    marker = "installer-through-the-pinned-bwrap"
    env._run([str(base_python()), "-I", "-S", "-c", f"print({marker!r})"], what="probe")
    assert marker in log.read_text()
