"""scripts/test chooses its Python, and installs only into a virtual environment.

``scripts/test --which`` prints the choice (python, source, action) and changes nothing;
each case runs a copy of the script in a temporary checkout, with stand-in interpreters:
a virtual environment made by hand (``pyvenv.cfg`` next to ``bin/python``, what ``venv``
itself writes; ``.pth`` files decide what it can import) and an interpreter outside any
virtual environment (the base Python with ``-S``, so it sees only ``PYTHONPATH``).
"""

from __future__ import annotations

import os
import shutil
import site
import subprocess
import sys
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "test"
BASE_PYTHON = Path(getattr(sys, "_base_executable", "") or sys.executable).resolve()
TOOLS = [Path(p) for p in site.getsitepackages() if Path(p, "pytest").is_dir()]  # where the dev tools live


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout with scripts/test and its own src/toolsmith."""
    root = tmp_path / "checkout"
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(SCRIPT, root / "scripts" / "test")
    (root / "src" / "toolsmith").mkdir(parents=True)
    (root / "src" / "toolsmith" / "__init__.py").write_text("")
    return root


def make_venv(where: Path, *paths: Path) -> Path:
    """A virtual environment whose site-packages also holds ``paths`` (through a .pth file)."""
    (where / "bin").mkdir(parents=True)
    (where / "pyvenv.cfg").write_text(f"home = {BASE_PYTHON.parent}\ninclude-system-site-packages = false\n")
    (where / "bin" / "python").symlink_to(BASE_PYTHON)
    packages = where / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    packages.mkdir(parents=True)
    (packages / "extra.pth").write_text("".join(f"{p}\n" for p in paths))
    return where / "bin" / "python"


def make_global(where: Path) -> Path:
    """An interpreter outside any virtual environment: sees only what PYTHONPATH lists."""
    where.mkdir(parents=True)
    wrapper = where / "python"
    wrapper.write_text(f'#!/bin/sh\nexec "{BASE_PYTHON}" -S "$@"\n')
    wrapper.chmod(0o755)
    return wrapper


def choose(checkout: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {"PATH": os.environ["PATH"], "HOME": os.environ.get("HOME", "/")}
    return subprocess.run(
        [str(checkout / "scripts" / "test"), *args], env={**clean, **env}, capture_output=True, text=True, timeout=120
    )


def decision(result: subprocess.CompletedProcess[str]) -> dict[str, str]:
    assert result.returncode == 0, result.stderr
    return dict(line.split(": ", 1) for line in result.stdout.splitlines())


def test_by_default_it_would_create_the_checkouts_venv_and_creates_nothing(checkout: Path) -> None:
    assert decision(choose(checkout, "--which")) == {
        "python": str(checkout / ".venv" / "bin" / "python"),
        "source": ".venv",
        "action": "create",
    }
    assert not (checkout / ".venv").exists()


def test_the_checkouts_venv_without_the_dev_tools_is_installed_into(checkout: Path) -> None:
    python = make_venv(checkout / ".venv")
    assert decision(choose(checkout, "--which")) == {"python": str(python), "source": ".venv", "action": "install"}


def test_an_active_virtual_environment_with_everything_is_used_as_it_is(checkout: Path, tmp_path: Path) -> None:
    venv = tmp_path / "active"
    python = make_venv(venv, *TOOLS, checkout / "src")
    chosen = decision(choose(checkout, "--which", VIRTUAL_ENV=str(venv)))
    assert chosen == {"python": str(python), "source": "VIRTUAL_ENV", "action": "use"}


def test_a_virtual_environment_with_another_checkouts_toolsmith_is_installed_into(
    checkout: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other" / "src"
    (other / "toolsmith").mkdir(parents=True)
    (other / "toolsmith" / "__init__.py").write_text("")
    python = make_venv(tmp_path / "pointed", *TOOLS, other)
    chosen = decision(choose(checkout, "--which", PYTHON=str(python)))
    assert chosen == {"python": str(python), "source": "PYTHON", "action": "install"}


def test_python_wins_over_an_active_virtual_environment(checkout: Path, tmp_path: Path) -> None:
    pointed = make_venv(tmp_path / "pointed", *TOOLS, checkout / "src")
    make_venv(tmp_path / "active")
    chosen = decision(choose(checkout, "--which", PYTHON=str(pointed), VIRTUAL_ENV=str(tmp_path / "active")))
    assert chosen == {"python": str(pointed), "source": "PYTHON", "action": "use"}


def test_an_interpreter_outside_a_venv_with_everything_is_used_never_installed_into(
    checkout: Path, tmp_path: Path
) -> None:
    python = make_global(tmp_path / "global")
    path = os.pathsep.join(str(p) for p in [*TOOLS, checkout / "src"])
    chosen = decision(choose(checkout, "--which", PYTHON=str(python), PYTHONPATH=path))
    assert chosen == {"python": str(python), "source": "PYTHON", "action": "use"}


@pytest.mark.parametrize("args", [["--which"], ["--fast"]])
def test_an_interpreter_outside_a_venv_without_the_tools_is_refused(
    checkout: Path, tmp_path: Path, args: list[str]
) -> None:
    python = make_global(tmp_path / "global")
    refused = choose(checkout, *args, PYTHON=str(python))
    assert refused.returncode == 2 and refused.stdout == ""  # nothing ran, nothing was installed
    assert f"{python} (PYTHON) is not a virtual environment and it lacks pytest" in refused.stderr
    assert "never installs" in refused.stderr and str(checkout / ".venv") in refused.stderr
    assert not (checkout / ".venv").exists()


def test_an_interpreter_outside_a_venv_with_another_toolsmith_is_refused(checkout: Path, tmp_path: Path) -> None:
    python = make_global(tmp_path / "global")
    other = tmp_path / "other" / "src"
    (other / "toolsmith").mkdir(parents=True)
    (other / "toolsmith" / "__init__.py").write_text("")
    path = os.pathsep.join(str(p) for p in [*TOOLS, other])
    refused = choose(checkout, "--which", PYTHON=str(python), PYTHONPATH=path)
    assert refused.returncode == 2
    assert f"its toolsmith is {other / 'toolsmith' / '__init__.py'}, not this checkout's" in refused.stderr


def test_a_python_that_does_not_exist_is_refused(checkout: Path, tmp_path: Path) -> None:
    refused = choose(checkout, "--which", PYTHON=str(tmp_path / "nowhere" / "python"))
    assert refused.returncode == 2 and "is not an executable Python" in refused.stderr
