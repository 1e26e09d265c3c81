"""Backends, backend selection, the not-isolated warning, cgroups, results and the harness."""

from __future__ import annotations

import io
import json
import os
import signal
import struct
from dataclasses import replace
from pathlib import Path

import pytest

from sandbox.helpers import CANARY, SMALL, leftovers, marker
from toolsmith.config import Settings
from toolsmith.errors import SandboxUnavailableError
from toolsmith.isolation import bwrap, cgroups, selection, userns
from toolsmith.isolation import etc as etc_module
from toolsmith.isolation.backend import classify
from toolsmith.isolation.process import NOT_DEFENDED, ProcessBackend
from toolsmith.isolation.seccomp import DENIED, program
from toolsmith.sandbox import Sandbox


@pytest.fixture
def fresh_warning(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(selection, "_warned", False)


# --- selection and describe ---------------------------------------------------------------


def test_process_backend_warns_once_per_process(settings: Settings, fresh_warning: None) -> None:
    stream = io.StringIO()
    first = selection.select_backend(replace(settings, sandbox_backend="process"), stream=stream)
    second = selection.select_backend(replace(settings, sandbox_backend="process"), stream=stream)
    assert isinstance(first, ProcessBackend) and isinstance(second, ProcessBackend)
    text = stream.getvalue()
    assert text.count("WARNING") == 1
    assert "NOT a security boundary" in text
    for item in NOT_DEFENDED:
        assert item in text


def test_auto_falls_back_with_the_reason(
    settings: Settings, fresh_warning: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(bwrap, "probe", lambda *a, **k: (False, "bwrap is not installed"))
    stream = io.StringIO()
    backend = selection.select_backend(settings, stream=stream)
    assert backend.name == "process" and not backend.isolating
    assert "bwrap is not installed" in stream.getvalue()
    report = selection.describe(settings)
    assert report["backend"] == "process" and report["isolating"] is False
    assert report["not_defended"] == list(NOT_DEFENDED)


def test_bwrap_required_but_unusable_raises(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bwrap, "probe", lambda *a, **k: (False, "no user namespaces"))
    with pytest.raises(SandboxUnavailableError) as caught:
        selection.select_backend(replace(settings, sandbox_backend="bwrap"))
    assert caught.value.setting == "sandbox.backend" and "no user namespaces" in str(caught.value)
    assert selection.describe(replace(settings, sandbox_backend="bwrap"))["error"] == "unavailable"


@pytest.mark.bwrap
def test_auto_picks_bwrap_where_it_works(settings: Settings, fresh_warning: None) -> None:
    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    stream = io.StringIO()
    assert selection.select_backend(settings, stream=stream).name == "bwrap"
    assert stream.getvalue() == ""
    report = Sandbox(settings).describe()
    assert report["backend"] == "bwrap" and report["isolating"] is True
    assert set(report["cgroups"]) == {"pids", "memory", "cpu"}
    assert report["packages"]["installer"] in ("uv", "pip")
    json.dumps(report)  # doctor prints it


def test_probe_verdict_is_cached(monkeypatch: pytest.MonkeyPatch) -> None:
    calls = []
    monkeypatch.setattr(bwrap, "_verdicts", {})
    monkeypatch.setattr(bwrap, "_probe", lambda path: calls.append(path) or (True, "ok"))
    monkeypatch.setattr(bwrap, "find_bwrap", lambda: "/usr/bin/bwrap")
    assert bwrap.probe() == bwrap.probe() == (True, "ok")
    assert len(calls) == 1


# --- the process backend ---------------------------------------------------------------


def test_process_backend_runs_with_a_scrubbed_environment(process_sandbox: Sandbox, canary_env: str) -> None:
    out = process_sandbox.run_code("import os, json; print(json.dumps(dict(os.environ)))")
    assert out.exec.ok and out.exec.backend == "process"
    assert canary_env not in out.exec.stdout
    assert set(json.loads(out.exec.stdout)) <= {"PATH", "HOME", "LANG", "TZ", "LC_CTYPE"}


def test_process_backend_kills_setsid_daemons_with_its_cgroup(process_sandbox: Sandbox) -> None:
    if not cgroups.support()["pids"].usable:
        pytest.skip("no writable pids cgroup")
    tag = marker()
    process_sandbox.run_code(
        "import os\nif os.fork() == 0:\n    os.setsid()\n"
        f"    os.execv('/bin/sleep', ['/bin/sleep', '300', {tag!r}])\nprint('bye')\n"
    )
    assert leftovers(tag) == []


def test_timeout_names_the_limit(process_sandbox: Sandbox) -> None:
    out = process_sandbox.run_code("import time; time.sleep(30)", timeout_s=0.5)
    assert out.exec.timed_out and out.exec.killed_by == "timeout" and not out.exec.ok


# --- results ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("exit_code", "stderr", "expected"),
    [
        (0, "", None),
        (1, "Traceback...\nValueError: x", None),
        (1, "Traceback...\nMemoryError", "memory"),
        (1, "OSError: [Errno 27] File too large", "file_size"),
        (1, "OSError: [Errno 28] No space left on device", "disk"),
        (1, "OSError: [Errno 24] Too many open files", "open_files"),
        (-signal.SIGXCPU, "", "cpu"),
        (-signal.SIGXFSZ, "", "file_size"),
        (-signal.SIGKILL, "", "SIGKILL"),
        (-signal.SIGSEGV, "", "SIGSEGV"),
    ],
)
def test_classify(exit_code: int, stderr: str, expected: str | None) -> None:
    assert classify(exit_code, timed_out=False, stderr=stderr) == expected


def test_classify_uses_cgroup_verdicts() -> None:
    oom = cgroups.RunCgroup(oom_killed=True)
    assert classify(-signal.SIGKILL, timed_out=False, stderr="", cgroup=oom) == "memory"
    pids = cgroups.RunCgroup(pids_limited=True)
    assert (
        classify(1, timed_out=False, stderr="BlockingIOError: Resource temporarily unavailable", cgroup=pids)
        == "processes"
    )
    assert classify(0, timed_out=True, stderr="", cgroup=oom) == "timeout"


# --- cgroups and seccomp -----------------------------------------------------------------


def test_run_cgroups_are_removed_after_the_run(settings: Settings) -> None:
    controllers = cgroups.support()
    usable = {n: c for n, c in controllers.items() if c.usable}
    if not usable:
        pytest.skip("no writable cgroups here")
    run = cgroups.RunCgroup.create(SMALL, usable)
    paths = [path for _, path in run.dirs.values()]
    assert all(p.is_dir() for p in paths)
    if "pids" in run.dirs:
        assert (run.dirs["pids"][1] / "pids.max").read_text().strip() == str(SMALL.max_procs + cgroups.PIDS_SLACK)
    run.close()
    assert not any(p.exists() for p in paths)


def test_cgroup_support_reports_reasons() -> None:
    for ctl in cgroups.support().values():
        assert ctl.reason
        assert ctl.to_dict()["available"] is ctl.usable


def test_seccomp_program_shape() -> None:
    code = program("x86_64")
    assert code is not None and len(code) % 8 == 0
    records = [struct.unpack("=HBBI", code[i : i + 8]) for i in range(0, len(code), 8)]
    assert records[-1][3] == 0x00050001 and records[-2][3] == 0x7FFF0000  # EPERM, ALLOW
    denied = {r[3] for r in records if r[0] == 0x15}
    assert {pair[0] for pair in DENIED.values()} <= denied
    assert program("sparc") is None


# --- the harness under bwrap --------------------------------------------------------------


@pytest.mark.bwrap
@pytest.mark.parametrize(
    ("code", "args", "kind"),
    [
        ("def run(x):\n    return {'double': x * 2}\n", {"x": 21}, None),
        ("def run():\n    raise ValueError('boom')\n", {}, "exception"),
        ("def run():\n    return object()\n", {}, "not_json"),
        ("x = 1\n", {}, "no_run"),
        ("import not_a_module_anywhere\n", {}, "import"),
        ("import os\ndef run():\n    os._exit(3)\n", {}, "killed"),
        pytest.param("def run():\n    import time; time.sleep(30)\n", {}, "timeout", marks=pytest.mark.slow),
    ],
)
def test_call_tool_outcomes(bwrap_sandbox: Sandbox, code: str, args: dict[str, int], kind: str | None) -> None:
    result = bwrap_sandbox.call_tool(code, args, timeout_s=1.5)
    assert result.error_type == kind
    if kind is None:
        assert result.ok and result.value == {"double": 42}
    else:
        assert not result.ok and result.error


@pytest.mark.bwrap
def test_tool_cannot_forge_a_result_outside_the_result_file(bwrap_sandbox: Sandbox) -> None:
    code = (
        "import os, json\n"
        "def run():\n"
        "    for name in ('_result.json.tmp', '../_result.json'):\n"
        "        try:\n"
        "            open(name, 'w').write(json.dumps({'ok': True, 'value': 'forged'}))\n"
        "        except OSError:\n"
        "            pass\n"
        "    try:\n"
        "        os.unlink('_result.json')\n"
        "    except OSError as exc:\n"
        "        return 'unlink ' + exc.strerror\n"
        "    return 'unlinked'\n"
    )
    result = bwrap_sandbox.call_tool(code, {})
    assert result.ok and result.value.startswith("unlink ")


@pytest.mark.bwrap
def test_bwrap_args_hide_host_paths(bwrap_sandbox: Sandbox, settings: Settings) -> None:
    bwrap_sandbox.env.ensure()
    out = bwrap_sandbox.run_code("print(open('/proc/1/cmdline','rb').read())")
    assert str(settings.home) not in out.exec.stdout and "toolsmith-run-" not in out.exec.stdout
    assert CANARY not in out.exec.stdout


@pytest.mark.bwrap
def test_network_flag_is_reported(bwrap_sandbox: Sandbox) -> None:
    assert bwrap_sandbox.run_code("print(1)", network=False).exec.network is False
    assert bwrap_sandbox.run_code("print(1)").exec.network is True


def test_ca_variables_pass_only_as_paths_visible_inside() -> None:
    env = bwrap.sandbox_env(
        env_bin=None,
        host={
            "SSL_CERT_FILE": "/etc/ssl/certs/ca.crt",
            "REQUESTS_CA_BUNDLE": str(Path.home() / "ca.pem"),
            "OPENAI_API_KEY": CANARY,
        },
    )
    assert env["SSL_CERT_FILE"] == "/etc/ssl/certs/ca.crt"
    assert "REQUESTS_CA_BUNDLE" not in env and CANARY not in json.dumps(env)
    assert env["HOME"] == bwrap.HOME_MOUNT


def test_etc_snapshot_copies_only_the_allowlist_and_refreshes(tmp_path: Path) -> None:
    source = tmp_path / "etc"
    (source / "ssl" / "certs").mkdir(parents=True)
    (source / "resolv.conf").write_text("nameserver 10.0.0.1\n")
    (source / "pip.conf").write_text(f"[global]\ntoken = {CANARY}\n")
    (source / "shadow").write_text(CANARY)
    snap = etc_module.EtcSnapshot(source)
    first = snap.directory()
    assert sorted(p.name for p in first.iterdir()) == ["resolv.conf", "ssl"]
    assert (first / "resolv.conf").read_text() == "nameserver 10.0.0.1\n"
    args = snap.bind_args()
    assert args[:3] == ["--ro-bind", str(first), "/etc"] and f"{source}/ssl/certs" in args
    assert snap.directory() == first  # unchanged sources: same snapshot
    (source / "resolv.conf").write_text("nameserver 10.0.0.22\n")
    second = snap.directory()
    assert second != first and first.exists()  # kept for runs that may still bind it
    assert (second / "resolv.conf").read_text() == "nameserver 10.0.0.22\n"
    snap.remove()
    assert not second.exists() and not first.exists()


@pytest.mark.bwrap
def test_a_sandbox_that_cannot_be_built_is_a_sandbox_error(tmp_path: Path) -> None:
    from toolsmith.errors import SandboxError
    from toolsmith.isolation.backend import Job, base_python

    if not bwrap.probe()[0]:
        pytest.skip("bwrap unavailable")
    (tmp_path / "main.py").write_text("print(1)\n")
    job = Job(
        workdir=tmp_path, script="main.py", python=base_python(), env_prefix=tmp_path / "missing-env", limits=SMALL
    )
    with pytest.raises(SandboxError) as caught:
        bwrap.BwrapBackend().execute(job)
    assert caught.value.code == "setup" and "bwrap:" in caught.value.stderr


@pytest.mark.bwrap
def test_program_output_that_mimics_bwrap_is_just_output(bwrap_sandbox: Sandbox) -> None:
    out = bwrap_sandbox.run_code("import sys\nsys.stderr.write('bwrap: fake failure\\n')\nraise SystemExit(1)\n")
    assert out.exec.exit_code == 1 and out.exec.stderr.startswith("bwrap: fake")


@pytest.mark.parametrize("backend_fixture", ["process_sandbox", "bwrap_sandbox"])
def test_rlimits_inside(backend_fixture: str, request: pytest.FixtureRequest) -> None:
    sandbox: Sandbox = request.getfixturevalue(backend_fixture)
    out = sandbox.run_code(
        "import resource as r\n"
        "print([r.getrlimit(x) for x in (r.RLIMIT_AS, r.RLIMIT_CPU, r.RLIMIT_FSIZE, r.RLIMIT_NOFILE, r.RLIMIT_CORE)])\n"
    )
    mb = 1024 * 1024
    assert json.loads(out.exec.stdout.replace("(", "[").replace(")", "]")) == [
        [SMALL.memory_mb * mb] * 2,
        [SMALL.cpu_s, SMALL.cpu_s + 1],
        [SMALL.file_size_mb * mb] * 2,
        [SMALL.open_files] * 2,
        [0, 0],
    ]


def test_runs_degrade_gracefully_without_cgroups(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        cgroups,
        "_support",
        {
            "pids": cgroups.Controller("pids", reason="cgroup v1 pids at /sys/fs/cgroup/pids is not writable"),
            "memory": cgroups.Controller("memory", reason="no memory cgroup controller is mounted"),
        },
    )
    backend = bwrap.BwrapBackend() if bwrap.probe()[0] else ProcessBackend()
    out = Sandbox(settings, backend=backend).run_code("print('still runs')")
    assert out.exec.ok and out.exec.stdout == "still runs\n"
    report = selection.describe(settings)
    assert report["cgroups"]["pids"] == {
        "available": False,
        "version": None,
        "parent": None,
        "reason": "cgroup v1 pids at /sys/fs/cgroup/pids is not writable",
    }
    # A root launcher's bwrap runs are an unprivileged uid, for which RLIMIT_NPROC holds.
    assert report["fork_bomb_contained"] is (os.getuid() != 0 or (bwrap.probe()[0] and userns.shared_fd() is not None))
