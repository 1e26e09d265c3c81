"""The settings' declarations drive the loader, the environment and the README's reference."""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from toolsmith.config import DEFAULTS, Settings
from toolsmith.config.__main__ import main
from toolsmith.config.kinds import Choice, Flag, Kind, Names, Number, Text, Whole
from toolsmith.config.reference import readme_section, readme_tables, toml_value
from toolsmith.config.settings import CONFIG_KEYS, DECLARED, Declared, check_keys
from toolsmith.errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

README = Path(__file__).resolve().parents[1] / "README.md"


def _value(settings: Settings, declared: Declared) -> Any:
    value: Any = settings
    for attr in declared.path:
        value = getattr(value, attr)
    return value


def _scalars() -> list[Declared]:
    return [d for d in DECLARED if d.spec.key != "prices"]


def test_the_readme_holds_the_generated_settings_tables() -> None:
    section = readme_section(README.read_text(encoding="utf-8"))
    assert section is not None, "the README lost the settings markers"
    assert section == readme_tables(), "README out of date: paste `python -m toolsmith.config --readme` between markers"


def test_the_tables_list_every_setting_and_variable(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--readme"]) == 0
    printed = capsys.readouterr().out
    for declared in DECLARED:
        assert f"| `{declared.spec.key}" in printed
        assert declared.spec.env is None or f"`{declared.spec.env}`" in printed
    assert "`TOOLSMITH_HOME`" in printed and "`TOOLSMITH_CONFIG`" in printed
    assert main([]) == 2


def _toml_blocks(text: str) -> list[str]:
    return re.findall(r"```toml\n(.*?)```", text, flags=re.S)


def test_every_toml_example_in_the_readme_loads(tmp_path: Path) -> None:
    blocks = _toml_blocks(README.read_text(encoding="utf-8"))
    assert len(blocks) >= 2
    for block in blocks:
        (tmp_path / "config.toml").write_text(block, encoding="utf-8")
        Settings.load(home=tmp_path, env={})  # parses, every key known, every value valid


def test_the_configuration_example_shows_the_defaults(tmp_path: Path) -> None:
    text = README.read_text(encoding="utf-8")
    example = _toml_blocks(text[text.index("## Configuration") :])[0]
    data = tomllib.loads(example)
    assert {"sandbox", "library", "model"} <= set(data)
    (tmp_path / "config.toml").write_text(example, encoding="utf-8")
    assert Settings.load(home=tmp_path, env={}) == replace(DEFAULTS, home=tmp_path)


def test_the_readme_names_only_settings_that_exist() -> None:
    tables = "|".join(t for t in CONFIG_KEYS if t)
    named = set(re.findall(rf"`((?:{tables})\.\w+)", README.read_text(encoding="utf-8"))) - {"library.db"}  # a file
    assert "sandbox.network" in named
    for key in named:
        table, _, name = key.partition(".")
        known = CONFIG_KEYS[table]
        assert known is None or name in known, f"the README names {key}, which is not a setting"


def test_every_declared_key_loads_its_default_from_a_file(tmp_path: Path) -> None:
    tables: dict[str, list[str]] = {}
    for declared in _scalars():
        tables.setdefault(declared.spec.table, []).append(f"{declared.spec.name} = {toml_value(declared.default)}")
    text = "\n".join(tables.pop(""))
    text += "".join(f"\n[{table}]\n" + "\n".join(lines) for table, lines in tables.items())
    data = tomllib.loads(text)
    check_keys(data)
    (tmp_path / "config.toml").write_text(text, encoding="utf-8")
    assert Settings.load(home=tmp_path, env={}) == replace(DEFAULTS, home=tmp_path)


def _other(kind: Kind, default: Any) -> tuple[str, Any]:
    """Environment text for a valid value other than ``default``, and that value."""
    if isinstance(kind, Choice):
        choice = next(c for c in reversed(kind.choices) if c != default)
        return f" {choice.upper()} ", choice
    if isinstance(kind, Flag):
        return ("no", False) if default else ("yes", True)
    if isinstance(kind, Whole):
        return str(default + 1), default + 1
    if isinstance(kind, Number):
        value = 0.5 if default != 0.5 else 0.25
        return f"{value}", value
    if isinstance(kind, Names):
        return "searxng, pypi", ("searxng", "pypi")
    assert isinstance(kind, Text), kind
    return "/opt/x", "/opt/x"


@pytest.mark.parametrize("declared", [d for d in DECLARED if d.spec.env], ids=lambda d: d.spec.env)
def test_each_variable_overrides_its_setting_and_names_itself_when_bad(tmp_path: Path, declared: Declared) -> None:
    assert declared.spec.env is not None
    text, expected = _other(declared.spec.kind, declared.default)
    loaded = Settings.load(home=tmp_path, env={declared.spec.env: text})
    assert _value(loaded, declared) == expected != declared.default
    assert _value(Settings.load(home=tmp_path, env={declared.spec.env: "  "}), declared) == declared.default
    if not isinstance(declared.spec.kind, Text):  # any text is a valid text
        with pytest.raises(ConfigError) as bad:
            Settings.load(home=tmp_path, env={declared.spec.env: "nan"})
        assert bad.value.setting == declared.spec.env and declared.spec.env in str(bad.value)


@pytest.mark.parametrize("declared", _scalars(), ids=lambda d: d.spec.key)
def test_a_bad_value_in_the_file_names_its_key(tmp_path: Path, declared: Declared) -> None:
    table, name = declared.spec.table, declared.spec.name
    bad = "[1]" if isinstance(declared.spec.kind, Names) else "{}"  # an inline table is no scalar
    (tmp_path / "config.toml").write_text(f"[{table}]\n{name} = {bad}\n" if table else f"{name} = {bad}\n")
    with pytest.raises(ConfigError) as raised:
        Settings.load(home=tmp_path, env={})
    assert raised.value.setting == declared.spec.key and declared.spec.key in str(raised.value)


def test_a_table_that_is_no_table_is_refused(tmp_path: Path) -> None:
    (tmp_path / "config.toml").write_text('sandbox = "bwrap"\n')
    with pytest.raises(ConfigError) as raised:
        Settings.load(home=tmp_path, env={})
    assert raised.value.setting == "sandbox" and "must be a table" in str(raised.value)


def test_a_working_directory_env_file_may_set_the_model_table_and_no_other_setting() -> None:
    """envfiles trusts a cloned repository's .env with TOOLSMITH_MODEL_* only: exactly [model]'s variables."""
    from toolsmith.config.envfiles import MODEL_PREFIXES, MODEL_VARIABLES

    for declared in DECLARED:
        env = declared.spec.env
        if env is not None:
            trusted = env in MODEL_VARIABLES or env.startswith(MODEL_PREFIXES)
            assert trusted == (declared.spec.table == "model"), env
