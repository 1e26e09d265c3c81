"""The README's snippets work as written.

Every fenced block is TOML (loaded as a config file by
``tests/test_config_reference.py::test_every_toml_example_in_the_readme_loads``), JSON,
shell, or the one diagram. JSON parses; each shell block passes ``bash -n``; every
``toolsmith`` command in them names real commands and options. Every shell command is
either run here, offline, or listed with the reason it cannot run offline: a new command
in the README must be one or the other. The commands run block by block, each block in a
fresh copy of the home that the setup's ``toolsmith demo --offline --keep`` left (a
newcomer tries a block at a time), each command with the exit code it must give.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolsmith import cli

README = Path(__file__).resolve().parents[1] / "README.md"
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.S | re.M)

# Run in order, each with the exit code it must give.
RUN: dict[str, int] = {
    "toolsmith demo --offline --keep": 0,
    "toolsmith tools list": 0,
    'toolsmith tools search "days between dates" --limit 3': 0,
    "toolsmith tools show days_between": 0,
    "toolsmith tools history days_between": 0,
    "toolsmith tools export ./bundle": 0,
    "toolsmith tools import ./bundle": 0,
    "toolsmith tools rm days_between": 0,
    "toolsmith tools review": 0,  # nothing waits: it says so
    # the syntax of a version: the kept library has no version 3 to reject
    'toolsmith tools reject days_between@3 --reason "calls an undocumented endpoint"': 1,
    'toolsmith tools quarantine days_between --reason "upstream changed"': 0,
    'toolsmith tools approve days_between --reason "read the code"': 0,  # re-admits the quarantined version
    "toolsmith tools audit days_between": 0,
    "toolsmith tools test --all --quarantine-failing": 0,
    "toolsmith tools sync": 0,
    "toolsmith tools keygen ~/.toolsmith-signing": 0,
    "toolsmith tools export ./bundle --sign-key ~/.toolsmith-signing": 0,
    "toolsmith tools import ./bundle --verify-key ~/.toolsmith-signing.pub": 0,
    "toolsmith library where": 0,
    """toolsmith tools call days_between --args '{"start": "2024-02-01", "end": "2024-03-01"}'""": 0,
    """echo '{"start": "2024-02-01", "end": "2024-03-01"}' | toolsmith tools call days_between --args -""": 0,
    "toolsmith skills export": 0,
    "toolsmith skills sync --to .agents/skills": 0,
}
# Not run here, and why.
SKIP: dict[str, str] = {
    "toolsmith tools call days_between@2 --args-file args.json": "the syntax of a pin: the kept library holds version 1",
    "toolsmith skills export --to ~/.claude/skills days_between get_exchange_rate": "writes into your agents' folders",
    "pip install -e . && toolsmith demo --offline": "installs the package",
    "scripts/test": "the test suite itself",
    "scripts/test --fast": "the test suite itself",
    "scripts/test --fast -k gate": "the test suite itself",
    "export OPENAI_API_KEY=...": "sets a model key",
    "toolsmith demo": "needs a model",
    'toolsmith run "How many days between 2024-02-01 and 2024-03-01?" "以 ISO 格式给出 2025-01-01 之后 90 天的日期"': (
        "needs a model"
    ),
    "export LLM_PROVIDER=ollama LLM_MODEL=qwen3:8b": "sets a local model",
    "export LLM_PROVIDER=vllm LLM_MODEL=Qwen/Qwen3-8B": "sets a local model",
    "export LLM_PROVIDER=lmstudio LLM_MODEL=qwen/qwen3-8b": "sets a local model",
    "export LLM_BASE_URL=http://127.0.0.1:8080/v1 LLM_MODEL=my-model": "sets a local model",
    "toolsmith ui": "serves until stopped",
    "toolsmith ui --port 0": "serves until stopped",
    "TOOLSMITH_UI_TOKEN=... toolsmith ui --host 0.0.0.0": "serves until stopped",
    "createdb toolsmith": "needs PostgreSQL",
    "export TOOLSMITH_LIBRARY_URL='postgresql://alice@db.internal/toolsmith'": "needs PostgreSQL",
    "toolsmith library migrate --to 'postgresql://alice@db.internal/toolsmith'": "needs PostgreSQL",
    "toolsmith tools export ./bundle && TOOLSMITH_LIBRARY_URL=... toolsmith tools import ./bundle": "needs PostgreSQL",
    "pg_dump --format=custom toolsmith > toolsmith.dump": "needs PostgreSQL",
    "toolsmith library migrate --to sqlite:////backups/toolsmith-$(date +%F).db": "writes to /backups",
    "toolsmith sandbox run script.py --pip humanize --no-network --json": "installs from the package index",
    "pip install 'toolsmith[eval]'": "installs from the package index",
    "inspect eval toolsmith/day_of_use --model openai-api/mine/MODEL --max-samples 1": "needs a model",
    "inspect view": "serves until stopped",
    "toolsmith eval report --model openai-api/mine/MODEL --out results": "needs a model",
    "pip install inspect-evals": "installs from the package index",
    "inspect eval inspect_evals/gaia --model openai-api/mine/MODEL --solver toolsmith/toolsmith "
    "-S library=shared -T sandbox=local --max-samples 1": "needs a model and the web",
    "python bench/search.py": "a benchmark",
    "python bench/search.py --backend postgresql": "a benchmark",
    "python bench/sandbox.py": "a benchmark",
    "python bench/serve.py": "a benchmark",
    "python bench/agent.py": "a benchmark",
    "python bench/packages.py": "a benchmark",
    "python bench/model.py": "a benchmark",
    "toolsmith mcp": "serves until stopped",
    "toolsmith mcp --transport http --port 8765": "serves until stopped",
    "toolsmith mcp --transport http --port 0": "serves until stopped",
    "toolsmith mcp --solve-task": "serves until stopped, and needs a model",
}


def _blocks(language: str) -> list[str]:
    return [body for lang, body in FENCE.findall(README.read_text(encoding="utf-8")) if lang == language]


def _block_commands(block: str) -> list[str]:
    """The commands of one shell block in order: continuations joined, comments dropped."""
    commands = []
    for line in re.sub(r"\\\n\s*", " ", block).splitlines():
        command = " ".join(re.sub(r"\s+#(?=\s|$).*$", "", line).split())
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def _commands() -> list[str]:
    return [command for block in _blocks("bash") for command in _block_commands(block)]


def _toolsmith_invocations(command: str) -> list[list[str]]:
    """The argument lists of the ``toolsmith`` calls in ``command`` (after ``VAR=...`` and ``&&``)."""
    parts: list[list[str]] = [[]]
    for word in shlex.split(command):
        if word == "&&":
            parts.append([])
        else:
            parts[-1].append(word)
    calls = []
    for words in parts:
        while words and re.match(r"^[A-Z_]+=", words[0]):  # VAR=value before the command
            words.pop(0)
        if words and words[0] == "toolsmith":
            calls.append(words[1:])
    return calls


def test_every_block_is_one_the_tests_read() -> None:
    languages = [lang for lang, _ in FENCE.findall(README.read_text(encoding="utf-8"))]
    assert set(languages) <= {"toml", "json", "bash", "text", ""}, languages
    assert languages.count("") == 1  # the diagram
    assert languages.count("toml") >= 2 and languages.count("json") >= 1 and languages.count("bash") >= 10


def test_every_json_block_parses_and_starts_toolsmith_mcp() -> None:
    for block in _blocks("json"):
        server = json.loads(block)["mcpServers"]["toolsmith"]
        assert Path(server["command"]).name == "toolsmith" and server["args"] == ["mcp"]
        assert set(server.get("env", {})) <= {"TOOLSMITH_HOME"}


@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_every_shell_block_parses() -> None:
    for block in _blocks("bash"):
        done = subprocess.run(["bash", "-n"], input=block, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, (block, done.stderr)


def test_every_shell_command_is_run_here_or_says_why_not() -> None:
    commands = _commands()
    unclassified = [c for c in commands if c not in RUN and c not in SKIP]
    assert not unclassified, f"classify these README commands in RUN or SKIP: {unclassified}"
    stale = sorted((set(RUN) | set(SKIP)) - set(commands))
    assert not stale, f"no longer in the README: {stale}"


@pytest.mark.parametrize("args", [a for c in _commands() for a in _toolsmith_invocations(c)], ids=" ".join)
def test_every_toolsmith_command_names_real_commands_and_options(
    args: list[str], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    # --help is eager: the words are parsed (an unknown command or option exits 2), nothing runs.
    assert cli.run([*args, "--help"]) == 0, capsys.readouterr().err
    assert "Usage: toolsmith" in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bash") is None, reason="no bash")
def test_the_offline_commands_run_as_written(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and not k.startswith("LLM_")}
    env.update(TOOLSMITH_NETWORK="false", PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}")
    env.pop("TOOLSMITH_CONFIG", None)
    kept = None  # the home the setup's `demo --offline --keep` left
    ran = []
    for number, block in enumerate(_blocks("bash")):
        commands = [c for c in _block_commands(block) if c in RUN]
        if not commands:
            continue
        folder = tmp_path / f"block-{number}"
        if kept is None:
            folder.mkdir()
        else:
            shutil.copytree(kept, folder / "home")
        home = {"HOME": str(folder), "TOOLSMITH_HOME": str(folder / "home")}
        for command in commands:
            done = subprocess.run(
                ["bash", "-c", command], cwd=folder, env={**env, **home}, capture_output=True, text=True, timeout=300
            )
            assert done.returncode == RUN[command], (command, done.stdout[-2000:], done.stderr[-2000:])
            assert "Traceback" not in done.stderr, (command, done.stderr)
            if done.returncode:
                assert done.stderr.startswith("error: ") and done.stderr.count("\n") == 1, (command, done.stderr)
            ran.append(command)
        kept = kept or folder / "home"
    assert ran == [c for c in _commands() if c in RUN] and ran[0] == "toolsmith demo --offline --keep"


# --- facts the README states, against their one source ---------------------------------------


def _pyproject() -> dict[str, Any]:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib
    data: dict[str, Any] = tomllib.loads((README.parent / "pyproject.toml").read_text(encoding="utf-8"))
    return data


def test_the_readme_names_the_platform_and_the_python_pyproject_requires() -> None:
    required = _pyproject()["project"]["requires-python"]
    found = re.fullmatch(r">=\s*(\d+\.\d+)", required)
    assert found, required
    text = README.read_text(encoding="utf-8")
    assert "runs on Linux" in text and f"Python {found.group(1)} or later" in text


def test_the_readme_names_every_provider_and_its_default_model() -> None:
    from toolsmith.config.providers import PROVIDERS

    text = README.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `LLM_PROVIDER`"))
    model_row = next(line for line in text.splitlines() if line.startswith("| `LLM_MODEL`"))
    for name, spec in PROVIDERS.items():
        assert f"`{name}`" in row, name
        if spec.default_model:
            assert f"`{spec.default_model}` for `{name}`" in model_row, name
        else:
            assert f"`{name}`" in model_row, name  # named among those without a default


def test_the_local_model_examples_use_providers_that_need_no_key() -> None:
    from toolsmith.config.providers import is_loopback_url, resolve_provider

    block = next(b for b in _blocks("bash") if "LLM_PROVIDER=ollama" in b)
    for command in _block_commands(block):
        assignments = dict(word.split("=", 1) for word in shlex.split(command)[1:])
        config = resolve_provider(assignments)  # no key in the environment given
        assert config.model == assignments["LLM_MODEL"] and not config.key_present
        assert is_loopback_url(str(config.base_url)), config.base_url


def test_the_mcp_section_tells_one_story_about_authentication() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## Serving the library over MCP") :]
    assert "Authorization: Bearer" in section and "others get 401" in section
    assert "no authentication" not in section.lower()
