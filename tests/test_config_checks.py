"""Settings: one set of defaults, unknown keys named with the nearest valid one, finite numbers."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from toolsmith.cli import tools
from toolsmith.cli.common import EXIT_CONFIG
from toolsmith.config import CONFIG_KEYS, DEFAULTS, Settings
from toolsmith.config import settings as config
from toolsmith.errors import ConfigError


def _load(tmp_path: Path, toml: str) -> Settings:
    (tmp_path / "config.toml").write_text(toml, encoding="utf-8")
    return Settings.load(home=tmp_path, env={})


def test_without_a_config_the_settings_are_the_one_set_of_defaults(tmp_path: Path) -> None:
    assert Settings.load(home=tmp_path, env={}) == replace(DEFAULTS, home=tmp_path)


@pytest.mark.parametrize(
    ("toml", "named", "suggested"),
    [
        ('reveiw = "required"\n', "'reveiw'", "'review'"),
        ("[sandbox]\ntimout_s = 5\n", "'sandbox.timout_s'", "'sandbox.timeout_s'"),
        ("[budget]\nmax_step = 5\n", "'budget.max_step'", "'budget.max_steps'"),
        ('backend = "process"\n', "'backend'", "'sandbox.backend'"),  # a key in the wrong table
        ("[sandbx]\nnetwork = false\n", "'sandbx'", "'sandbox'"),
    ],
)
def test_an_unknown_key_is_refused_with_the_nearest_valid_one(
    tmp_path: Path, toml: str, named: str, suggested: str
) -> None:
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, toml)
    message = str(raised.value)
    assert f"unknown setting {named} (did you mean {suggested}?)" in message
    assert str(tmp_path / "config.toml") in message


def test_a_long_unknown_key_is_shortened_in_the_message(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, "x" * 5000 + " = 1\n")
    assert len(str(raised.value)) < 300


@pytest.mark.parametrize(
    "toml",
    [
        "[budget]\nmax_wall_s = nan\n",
        "[budget]\nmax_wall_s = inf\n",
        "[sandbox]\ntimeout_s = nan\n",
        "[sandbox]\ntimeout_s = inf\n",
        "[sandbox]\nmemory_mb = inf\n",
        "[sandbox]\ncpus = -inf\n",
        "dedup_threshold = nan\n",
        "[prices.some-model]\ninput = inf\n",
    ],
)
def test_numbers_must_be_finite(tmp_path: Path, toml: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _load(tmp_path, toml)
    assert "finite" in str(raised.value)


def test_a_typo_in_the_config_is_a_one_line_cli_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "config.toml").write_text('reveiw = "required"\n', encoding="utf-8")
    monkeypatch.setenv("TOOLSMITH_HOME", str(tmp_path))
    result = CliRunner().invoke(tools.app, ["list"])
    assert result.exit_code == EXIT_CONFIG
    assert result.stderr.count("\n") == 1 and "did you mean 'review'?" in result.stderr


def test_every_setting_the_reader_names_is_a_known_key() -> None:
    """A setting added to the reader but not to CONFIG_KEYS would be refused as unknown."""
    source = Path(config.__file__).read_text(encoding="utf-8")
    tables = "|".join(t for t in CONFIG_KEYS if t)
    named = set(re.findall(rf'(?:, |setting=)"({tables})\.(\w+)"', source))  # as setting names
    assert named, "the reader names its settings as table.key"
    for table, key in named:
        known = CONFIG_KEYS[table]
        assert known is None or key in known, f"{table}.{key} is read but not in CONFIG_KEYS"
    for key in re.findall(r'\bdata\.get\("(\w+)"', source):
        assert key in (CONFIG_KEYS[""] or ()), f"{key} is read but not in CONFIG_KEYS"


def test_the_library_table_keys_load(tmp_path: Path) -> None:
    settings = _load(tmp_path, "[library]\ncatalogue_max_tools = 3\nsearch_floor = 0.5\ncatalogue_max_chars = 400\n")
    assert (settings.catalogue_max_tools, settings.search_floor, settings.catalogue_max_chars) == (3, 0.5, 400)


def test_an_unread_toolsmith_variable_is_named_with_the_nearest_known_one() -> None:
    from toolsmith.cli.doctor import check_environment

    env = {"TOOLSMITH_MODEL_TIMEOUT": "900", "TOOLSMITH_HOME": "/x", "TOOLSMITH_ZZZ": "1", "PATH": "/bin"}
    assert config.unknown_environment(env) == [
        ("TOOLSMITH_MODEL_TIMEOUT", "TOOLSMITH_MODEL_TIMEOUT_S"),
        ("TOOLSMITH_ZZZ", None),
    ]
    rows = check_environment(env)
    assert [row.ok for row in rows] == [False, False]
    assert "did you mean TOOLSMITH_MODEL_TIMEOUT_S?" in rows[0].detail
    assert "Configuration" in rows[1].detail
    assert check_environment({"TOOLSMITH_HOME": "/x", "TOOLSMITH_REQUIRE_POSTGRES": "1"}) == []


def test_every_toolsmith_variable_the_project_reads_is_known() -> None:
    """A variable read somewhere but missing from the list would be reported as a typo."""
    root = Path(config.__file__).resolve().parents[3]
    files = [
        *(root / "src").rglob("*.py"),
        *(root / "tests").rglob("*.py"),
        *(root / "bench").rglob("*.py"),
        *(root / "scripts").iterdir(),
        root / ".ci" / "run",
    ]
    named: set[str] = set()
    for path in files:
        if path.is_file() and path.name != Path(__file__).name:  # this file names typos on purpose
            named |= set(re.findall(r"\bTOOLSMITH_[A-Z0-9_]*[A-Z0-9]\b", path.read_text(encoding="utf-8")))
    assert {"TOOLSMITH_HOME", "TOOLSMITH_MODEL_TIMEOUT_S", "TOOLSMITH_TEST_POSTGRES_URL"} <= named
    assert named <= config.ENVIRONMENT_VARIABLES, named - config.ENVIRONMENT_VARIABLES
