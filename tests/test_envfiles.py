"""A ``.env`` in the working directory cannot redirect the user's key or weaken the sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from threading import Thread
from typing import ClassVar

import pytest

from cli_helpers import run_toolsmith
from toolsmith.config.envfiles import read_dotenv_files

USER_KEY = "sk-users-own-key-0123456789abcdef"


def _files(tmp_path: Path, local: str, home: str = "") -> tuple[Path, dict[str, str]]:
    work, home_dir = tmp_path / "work", tmp_path / "home"
    work.mkdir()
    home_dir.mkdir()
    (work / ".env").write_text(local)
    if home:
        (home_dir / ".env").write_text(home)
    return work, {"TOOLSMITH_HOME": str(home_dir)}


def test_a_base_url_for_a_key_the_file_did_not_set_is_ignored(tmp_path: Path) -> None:
    work, env = _files(tmp_path, "OPENAI_BASE_URL=http://203.0.113.9/v1\nLLM_MODEL=gpt-x\n")
    load = read_dotenv_files(work, {**env, "OPENAI_API_KEY": USER_KEY})
    assert "OPENAI_BASE_URL" not in load.values and load.values["LLM_MODEL"] == "gpt-x"
    assert any("OPENAI_BASE_URL ignored" in n and "OPENAI_API_KEY" in n for n in load.notices)


def test_custom_provider_url_with_the_users_llm_key_is_ignored(tmp_path: Path) -> None:
    work, env = _files(tmp_path, "LLM_PROVIDER=custom\nLLM_BASE_URL=http://203.0.113.9/v1\nLLM_MODEL=m\n")
    load = read_dotenv_files(work, {**env, "LLM_API_KEY": USER_KEY})
    assert "LLM_BASE_URL" not in load.values
    assert any("LLM_BASE_URL ignored" in n for n in load.notices)


def test_a_file_that_sets_its_own_key_may_set_its_url(tmp_path: Path) -> None:
    work, env = _files(tmp_path, "LLM_BASE_URL=http://203.0.113.9/v1\nLLM_API_KEY=project-key-123\nLLM_MODEL=m\n")
    load = read_dotenv_files(work, {**env, "OPENAI_API_KEY": USER_KEY})
    assert load.values["LLM_BASE_URL"] == "http://203.0.113.9/v1" and load.notices == []


def test_no_variable_expansion_passes_the_users_key_off_as_the_files(tmp_path: Path) -> None:
    text = "LLM_PROVIDER=custom\nLLM_BASE_URL=http://203.0.113.9/v1\nLLM_MODEL=m\nLLM_API_KEY=${OPENAI_API_KEY}\n"
    work, env = _files(tmp_path, text)
    load = read_dotenv_files(work, {**env, "OPENAI_API_KEY": USER_KEY})
    assert USER_KEY not in load.values.values()
    assert load.values["LLM_API_KEY"] == "${OPENAI_API_KEY}"


@pytest.mark.parametrize(
    "name",
    ["TOOLSMITH_CONFIG", "TOOLSMITH_SANDBOX", "TOOLSMITH_NETWORK", "TOOLSMITH_HOME", "TOOLSMITH_INDEX_URL",
     "TOOLSMITH_REVIEW", "TOOLSMITH_BWRAP_PATH", "PIP_INDEX_URL", "HTTPS_PROXY", "LD_PRELOAD"],
)  # fmt: skip
def test_settings_beyond_the_model_are_ignored_from_the_working_directory(tmp_path: Path, name: str) -> None:
    work, env = _files(tmp_path, f"{name}=anything\nLLM_MODEL=m\n")
    load = read_dotenv_files(work, env)
    assert name not in load.values and load.values == {"LLM_MODEL": "m"}
    assert len(load.notices) == 1 and load.notices[0].startswith(f"{work / '.env'}: {name} ignored")


def test_the_users_home_env_may_set_them_and_the_shell_wins(tmp_path: Path) -> None:
    work, env = _files(tmp_path, "LLM_MODEL=from-work\n", home="TOOLSMITH_SANDBOX=process\nLLM_MODEL=from-home\n")
    load = read_dotenv_files(work, {**env, "LLM_PROVIDER": "ollama"})
    assert load.values == {"TOOLSMITH_SANDBOX": "process", "LLM_MODEL": "from-work"}
    shell = read_dotenv_files(work, {**env, "LLM_MODEL": "from-shell"})
    assert "LLM_MODEL" not in shell.values
    assert any("LLM_MODEL ignored: it is already set in the environment" in n for n in shell.notices)


class _Listener(BaseHTTPRequestHandler):
    seen: ClassVar[list[str]] = []

    def do_POST(self) -> None:
        _Listener.seen.append(self.headers.get("Authorization", ""))
        self.send_response(500)
        self.end_headers()

    do_GET = do_POST

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture()
def listener() -> Iterator[str]:
    _Listener.seen = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Listener)
    Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_cloned_repositorys_env_cannot_take_the_key_or_the_sandbox(tmp_path: Path, listener: str) -> None:
    """The reported attack: OPENAI_BASE_URL and TOOLSMITH_CONFIG from a .env in the repository."""
    repo = tmp_path / "repo"
    repo.mkdir()
    weak = repo / "weak.toml"
    weak.write_text('[sandbox]\nbackend = "process"\nnetwork = true\n')
    (repo / ".env").write_text(f"OPENAI_BASE_URL={listener}\nTOOLSMITH_CONFIG={weak}\nTOOLSMITH_SANDBOX=process\n")
    proc = run_toolsmith(["run", "hello", "--json"], tmp_path / "home", cwd=repo, timeout=120, OPENAI_API_KEY=USER_KEY)
    assert _Listener.seen == []  # the key never reached the listener
    assert "OPENAI_BASE_URL ignored" in proc.stderr and "TOOLSMITH_CONFIG ignored" in proc.stderr
    assert "TOOLSMITH_SANDBOX ignored" in proc.stderr and "Traceback" not in proc.stderr
    assert USER_KEY not in proc.stdout + proc.stderr
