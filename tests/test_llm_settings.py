"""The [model] settings: defaults, config file, environment overrides, and their wiring."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from toolsmith.agent.session import make_model
from toolsmith.config import ModelSettings, Settings
from toolsmith.config.providers import ProviderConfig
from toolsmith.errors import ConfigError
from toolsmith.events import Event, ModelProgress, ModelRetry
from toolsmith.model.client import ChatModel
from toolsmith.model.stream import StreamProgress


def load(tmp_path: Path, toml: str = "", **env: str) -> Settings:
    (tmp_path / "config.toml").write_text(toml, encoding="utf-8")
    return Settings.load(tmp_path, env=env)


def test_defaults_suit_slow_local_and_reasoning_models(tmp_path: Path) -> None:
    model = load(tmp_path).model
    assert model == ModelSettings()
    assert model.timeout_s == 600 and model.timeout_s >= 300
    assert model.retry_total_s >= 120 and model.max_attempts >= 5
    assert model.stream and not model.retry_timeouts


def test_config_file_and_environment_layers(tmp_path: Path) -> None:
    toml = "[model]\ntimeout_s = 900\nretry_total_s = 60\nmax_attempts = 4\nstream = false\n"
    assert load(tmp_path, toml).model == ModelSettings(900.0, 60.0, 4, False, False)
    env = {
        "TOOLSMITH_MODEL_TIMEOUT_S": "1200",
        "TOOLSMITH_MODEL_RETRY_TOTAL_S": "0",
        "TOOLSMITH_MODEL_MAX_ATTEMPTS": "2",
        "TOOLSMITH_MODEL_STREAM": "true",
        "TOOLSMITH_MODEL_RETRY_TIMEOUTS": "1",
    }
    assert load(tmp_path, toml, **env).model == ModelSettings(1200.0, 0.0, 2, True, True)


@pytest.mark.parametrize(
    ("toml", "env", "named"),
    [
        ("[model]\ntimeout_s = nan\n", {}, "model.timeout_s"),
        ("[model]\ntimeout_s = inf\n", {}, "model.timeout_s"),
        ("[model]\ntimeout_s = 0\n", {}, "model.timeout_s"),
        ("[model]\nretry_total_s = -1\n", {}, "model.retry_total_s"),
        ("[model]\nmax_attempts = 2.5\n", {}, "model.max_attempts"),
        ("[model]\nstream = 'sometimes'\n", {}, "model.stream"),
        ("[model]\ntimeout_s = 30\n", {"TOOLSMITH_MODEL_TIMEOUT_S": "nan"}, "TOOLSMITH_MODEL_TIMEOUT_S"),
        ("", {"TOOLSMITH_MODEL_RETRY_TOTAL_S": "inf"}, "TOOLSMITH_MODEL_RETRY_TOTAL_S"),
        ("", {"TOOLSMITH_MODEL_MAX_ATTEMPTS": "0"}, "TOOLSMITH_MODEL_MAX_ATTEMPTS"),
    ],
)
def test_bad_values_name_the_setting_actually_used(tmp_path: Path, toml: str, env: dict[str, str], named: str) -> None:
    with pytest.raises(ConfigError) as info:
        load(tmp_path, toml, **env)
    assert info.value.setting == named and named in str(info.value)


def test_make_model_wires_the_settings_and_reports_events(tmp_path: Path) -> None:
    settings = load(tmp_path, "[model]\ntimeout_s = 42\nretry_total_s = 7\nmax_attempts = 3\nstream = false\n")
    seen: list[Event] = []
    config = ProviderConfig("custom", "m", "http://127.0.0.1:9/v1", "k", None)
    model = make_model(config, settings, seen.append, {"task": 2, "step": 5})
    assert isinstance(model, ChatModel)
    assert model.timeout == 42 and not model.stream
    assert (model.retry.total_s, model.retry.max_attempts, model.retry.retry_timeouts) == (7, 3, False)
    assert model.on_retry is not None and model.on_progress is not None
    model.on_retry(1, 2.0, "HTTP 503")
    model.on_progress(StreamProgress(chunks=3, chars=10, reasoning_chars=0, tool_calls=0, elapsed_s=1.5))
    retry, progress = seen
    assert isinstance(retry, ModelRetry) and retry.task == 2
    assert isinstance(progress, ModelProgress) and (progress.task, progress.step, progress.chars) == (2, 5, 10)
    assert not math.isnan(progress.elapsed_s)
