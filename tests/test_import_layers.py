"""The import contracts in pyproject.toml can fail: planted violations are caught.

scripts/test runs the contracts on the real tree; these tests run them on a copy of
``src/toolsmith`` with one forbidden import added, and expect the named contract broken.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow  # whole processes per test: the full suite runs these, scripts/test --fast skips them

ROOT = Path(__file__).resolve().parents[1]
LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"


def lint(src: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(src)}
    argv = [sys.executable, "-c", LINT, "--no-cache", "--config", str(ROOT / "pyproject.toml")]
    return subprocess.run(argv, cwd=src, env=env, capture_output=True, text=True, timeout=120)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "src" / "toolsmith", tmp_path / "toolsmith", ignore=shutil.ignore_patterns("__pycache__"))
    return tmp_path


def plant(tree: Path, module: str, line: str) -> None:
    path = tree / module
    path.write_text(path.read_text(encoding="utf-8") + f"\n{line}  # planted by the test\n", encoding="utf-8")


@pytest.mark.parametrize(
    ("module", "line", "broken"),
    [
        # isolation reaching for the index client, through the packages subsystem
        ("toolsmith/isolation/result.py", "import toolsmith.packages.index", "Isolation only"),
        ("toolsmith/isolation/harness.py", "from toolsmith.library import ToolLibrary", "Isolation only"),
        ("toolsmith/packages/hooks.py", "import toolsmith.library.store", "Package installs know nothing"),
        # the settings importing the agent: a lower layer importing a higher one, and a cycle
        ("toolsmith/config/settings.py", "import toolsmith.agent.loop", "Layers:"),
        ("toolsmith/config/settings.py", "import toolsmith.agent.loop", "No import cycles"),
        # the gate reaching up for the meta-tools: the cycle the old contract had to ignore
        ("toolsmith/gate/core.py", "import toolsmith.agent.metatools.create_tool", "Layers:"),
        ("toolsmith/gate/core.py", "import toolsmith.agent.metatools.create_tool", "No import cycles"),
        # inside the agent: a guard importing the loop that runs it
        ("toolsmith/agent/guards/nudge.py", "import toolsmith.agent.loop", "Agent runtime:"),
        # two modules of one layer must not import each other
        ("toolsmith/library/store.py", "import toolsmith.sandbox", "Layers:"),
    ],
)
def test_a_planted_violation_breaks_its_contract(tree: Path, module: str, line: str, broken: str) -> None:
    plant(tree, module, line)
    done = lint(tree)
    assert done.returncode == 1, done.stdout + done.stderr
    assert verdict(done.stdout, broken) == "BROKEN", done.stdout


def test_the_clean_copy_is_judged_kept_contract_by_contract(tree: Path) -> None:
    done = lint(tree)
    assert done.returncode == 0, done.stdout + done.stderr
    for name in ("Layers:", "Agent runtime:", "Isolation only", "Package installs know nothing", "No import cycles"):
        assert verdict(done.stdout, name) == "KEPT", done.stdout


def verdict(stdout: str, name: str) -> str:
    """KEPT or BROKEN as the summary reports it for the contract whose name starts with ``name``."""
    text = " ".join(stdout.split())  # long contract names wrap across lines
    rest = text[text.index(name) :]
    kept, broken = rest.find(" KEPT"), rest.find(" BROKEN")
    if broken != -1 and (kept == -1 or broken < kept):
        return "BROKEN"
    assert kept != -1, stdout
    return "KEPT"


def test_every_module_has_a_place_in_the_layers() -> None:
    """A module the layers contract does not name is checked by no layer rule at all."""
    import re

    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    layers = re.search(r'id = "layers".*?layers = \[(.*?)\]', text, re.S)
    assert layers is not None, "the layers contract is in pyproject.toml"
    named = set(re.findall(r"\w+", layers.group(1)))
    package = ROOT / "src" / "toolsmith"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert modules - named == set(), "add these to the layers contract in pyproject.toml"


def test_every_agent_module_has_a_place_in_the_agent_layers() -> None:
    import re

    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    layers = re.search(r'id = "agent-layers".*?layers = \[(.*?)\]', text, re.S)
    assert layers is not None, "the agent's layers contract is in pyproject.toml"
    named = set(re.findall(r"\w+", layers.group(1)))
    package = ROOT / "src" / "toolsmith" / "agent"
    modules = {p.stem for p in package.glob("*.py") if p.stem != "__init__"}
    modules |= {p.name for p in package.iterdir() if (p / "__init__.py").is_file()}
    assert modules - named == set(), "add these to the agent-layers contract in pyproject.toml"


def test_the_contracts_ignore_nothing_and_name_nothing_optional() -> None:
    """An ignored edge or an optional name is a hole a renamed module falls through unseen."""
    text = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    contracts = text[text.index("[tool.importlinter]") :]
    assert "ignore_imports" not in contracts
    layers = [line for line in contracts.splitlines() if line.startswith('    "')]
    assert layers and not [line for line in layers if "(" in line]


def test_the_package_root_holds_a_handful_of_modules() -> None:
    modules = sorted(p.stem for p in (ROOT / "src" / "toolsmith").glob("*.py") if p.stem != "__init__")
    assert len(modules) <= 12, modules
