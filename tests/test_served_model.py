"""A model name the endpoint does not serve: ``doctor`` warns, and provenance and the run
record keep the name the endpoint's replies report (a local server such as LM Studio
answers with whatever model it has loaded, whatever the request named)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from agent_helpers import evolve_script
from toolsmith import cli
from toolsmith.cli.doctor import check_provider
from toolsmith.config import Settings
from toolsmith.library import ToolLibrary
from toolsmith.model import ModelReply
from toolsmith.testing import ScriptedModel, ScriptedServer

SERVED = "qwen3:8b"
ASKED = "gpt-5.4-mini"


class LoadedModel(ScriptedModel):
    """A server that answers with the model it has loaded, whatever the request asked for."""

    def complete(self, messages: list[dict[str, Any]], tools: Any) -> ModelReply:
        return replace(super().complete(messages, tools), model=SERVED)


@pytest.fixture()
def server() -> Iterator[tuple[ScriptedModel, ScriptedServer]]:
    model = LoadedModel(name=SERVED)
    with ScriptedServer(model) as srv:
        yield model, srv


def _endpoint(srv: ScriptedServer, monkeypatch: pytest.MonkeyPatch, model: str = ASKED) -> None:
    for name, value in {"LLM_PROVIDER": "custom", "LLM_BASE_URL": srv.base_url, "LLM_MODEL": model}.items():
        monkeypatch.setenv(name, value)


def test_doctor_warns_about_a_model_the_endpoint_does_not_list(
    tmp_path: Path, server: tuple[ScriptedModel, ScriptedServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, srv = server
    _endpoint(srv, monkeypatch)
    rows = {row.name: row for row in check_provider(Settings.load(home=tmp_path, env={}))}
    assert rows["model endpoint /models"].ok is True
    warning = rows["model name"]
    assert warning.ok is False and warning.detail.startswith("warning:")
    assert f"does not list {ASKED!r} (it lists {SERVED})" in warning.detail and "LLM_MODEL" in warning.detail

    _endpoint(srv, monkeypatch, model=SERVED)
    rows = {row.name: row for row in check_provider(Settings.load(home=tmp_path, env={}))}
    assert "model name" not in rows and rows["model endpoint /models"].ok is True


def test_provenance_and_the_run_record_keep_the_served_name(
    tmp_path: Path,
    server: tuple[ScriptedModel, ScriptedServer],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    model, srv = server
    model.add(*evolve_script())
    _endpoint(srv, monkeypatch)
    home = tmp_path / "home"
    monkeypatch.setenv("TOOLSMITH_HOME", str(home))
    monkeypatch.setenv("TOOLSMITH_NETWORK", "false")
    out = tmp_path / "run.json"
    task = "How many days between 2020-01-01 and 2020-03-01?"
    assert cli.run(["run", task, "--output", str(out)]) == 0, capsys.readouterr()
    assert srv.requests[0]["model"] == ASKED  # the request named the configured model

    with ToolLibrary(home / "library.db") as library:
        assert library.get("days_between").provenance.model == SERVED
    record = json.loads(out.read_text())
    assert record["model"] == ASKED and record["served_models"] == [SERVED]
    assert record["results"][0]["models"] == [SERVED]
    trajectory = Path(record["trajectory_file"]).read_text().splitlines()
    task_line = next(json.loads(line) for line in trajectory if json.loads(line)["record"] == "task")
    assert task_line["models"] == [SERVED]
