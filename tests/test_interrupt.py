"""Ctrl-C at any moment: exit 130 and one line, never a traceback or "Exception ignored".

The moments are made deterministic: an import that raises KeyboardInterrupt stands for a
Ctrl-C while the command line's imports load, a thread that signals the process once the
main thread has begun to shut down stands for a Ctrl-C at exit, and a command that raises
it stands for one in the middle of a command. One slow test signals a real command at a
few moments after it started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from toolsmith import cli
from toolsmith.cli import common, tools
from toolsmith.cli.common import EXIT_INTERRUPTED


def _python(code: str, home: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TOOLSMITH_HOME": str(home)}
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env, timeout=120
    )


def _one_interrupted_line(proc: subprocess.CompletedProcess[str]) -> None:
    assert proc.returncode == EXIT_INTERRUPTED, proc.stderr
    assert proc.stderr == "error: interrupted\n", proc.stderr


@pytest.mark.parametrize(
    "raised",
    [
        "KeyboardInterrupt",
        # Python 3.11 wraps what __set_name__ raises (a Ctrl-C while a class is made) in a RuntimeError
        "RuntimeError('Error calling __set_name__') from KeyboardInterrupt()",
    ],
)
def test_a_ctrl_c_while_the_command_line_imports_is_exit_130_and_one_line(tmp_path: Path, raised: str) -> None:
    code = """
        import sys

        class CtrlC:  # the moment typer starts to load, as a Ctrl-C in the first half second
            def find_spec(self, name, path=None, target=None):
                if name == "typer":
                    raise RAISED
                return None

        sys.meta_path.insert(0, CtrlC())
        sys.argv = ["toolsmith", "tools", "list"]
        from toolsmith.entry import main
        main()
        """
    proc = _python(code.replace("RAISED", raised), tmp_path)
    _one_interrupted_line(proc)


def test_a_ctrl_c_while_the_interpreter_shuts_down_is_exit_130_and_one_line(tmp_path: Path) -> None:
    proc = _python(
        """
        import os, signal, sys, threading, time
        import toolsmith.cli

        def late_thread():  # still running when the main thread is done: exit waits for it
            while threading.main_thread().is_alive():
                time.sleep(0.01)
            os.kill(os.getpid(), signal.SIGINT)  # the user presses Ctrl-C while it waits
            time.sleep(60)

        def run(args):
            threading.Thread(target=late_thread).start()
            print("done", flush=True)
            return 0

        toolsmith.cli.run = run
        from toolsmith.entry import main
        main()
        """,
        tmp_path,
    )
    assert proc.stdout == "done\n"
    _one_interrupted_line(proc)
    assert "Exception ignored" not in proc.stderr


def test_a_ctrl_c_while_exit_hooks_run_is_exit_130_and_one_line(tmp_path: Path) -> None:
    proc = _python(
        """
        import atexit, os, signal, time
        import toolsmith.cli

        def slow_cleanup():  # a library's exit hook, still running when the user presses Ctrl-C
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(60)

        def run(args):
            atexit.register(slow_cleanup)
            return 0

        toolsmith.cli.run = run
        from toolsmith.entry import main
        main()
        """,
        tmp_path,
    )
    _one_interrupted_line(proc)


def test_the_exit_code_stands_once_the_exit_hooks_are_done(tmp_path: Path) -> None:
    proc = _python(
        """
        import toolsmith.cli

        toolsmith.cli.run = lambda args: 3
        from toolsmith.entry import main
        main()
        """,
        tmp_path,
    )
    assert proc.returncode == 3 and proc.stderr == ""


def test_a_ctrl_c_that_lands_in_a_weakref_callback_is_not_lost(tmp_path: Path) -> None:
    proc = _python(
        """
        import time
        import weakref
        import toolsmith.cli

        class Thing:
            pass

        def run(args):
            def callback(ref):  # the moment a Ctrl-C lands while a weakref callback runs
                raise KeyboardInterrupt

            thing = Thing()
            ref = weakref.ref(thing, callback)
            del thing  # the callback runs here; Python cannot raise from it
            time.sleep(60)  # the interrupt must come back and end this wait
            print("not interrupted", flush=True)
            return 0

        toolsmith.cli.run = run
        from toolsmith.entry import main
        main()
        """,
        tmp_path,
    )
    assert "not interrupted" not in proc.stdout
    _one_interrupted_line(proc)


def test_a_ctrl_c_in_a_command_is_exit_130_and_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path))

    def interrupted(as_json: bool = False, **_: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(tools, "open_library", interrupted)
    assert cli.run(["tools", "list"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "error: interrupted\n"


def test_a_ctrl_c_wrapped_by_the_interpreter_in_a_command_is_no_bug(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path))

    def interrupted(as_json: bool = False, **_: object) -> None:
        raise RuntimeError("Error calling __set_name__") from KeyboardInterrupt()

    monkeypatch.setattr(tools, "open_library", interrupted)
    assert cli.run(["tools", "list"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "error: interrupted\n"
    assert not (tmp_path / "crashes").exists()


def test_a_command_that_says_it_was_interrupted_is_not_echoed_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path))

    def interrupted(as_json: bool = False, **_: object) -> None:
        common.fail("interrupted; the trajectory is in x.jsonl.", EXIT_INTERRUPTED)

    monkeypatch.setattr(tools, "open_library", interrupted)
    assert cli.run(["tools", "list"]) == EXIT_INTERRUPTED
    assert capsys.readouterr().err == "error: interrupted; the trajectory is in x.jsonl.\n"


@pytest.mark.slow
@pytest.mark.parametrize("delay", [0.0, 0.05, 0.15, 0.3, 0.6])
def test_a_real_command_interrupted_at_some_moment_never_shows_a_traceback(tmp_path: Path, delay: float) -> None:
    code = textwrap.dedent(
        """
        import sys

        class Started:  # says so once main() begins to import the command line
            def find_spec(self, name, path=None, target=None):
                if name == "toolsmith.cli":
                    print("started", flush=True)
                return None

        sys.meta_path.insert(0, Started())
        sys.argv = ["toolsmith", "tools", "list"]
        from toolsmith.entry import main
        main()
        """
    )
    env = {**os.environ, "TOOLSMITH_HOME": str(tmp_path)}
    with subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env
    ) as proc:
        assert proc.stdout is not None
        assert proc.stdout.readline() == "started\n"
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=delay)  # the command may be over before the signal
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
    assert "Traceback" not in err and "Exception ignored" not in err, err
    if proc.returncode == EXIT_INTERRUPTED:
        assert err == "error: interrupted\n"
    else:  # it finished before the signal came
        assert proc.returncode == 0 and err == "", err
