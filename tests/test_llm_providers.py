"""Provider selection: which endpoint, model and key a given environment leads to."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from toolsmith.config.envfiles import load_dotenv_files
from toolsmith.config.providers import (
    ProviderConfig,
    is_local_url,
    is_loopback_url,
    openrouter_model,
    resolve_provider,
)
from toolsmith.errors import ConfigError, MissingKeyError


def test_default_is_openai_with_sdk_default_url() -> None:
    config = resolve_provider({"OPENAI_API_KEY": "sk-openai-123456"})
    assert config.provider == "openai"
    assert config.model == "gpt-5.4-mini"
    assert config.base_url is None  # the SDK's own default
    assert config.api_key == "sk-openai-123456"
    assert config.key_variable == "OPENAI_API_KEY"
    assert config.fallback_from is None


@pytest.mark.parametrize(
    ("provider", "variable", "base_url", "model"),
    [
        ("moonshot", "MOONSHOT_API_KEY", "https://api.moonshot.cn/v1", "kimi-k2.5"),
        (
            "ark",
            "ARK_API_KEY",
            "https://ark.cn-beijing.volces.com/api/v3",
            "doubao-seed-1-6-251015",
        ),
        ("openrouter", "OPENROUTER_API_KEY", "https://openrouter.ai/api/v1", "openai/gpt-5.4-mini"),
    ],
)
def test_named_providers(provider: str, variable: str, base_url: str, model: str) -> None:
    config = resolve_provider({"LLM_PROVIDER": provider, variable: "key-abcdef"})
    assert (config.provider, config.base_url, config.model) == (provider, base_url, model)
    assert (config.api_key, config.key_variable) == ("key-abcdef", variable)


def test_provider_name_is_forgiving_and_checked() -> None:
    assert resolve_provider({"LLM_PROVIDER": " Kimi ", "MOONSHOT_API_KEY": "k"}).provider == "moonshot"
    assert resolve_provider({"LLM_PROVIDER": "volcengine", "ARK_API_KEY": "k"}).provider == "ark"
    with pytest.raises(ConfigError) as info:
        resolve_provider({"LLM_PROVIDER": "anthropic-direct"})
    assert info.value.setting == "LLM_PROVIDER"
    assert "moonshot" in str(info.value)


def test_ollama_needs_no_key() -> None:
    config = resolve_provider({"LLM_PROVIDER": "ollama"})
    assert config.base_url == "http://localhost:11434/v1"
    assert config.api_key == "ollama"
    assert config.key_variable is None
    assert config.key_present is False
    assert config.model == "qwen3:8b"


def test_local_servers_need_a_model_name() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_provider({"LLM_PROVIDER": "vllm"})
    assert info.value.setting == "LLM_MODEL"
    config = resolve_provider({"LLM_PROVIDER": "lmstudio", "LLM_MODEL": "qwen2.5-7b-instruct"})
    assert (config.base_url, config.model, config.key_present) == (
        "http://localhost:1234/v1",
        "qwen2.5-7b-instruct",
        False,
    )


def test_model_precedence_cli_over_env_over_default() -> None:
    env = {"OPENAI_API_KEY": "k", "LLM_MODEL": "gpt-4.1"}
    assert resolve_provider(env).model == "gpt-4.1"
    assert resolve_provider(env, model="gpt-4o").model == "gpt-4o"
    assert resolve_provider(env, model="  ").model == "gpt-4.1"  # a blank --model does not count


def test_provider_argument_beats_llm_provider() -> None:
    env = {"LLM_PROVIDER": "openai", "OPENAI_API_KEY": "k1", "ARK_API_KEY": "k2"}
    config = resolve_provider(env, provider="ark")
    assert (config.provider, config.api_key) == ("ark", "k2")


@pytest.mark.parametrize(
    ("env", "model"),
    [
        ({}, "openai/gpt-5.4-mini"),
        ({"LLM_MODEL": "gpt-4o"}, "openai/gpt-4o"),
        ({"LLM_PROVIDER": "moonshot"}, "moonshotai/kimi-k2.5"),
        ({"LLM_PROVIDER": "moonshot", "LLM_MODEL": "moonshot-v1-8k"}, "moonshotai/moonshot-v1-8k"),
        (
            {"LLM_PROVIDER": "moonshot", "LLM_MODEL": "kimi-k2-0905-preview"},
            "moonshotai/kimi-k2-0905",
        ),
        ({"LLM_PROVIDER": "ark"}, "bytedance-seed/seed-1.6"),
        (
            {"LLM_PROVIDER": "ark", "LLM_MODEL": "doubao-seed-1-6-flash-250828"},
            "bytedance-seed/seed-1.6-flash",
        ),
        ({"LLM_PROVIDER": "ark", "LLM_MODEL": "deepseek-v3-250324"}, "deepseek/deepseek-chat"),
        ({"LLM_PROVIDER": "ark", "LLM_MODEL": "kimi-k2-250711"}, "moonshotai/kimi-k2"),
        ({"LLM_MODEL": "anthropic/claude-sonnet-4"}, "anthropic/claude-sonnet-4"),
    ],
)
def test_openrouter_fallback_maps_the_model(env: dict[str, str], model: str) -> None:
    config = resolve_provider({**env, "OPENROUTER_API_KEY": "sk-or-abcdef"})
    assert config.provider == "openrouter"
    assert config.base_url == "https://openrouter.ai/api/v1"
    assert config.model == model
    assert (config.api_key, config.key_variable) == ("sk-or-abcdef", "OPENROUTER_API_KEY")
    assert config.fallback_from == env.get("LLM_PROVIDER", "openai")


def test_no_fallback_when_own_key_or_own_url_is_set() -> None:
    own = resolve_provider({"MOONSHOT_API_KEY": "k", "OPENROUTER_API_KEY": "o", "LLM_PROVIDER": "moonshot"})
    assert own.provider == "moonshot"
    with pytest.raises(MissingKeyError):
        # A base URL of the user's own means "that server", never silently OpenRouter.
        resolve_provider(
            {
                "LLM_BASE_URL": "https://llm.example.org/v1",
                "LLM_MODEL": "m",
                "OPENROUTER_API_KEY": "o",
            }
        )


def test_ark_endpoint_ids_cannot_be_mapped() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_provider(
            {
                "LLM_PROVIDER": "ark",
                "LLM_MODEL": "ep-20240607092512-c5wnh",
                "OPENROUTER_API_KEY": "o",
            }
        )
    assert info.value.setting == "LLM_MODEL"
    assert "ARK_API_KEY" in str(info.value)


def test_explicit_openrouter_namespaces_bare_names() -> None:
    config = resolve_provider({"LLM_PROVIDER": "openrouter", "OPENROUTER_API_KEY": "o", "LLM_MODEL": "gpt-4o"})
    assert config.model == "openai/gpt-4o"
    assert config.fallback_from is None


def test_openrouter_model_mapping_rules() -> None:
    assert openrouter_model("gpt-4o") == "openai/gpt-4o"
    assert openrouter_model("o4-mini") == "openai/o4-mini"
    assert openrouter_model("deepseek-chat") == "deepseek/deepseek-chat"
    assert openrouter_model("kimi-k2-0711-preview") == "moonshotai/kimi-k2"
    assert openrouter_model("qwen/qwen3-coder") == "qwen/qwen3-coder"
    assert openrouter_model("some-unknown-model") == "some-unknown-model"


def test_custom_base_url_on_loopback_needs_no_key() -> None:
    config = resolve_provider({"LLM_BASE_URL": "http://127.0.0.1:8000/v1/", "LLM_MODEL": "Qwen/Qwen2.5-7B"})
    assert config.provider == "custom"
    assert config.base_url == "http://127.0.0.1:8000/v1"
    assert config.model == "Qwen/Qwen2.5-7B"
    assert config.key_present is False
    assert config.api_key  # a placeholder, so the SDK never reaches for OPENAI_API_KEY
    lan = resolve_provider({"LLM_BASE_URL": "http://192.168.1.20:1234/v1", "LLM_MODEL": "m"})
    assert lan.key_present is False


def test_custom_remote_url_requires_llm_api_key() -> None:
    env = {
        "LLM_BASE_URL": "https://llm.example.org/v1",
        "LLM_MODEL": "m",
        "OPENAI_API_KEY": "sk-openai-secret",
    }
    with pytest.raises(MissingKeyError) as info:
        resolve_provider(env)
    # The OpenAI key is not offered to somebody else's server.
    assert (info.value.provider, info.value.variable) == ("custom", "LLM_API_KEY")
    config = resolve_provider({**env, "LLM_API_KEY": "sk-custom-1"})
    assert (config.api_key, config.key_variable) == ("sk-custom-1", "LLM_API_KEY")


def test_openai_base_url_pairs_with_openai_key() -> None:
    config = resolve_provider({"OPENAI_BASE_URL": "https://proxy.example.org/v1", "OPENAI_API_KEY": "sk-o"})
    assert (config.provider, config.base_url, config.key_variable) == (
        "openai",
        "https://proxy.example.org/v1",
        "OPENAI_API_KEY",
    )
    local = resolve_provider({"OPENAI_BASE_URL": "http://localhost:8000/v1"})
    assert local.provider == "openai" and local.key_present is False


def test_named_provider_with_its_own_url_override() -> None:
    env = {
        "LLM_PROVIDER": "moonshot",
        "LLM_BASE_URL": "https://api.moonshot.ai/v1",
        "MOONSHOT_API_KEY": "k",
    }
    config = resolve_provider(env)
    assert (config.provider, config.base_url, config.key_variable) == (
        "moonshot",
        "https://api.moonshot.ai/v1",
        "MOONSHOT_API_KEY",
    )


def test_custom_provider_needs_a_url_and_urls_are_checked() -> None:
    with pytest.raises(ConfigError) as info:
        resolve_provider({"LLM_PROVIDER": "custom", "LLM_MODEL": "m"})
    assert info.value.setting == "LLM_BASE_URL"
    with pytest.raises(ConfigError) as info:
        resolve_provider({"LLM_BASE_URL": "localhost:8000", "LLM_MODEL": "m"})
    assert info.value.setting == "LLM_BASE_URL"


@pytest.mark.parametrize(
    ("provider", "variable"),
    [
        ("openai", "OPENAI_API_KEY"),
        ("moonshot", "MOONSHOT_API_KEY"),
        ("ark", "ARK_API_KEY"),
        ("openrouter", "OPENROUTER_API_KEY"),
    ],
)
def test_missing_key_names_the_variable(provider: str, variable: str) -> None:
    with pytest.raises(MissingKeyError) as info:
        resolve_provider({"LLM_PROVIDER": provider, variable: "   "})  # blank counts as missing
    assert (info.value.provider, info.value.variable, info.value.setting) == (
        provider,
        variable,
        variable,
    )
    assert variable in str(info.value) and "--offline" in str(info.value)


def test_key_is_never_shown() -> None:
    secret = "sk-very-secret-0123456789"
    config = resolve_provider({"OPENAI_API_KEY": secret})
    shown = [repr(config), str(config), f"{config}", json.dumps(config.to_dict())]
    assert all(secret not in text for text in shown)
    assert config.to_dict() == {
        "provider": "openai",
        "model": "gpt-5.4-mini",
        "base_url": None,
        "key_variable": "OPENAI_API_KEY",
        "key_present": True,
        "fallback_from": None,
        "url_variable": None,
    }


def test_reads_os_environ_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("LLM_PROVIDER", "LLM_MODEL", "LLM_BASE_URL", "OPENAI_BASE_URL", "LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ARK_API_KEY", "ark-key")
    monkeypatch.setenv("LLM_PROVIDER", "ark")
    assert resolve_provider().api_key == "ark-key"


def test_config_built_by_hand() -> None:
    config = ProviderConfig(
        provider="custom",
        model="m",
        base_url="http://127.0.0.1:1/v1",
        api_key="tk-by-hand",
        key_variable=None,
    )
    assert config.key_present
    assert "tk-by-hand" not in repr(config) and "api_key" not in repr(config)


def test_url_classes() -> None:
    assert is_loopback_url("http://127.0.0.1:8080/v1")
    assert is_loopback_url("http://localhost/v1")
    assert is_loopback_url("http://[::1]:9/v1")
    assert not is_loopback_url("https://api.openai.com/v1")
    assert not is_loopback_url("http://127.0.0.1.example.com/v1")
    assert is_local_url("http://10.0.0.5:8000/v1") and is_local_url("http://gpu-box.local:8000/v1")
    assert is_local_url("http://172.20.1.2/v1") and is_local_url("http://[fd00::5]/v1")
    assert not is_local_url("http://203.0.113.7/v1") and not is_local_url("http://8.8.8.8/v1")
    assert not is_loopback_url("http://10.0.0.5/v1")


def test_dotenv_files_never_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "home"
    work = tmp_path / "work"
    home.mkdir()
    work.mkdir()
    (work / ".env").write_text("LLM_MODEL=from-cwd\nMOONSHOT_API_KEY=cwd-key\n")
    (home / ".env").write_text("LLM_MODEL=from-home\nLLM_PROVIDER=moonshot\nARK_API_KEY=home-key\n")
    monkeypatch.setenv("TOOLSMITH_HOME", str(home))
    for name in ("LLM_MODEL", "MOONSHOT_API_KEY", "LLM_PROVIDER", "ARK_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("LLM_PROVIDER", "ark")  # the shell wins over every file

    loaded = load_dotenv_files(work)

    assert loaded == [work / ".env", home / ".env"]
    assert os.environ["LLM_PROVIDER"] == "ark"
    assert os.environ["LLM_MODEL"] == "from-cwd"  # the working directory wins over the home
    assert os.environ["MOONSHOT_API_KEY"] == "cwd-key"
    assert os.environ["ARK_API_KEY"] == "home-key"
    assert load_dotenv_files(tmp_path) == [home / ".env"]


@pytest.mark.parametrize("variable", ["LLM_BASE_URL", "OPENAI_BASE_URL"])
def test_config_remembers_which_variable_set_the_url(variable: str) -> None:
    config = resolve_provider({variable: "http://127.0.0.1:9/v1", "LLM_MODEL": "m"})
    assert config.url_variable == variable
    assert config.to_dict()["url_variable"] == variable
    assert resolve_provider({"OPENAI_API_KEY": "sk-x"}).url_variable is None
