"""``.env`` files: which values toolsmith takes from them, and which it ignores and why.

Two files are read: ``.env`` in the working directory, then ``.env`` in the toolsmith
home. Neither overrides a variable already in the environment, and the working
directory's file wins over the home's. The home's file is the user's own and may set
anything. The working directory's file may belong to a cloned repository, so it is
trusted only with the model settings (:data:`MODEL_VARIABLES`), and even then it may
not point a key it did not set itself at another server: a base URL from it is ignored
when the key that would be sent there comes from elsewhere. Everything else it sets
(the sandbox backend, network, config file, home, package index, proxies, ...) is
ignored, and each ignored value is reported with the reason.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from toolsmith.config.providers import PROVIDERS, resolve_provider
from toolsmith.errors import ConfigError, ToolsmithError

URL_VARIABLES = ("LLM_BASE_URL", "OPENAI_BASE_URL")
# What a .env in the working directory may set: the model, its endpoint and its key.
# Model client settings (timeouts, retries) are under TOOLSMITH_MODEL_; they cannot
# weaken isolation or send a key anywhere.
MODEL_VARIABLES = frozenset(
    {"LLM_PROVIDER", "LLM_MODEL", "LLM_API_KEY", *URL_VARIABLES}
    | {spec.key_variable for spec in PROVIDERS.values() if spec.key_variable}
)
MODEL_PREFIXES = ("TOOLSMITH_MODEL_",)


@dataclass
class DotenvLoad:
    """What the files hold that will be set, what was ignored and why, and the files read."""

    values: dict[str, str] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)


def load_dotenv_files(cwd: Path | None = None, *, notify: Callable[[str], None] | None = None) -> list[Path]:
    """Read the ``.env`` files into ``os.environ`` under the rules above; return the files read.

    ``notify`` receives one line per ignored value."""
    load = read_dotenv_files(cwd, os.environ)
    os.environ.update(load.values)
    for notice in load.notices:
        if notify is not None:
            notify(notice)
    return load.files


def read_dotenv_files(cwd: Path | None, env: Mapping[str, str]) -> DotenvLoad:
    """The values to set from the ``.env`` files, without touching the environment."""
    from toolsmith.config import default_home

    load = DotenvLoad()
    local_path = Path(cwd or Path.cwd()) / ".env"
    home_path = default_home(env) / ".env"
    local = _read(local_path, load)
    home = _read(home_path, load) if not _same(home_path, local_path) else {}
    for name, value in home.items():
        if name not in env:
            load.values[name] = value
    trusted = _from_working_directory(local, env, local_path, load)
    load.values.update(trusted)
    _check_urls(trusted, {**load.values, **env}, local_path, load)
    return load


def _from_working_directory(
    local: dict[str, str], env: Mapping[str, str], path: Path, load: DotenvLoad
) -> dict[str, str]:
    taken: dict[str, str] = {}
    for name, value in local.items():
        if name in env:
            if env[name] != value:
                load.notices.append(f"{path}: {name} ignored: it is already set in the environment, which wins.")
        elif name in MODEL_VARIABLES or name.startswith(MODEL_PREFIXES):
            taken[name] = value
        else:
            load.notices.append(
                f"{path}: {name} ignored: a .env in the working directory may only set the model "
                f"(LLM_PROVIDER, LLM_MODEL, LLM_BASE_URL, API keys); set {name} in your shell, "
                f"your config file or {Path('$TOOLSMITH_HOME') / '.env'}."
            )
    return taken


def _check_urls(trusted: dict[str, str], merged: Mapping[str, str], path: Path, load: DotenvLoad) -> None:
    """Drop a base URL from the working directory's file when it would receive a key it did not set."""
    urls = [name for name in URL_VARIABLES if name in trusted]
    if not urls:
        return
    try:
        config = resolve_provider(merged)
    except ToolsmithError:
        return  # no key would be sent anywhere: the run stops with its own clear error
    variable = config.key_variable
    if variable is None or variable in trusted:
        return
    for name in urls:
        del load.values[name]
        load.notices.append(
            f"{path}: {name} ignored: a .env in the working directory may not send a key it does not "
            f"set ({variable}, from your environment or home) to another server."
        )


def _read(path: Path, load: DotenvLoad) -> dict[str, str]:
    from dotenv import dotenv_values

    if not path.is_file():
        return {}
    try:
        # No ${VAR} expansion: LLM_API_KEY=${OPENAI_API_KEY} would pass the user's key off
        # as one the file set itself.
        raw = dotenv_values(path, interpolate=False)
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read {path}: {exc}", setting=str(path)) from exc
    load.files.append(path)
    return {name: value for name, value in raw.items() if value is not None}


def _same(a: Path, b: Path) -> bool:
    try:
        return a.is_file() and b.is_file() and a.samefile(b)
    except OSError:
        return False
