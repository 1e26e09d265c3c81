"""``--fresh`` moves the library aside and never loses one, even with runs in parallel."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from toolsmith.config import Settings
from toolsmith.errors import ConfigError
from toolsmith.library import Provenance, ToolLibrary, ToolSpec
from toolsmith.library.fresh import fresh_library

RUNS = 6

# Each child waits for the same "go" file, then does what `toolsmith run --fresh` does: it
# moves the library aside, then uses a new one (holding it, as a session does), leaving a
# tool named after itself in it.
CHILD = """
import json, sys, time
from pathlib import Path
from toolsmith.config import Settings
from toolsmith.library.fresh import library_in_use
from toolsmith.library import Provenance, ToolLibrary, ToolSpec
home, me = Path(sys.argv[1]), sys.argv[2]
(home.parent / f"ready-{me}").touch()
while not (home.parent / "go").exists():
    time.sleep(0.001)
settings = Settings.load(home=home, env={})
with library_in_use(settings, fresh=True) as backup, ToolLibrary.open(settings) as library:
    spec = ToolSpec(name=f"made_by_{me}", description="x", parameters={"type": "object", "properties": {}},
                    code="def run():\\n    return 1\\n")
    library.add(spec, provenance=Provenance(), gate={})
    time.sleep(0.05)  # still using it while the others wait
print(json.dumps({"backup": str(backup) if backup else None}))
"""


def _spec(name: str) -> ToolSpec:
    return ToolSpec(
        name=name, description="the user's own tool", parameters={"type": "object", "properties": {}},
        code="def run():\n    return 1\n",
    )  # fmt: skip


def _names(path: Path) -> set[str]:
    with ToolLibrary(path) as library:
        return {t.name for t in library.list_tools(include_retired=True)}


def test_parallel_fresh_runs_lose_no_library(tmp_path: Path) -> None:
    home = tmp_path / "home"
    settings = Settings.load(home=home, env={})
    with ToolLibrary.open(settings) as library:
        library.add(_spec("users_precious_tool"), provenance=Provenance(), gate={})
    children = [
        subprocess.Popen([sys.executable, "-c", CHILD, str(home), str(n)], stdout=subprocess.PIPE, text=True)
        for n in range(RUNS)
    ]
    deadline = time.monotonic() + 120
    while len(list(tmp_path.glob("ready-*"))) < RUNS and time.monotonic() < deadline:
        time.sleep(0.01)
    (tmp_path / "go").touch()  # all of them start in the same instant
    outputs = [json.loads(child.communicate(timeout=120)[0]) for child in children]
    assert all(child.returncode == 0 for child in children)

    backups = [Path(o["backup"]) for o in outputs if o["backup"]]
    assert backups and len(set(backups)) == len(backups) and all(b.is_file() for b in backups)
    assert sorted(home.glob("library.*.bak.db")) == sorted(backups)
    found = [_names(b) for b in backups] + [_names(settings.db_path)]
    everything = set().union(*found)
    # The user's library and every library a run made are all still there, each exactly once.
    assert everything == {"users_precious_tool"} | {f"made_by_{n}" for n in range(RUNS)}
    assert sum(len(names) for names in found) == RUNS + 1


def test_fresh_never_overwrites_an_existing_backup(tmp_path: Path) -> None:
    settings = Settings.load(home=tmp_path, env={})
    with ToolLibrary.open(settings) as library:
        library.add(_spec("first"), provenance=Provenance(), gate={})
    first = fresh_library(settings)
    with ToolLibrary.open(settings) as library:
        library.add(_spec("second"), provenance=Provenance(), gate={})
    second = fresh_library(settings)  # the same second, the same process: still a new name
    assert first is not None and second is not None and first != second
    assert _names(first) == {"first"} and _names(second) == {"second"}
    assert fresh_library(settings) is None  # nothing left to move


def test_fresh_moves_the_file_library_url_names(tmp_path: Path) -> None:
    other = tmp_path / "elsewhere" / "team.db"
    settings = Settings.load(home=tmp_path / "home", env={"TOOLSMITH_LIBRARY_URL": f"sqlite:///{other}"})
    with ToolLibrary.open(settings) as library:
        library.add(_spec("on_the_other_file"), provenance=Provenance(), gate={})
    backup = fresh_library(settings)
    assert backup is not None and backup.parent == other.parent and not other.exists()
    assert _names(backup) == {"on_the_other_file"}


def test_fresh_refuses_a_postgresql_library(tmp_path: Path) -> None:
    settings = Settings.load(home=tmp_path, env={"TOOLSMITH_LIBRARY_URL": "postgresql://team@db.invalid/tools"})
    with pytest.raises(ConfigError) as refused:
        fresh_library(settings)
    assert refused.value.setting == "library.url" and "PostgreSQL" in str(refused.value)


def _held_exclusively_elsewhere(lock_file: Path) -> bool:
    """Whether someone holds the library's lock: an exclusive try on a new descriptor fails."""
    import fcntl

    with lock_file.open("a") as fh:
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return True
        fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return False


@pytest.mark.parametrize(("command", "target"), [("mcp", "toolsmith.mcp.server.serve"), ("ui", "toolsmith.ui.serve")])
def test_servers_hold_the_library_so_fresh_waits(
    command: str, target: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`toolsmith mcp` and `toolsmith ui` hold the library while serving, as runs do."""
    if command == "mcp":
        pytest.importorskip("mcp")
    from typer.testing import CliRunner

    from toolsmith.cli import app

    home = tmp_path / "home"
    seen: list[bool] = []
    monkeypatch.setattr(target, lambda *a, **k: seen.append(_held_exclusively_elsewhere(home / "library.db.lock")))
    result = CliRunner().invoke(app, [command], env={"TOOLSMITH_HOME": str(home), "TOOLSMITH_NETWORK": "false"})
    assert result.exit_code == 0, result.output
    assert seen == [True]  # held while serving ...
    assert not _held_exclusively_elsewhere(home / "library.db.lock")  # ... and let go after
