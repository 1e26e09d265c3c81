"""Compute the suites' truth with the pinned packages and write (or check) the .jsonl files.

The computations run in another Python: a throwaway virtual environment that gets
exactly :data:`~.calcs.PINS` (so the main environment stays clean), or an environment
the caller names with ``--python`` that already holds them. :mod:`.calcs` is run there
by its file path, so nothing of toolsmith has to be installed in it. Time zones come
from the pinned ``tzdata`` package, never from the machine's own database.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from toolsmith.errors import InstallError, SuiteError
from toolsmith.evals.checks import task_to_dict
from toolsmith.evals.groundtruth import calcs
from toolsmith.evals.groundtruth.day import DAY
from toolsmith.evals.groundtruth.pairs import PAIRS
from toolsmith.evals.groundtruth.spec import Computed, TaskDef, Values

SUITES: dict[str, tuple[TaskDef, ...]] = {"day_of_use": DAY, "pairs": PAIRS}
SUITE_DIR = Path(__file__).resolve().parent.parent / "suites"
CALCS_FILE = Path(calcs.__file__).resolve()


@dataclass(frozen=True)
class Difference:
    """A suite file that is not what the pinned packages compute."""

    suite: str
    path: Path
    detail: str


@contextmanager
def pinned_python(python: Path | None) -> Iterator[Path]:
    """``python`` if given, else a throwaway environment holding the pins (removed afterwards)."""
    if python is not None:
        yield python
        return
    with tempfile.TemporaryDirectory(prefix="toolsmith-groundtruth-") as tmp:
        venv = Path(tmp) / "venv"
        _run([sys.executable, "-m", "venv", str(venv)], "create the environment")
        child = venv / "bin" / "python"
        pins = [f"{name}=={version}" for name, version in calcs.PINS.items()]
        _run([str(child), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *pins], "install the pins")
        yield child


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise InstallError(
            f"Could not {what}: {done.stderr.strip()[-2000:]}", stderr=done.stderr, exit_code=done.returncode
        )


def compute(python: Path, definitions: tuple[TaskDef, ...]) -> dict[str, Values]:
    """Every task's computed values, from :mod:`.calcs` run by ``python``."""
    env = {**os.environ, "PYTHONTZPATH": "", "PYTHONIOENCODING": "utf-8"}
    request = json.dumps([d.request() for d in definitions if d.calls])
    done = subprocess.run(
        [str(python), str(CALCS_FILE)], input=request, capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        raise SuiteError(f"The ground-truth computations failed:\n{done.stderr.strip()[-3000:]}")
    result = json.loads(done.stdout)
    wrong = {p: v for p, v in result["versions"].items() if v != calcs.PINS[p]}
    if wrong:
        shown = ", ".join(f"{p} {v or 'missing'} (pinned {calcs.PINS[p]})" for p, v in wrong.items())
        raise SuiteError(f"{python} does not hold the pinned packages: {shown}")
    return {task: [_computed(task, v) for v in results] for task, results in result["values"].items()}


def _computed(task: str, value: object) -> Computed:
    if not isinstance(value, dict):
        raise SuiteError(f"The ground-truth computations gave {task} a result that is not an object: {value!r}")
    return Computed(value)


def render(definitions: tuple[TaskDef, ...], values: dict[str, Values]) -> str:
    """The suite as JSON Lines, one task per line, in order."""
    lines = [json.dumps(task_to_dict(d.task(values.get(d.id, []))), ensure_ascii=False) for d in definitions]
    return "\n".join(lines) + "\n"


def build(python: Path | None, suite_dir: Path = SUITE_DIR) -> dict[str, str]:
    """Every suite's text, computed with the pinned packages."""
    with pinned_python(python) as child:
        everything = tuple(d for defs in SUITES.values() for d in defs)
        values = compute(child, everything)
    return {name: render(defs, values) for name, defs in SUITES.items()}


def write(texts: dict[str, str], suite_dir: Path = SUITE_DIR) -> list[Path]:
    suite_dir.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in texts.items():
        path = suite_dir / f"{name}.jsonl"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def differences(texts: dict[str, str], suite_dir: Path = SUITE_DIR) -> list[Difference]:
    """Where the committed files differ from what was just computed (line by line)."""
    found = []
    for name, text in texts.items():
        path = suite_dir / f"{name}.jsonl"
        committed = path.read_text(encoding="utf-8") if path.exists() else ""
        if committed == text:
            continue
        old, new = committed.splitlines(), text.splitlines()
        changed = [i + 1 for i in range(max(len(old), len(new))) if i >= len(old) or i >= len(new) or old[i] != new[i]]
        found.append(Difference(name, path, f"lines {', '.join(map(str, changed[:10]))} differ"))
    return found
