"""Settings: where toolsmith keeps its data and how it behaves.

Settings come from three layers, later ones winning: built-in defaults, the TOML file
``config.toml`` in the toolsmith home (or ``TOOLSMITH_CONFIG``), and ``TOOLSMITH_*``
environment variables. The home directory is ``TOOLSMITH_HOME`` when set, otherwise the
platform's user data directory. Every bad value raises :class:`ConfigError` naming the
setting, so the user knows exactly what to change.
"""

from __future__ import annotations

import difflib
import math
import os
import sys
from collections.abc import Mapping
from contextlib import suppress
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

import platformdirs

from toolsmith.errors import ConfigError
from toolsmith.limits import Limits

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised only on 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

REVIEW_POLICIES = ("auto", "required")
SANDBOX_BACKENDS = ("auto", "bwrap", "process")
SEARCH_BACKENDS = ("ddgs", "searxng", "pypi")


@dataclass(frozen=True)
class ModelSettings:
    """The ``[model]`` table: how long to wait for the model endpoint, and whether to stream.

    Defaults suit slow local and reasoning models: ``timeout_s`` is the SDK's own 600 s per
    request (with streaming, the longest silence between two chunks), and a read timeout is
    not retried (the server is most likely still generating) unless ``retry_timeouts``.
    ``retry_total_s`` bounds how long 429s, 5xx and dropped connections are retried for one
    request, ``max_attempts`` is a backstop on the number of attempts.
    """

    timeout_s: float = 600.0
    retry_total_s: float = 300.0
    max_attempts: int = 10
    stream: bool = True
    retry_timeouts: bool = False


# [model] key -> environment variable that overrides it.
MODEL_ENV = {
    "timeout_s": "TOOLSMITH_MODEL_TIMEOUT_S",
    "retry_total_s": "TOOLSMITH_MODEL_RETRY_TOTAL_S",
    "max_attempts": "TOOLSMITH_MODEL_MAX_ATTEMPTS",
    "stream": "TOOLSMITH_MODEL_STREAM",
    "retry_timeouts": "TOOLSMITH_MODEL_RETRY_TIMEOUTS",
}


@dataclass(frozen=True)
class Settings:
    """Everything configurable about one toolsmith installation."""

    home: Path
    review: str = "auto"
    quarantine_after: int = 3
    dedup_threshold: float = 0.55
    pre_retrieval: bool = True
    # sandbox
    sandbox_backend: str = "auto"
    bwrap_path: str = ""  # auto | system | bundled | a path (see sandbox.bwrap_binary)
    network: bool = True
    limits: Limits = field(default_factory=Limits)
    warm_workers: int = 4  # warm tool workers kept per process (0: every call cold)
    warm_idle_s: float = 300.0  # a worker idle this long is stopped
    # mcp: the bearer token HTTP clients must send (see toolsmith.mcp.auth)
    mcp_token: str = field(default="", repr=False)
    # packages
    index_url: str | None = None
    allow_packages: tuple[str, ...] = ()
    only_binary: bool = True
    # search
    search_backends: tuple[str, ...] = SEARCH_BACKENDS
    searxng_url: str | None = None
    # budgets per task (0 means unlimited for tokens and wall time)
    max_steps: int = 20
    max_tokens: int = 0
    max_wall_s: float = 0.0
    max_nudges: int = 2
    max_calls_per_turn: int = 10  # tool calls run per model reply; the rest are refused
    # the tool library: None is the SQLite file in the home; else a library URL
    library_url: str | None = None
    # a library of at most this many tools is listed whole in a task's first request
    catalogue_max_tools: int = 12
    catalogue_max_chars: int = 3000
    # least share of a task's intent words a stored tool must cover to be found (0: BM25 alone)
    search_floor: float = 0.3
    # model price table: model name -> (input, output) in currency units per million tokens
    prices: Mapping[str, tuple[float, float]] = field(default_factory=dict)
    # the model endpoint: timeouts, retries, streaming
    model: ModelSettings = field(default_factory=ModelSettings)

    @property
    def db_path(self) -> Path:
        return self.home / "library.db"

    @property
    def envs_dir(self) -> Path:
        return self.home / "envs"

    @property
    def cache_dir(self) -> Path:
        return self.home / "cache"

    @property
    def trajectories_dir(self) -> Path:
        return self.home / "trajectories"

    @classmethod
    def load(cls, home: Path | None = None, env: Mapping[str, str] | None = None) -> Settings:
        """Resolve settings from the home directory's config file and the environment."""
        env = os.environ if env is None else env
        resolved_home = Path(home) if home else default_home(env)
        config_file = Path(env["TOOLSMITH_CONFIG"]) if env.get("TOOLSMITH_CONFIG") else None
        path = config_file or resolved_home / "config.toml"
        data = read_config_file(path, required=bool(config_file))
        check_keys(data, path)
        return _from_layers(resolved_home, data, env)


# The one set of defaults: the dataclasses' own. The config reader falls back to these.
DEFAULTS = Settings(home=Path())


def default_home(env: Mapping[str, str]) -> Path:
    """``TOOLSMITH_HOME``, or the platform's per-user data directory."""
    if env.get("TOOLSMITH_HOME"):
        return Path(env["TOOLSMITH_HOME"]).expanduser()
    return Path(platformdirs.user_data_dir("toolsmith", appauthor=False))


def read_config_file(path: Path, *, required: bool = False) -> dict[str, Any]:
    if not path.exists():
        if required:
            raise ConfigError(f"Config file {path} does not exist.", setting="TOOLSMITH_CONFIG")
        return {}
    try:
        with path.open("rb") as fh:
            data: dict[str, Any] = tomllib.load(fh)
            return data
    except (tomllib.TOMLDecodeError, OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"Cannot read config file {path}: {exc}", setting=str(path)) from exc


# Every key config.toml may hold, table by table ("" is the top level). A table mapped to
# None takes any key (model names under [prices]). Adding a setting? Add its key here;
# unknown keys are refused with the nearest known one, so a typo is never silently ignored.
CONFIG_KEYS: dict[str, frozenset[str] | None] = {
    "": frozenset({"review", "quarantine_after", "dedup_threshold", "pre_retrieval"}),
    "sandbox": frozenset(
        {"backend", "bwrap_path", "network", "warm_workers", "warm_idle_s", *(f.name for f in fields(Limits))}
    ),
    "packages": frozenset({"index_url", "allow", "only_binary"}),
    "search": frozenset({"backends", "searxng_url"}),
    "budget": frozenset({"max_steps", "max_tokens", "max_wall_s", "max_nudges", "max_calls_per_turn"}),
    "mcp": frozenset({"token"}),
    "library": frozenset({"url", "catalogue_max_tools", "catalogue_max_chars", "search_floor"}),
    "model": frozenset(MODEL_ENV),
    "prices": None,
}


# Every TOOLSMITH_* variable the program, its tests or its scripts read. `toolsmith doctor`
# names any other as a problem, with the nearest known one: a typo'd variable is otherwise
# ignored without a word. Reading a new one? Add it here (a test scans the sources).
ENVIRONMENT_VARIABLES = frozenset(
    {
        "TOOLSMITH_HOME", "TOOLSMITH_CONFIG", "TOOLSMITH_REVIEW", "TOOLSMITH_PRE_RETRIEVAL",
        "TOOLSMITH_SANDBOX", "TOOLSMITH_NETWORK", "TOOLSMITH_BWRAP_PATH", "TOOLSMITH_INDEX_URL",
        "TOOLSMITH_SEARCH_BACKENDS", "TOOLSMITH_LIBRARY_URL", "TOOLSMITH_MCP_TOKEN", "TOOLSMITH_UI_TOKEN",
        "TOOLSMITH_ALLOW_REAL_MODEL", "TOOLSMITH_BAN_REAL_MODEL", *MODEL_ENV.values(),
        # the test suite's own
        "TOOLSMITH_TEST_POSTGRES_URL", "TOOLSMITH_TEST_POSTGRES_PORT", "TOOLSMITH_REQUIRE_POSTGRES",
        "TOOLSMITH_REQUIRE_BROWSER", "TOOLSMITH_CHROMIUM", "TOOLSMITH_TEST_ARTIFACTS", "TOOLSMITH_TEST_SECRET",
    }
)  # fmt: skip


def unknown_environment(env: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """``TOOLSMITH_*`` variables in ``env`` that nothing reads, each with the nearest known name."""
    prefix = "TOOLSMITH_"
    known = {name.removeprefix(prefix): name for name in ENVIRONMENT_VARIABLES}
    unknown = sorted(name for name in env if name.startswith(prefix) and name not in ENVIRONMENT_VARIABLES)
    # Compared without the shared prefix, which would make every name look close.
    nearest = (difflib.get_close_matches(name.removeprefix(prefix), known, n=1) for name in unknown)
    return [(name, known[near[0]] if near else None) for name, near in zip(unknown, nearest, strict=True)]


def _from_layers(home: Path, data: dict[str, Any], env: Mapping[str, str]) -> Settings:
    sandbox = _table(data, "sandbox")
    packages = _table(data, "packages")
    search = _table(data, "search")
    budget = _table(data, "budget")
    library = _table(data, "library")
    try:
        limits = Limits.from_mapping(sandbox)
    except ValueError as exc:
        raise ConfigError(str(exc), setting="sandbox") from exc
    d = DEFAULTS
    values: dict[str, Any] = {
        "review": _choice(env.get("TOOLSMITH_REVIEW", data.get("review", d.review)), REVIEW_POLICIES, "review"),
        "quarantine_after": _int(data.get("quarantine_after", d.quarantine_after), "quarantine_after", minimum=1),
        "dedup_threshold": _float(data.get("dedup_threshold", d.dedup_threshold), "dedup_threshold", maximum=1),
        "pre_retrieval": _bool(
            env.get("TOOLSMITH_PRE_RETRIEVAL", data.get("pre_retrieval", d.pre_retrieval)), "pre_retrieval"
        ),
        "sandbox_backend": _choice(
            env.get("TOOLSMITH_SANDBOX", sandbox.get("backend", d.sandbox_backend)), SANDBOX_BACKENDS, "sandbox.backend"
        ),
        "bwrap_path": str(env.get("TOOLSMITH_BWRAP_PATH") or sandbox.get("bwrap_path", d.bwrap_path)).strip(),
        "mcp_token": str(env.get("TOOLSMITH_MCP_TOKEN") or _table(data, "mcp").get("token", d.mcp_token)),
        "network": _bool(env.get("TOOLSMITH_NETWORK", sandbox.get("network", d.network)), "sandbox.network"),
        "limits": limits,
        "warm_workers": _int(sandbox.get("warm_workers", d.warm_workers), "sandbox.warm_workers", minimum=0),
        "warm_idle_s": _float(sandbox.get("warm_idle_s", d.warm_idle_s), "sandbox.warm_idle_s"),
        "index_url": env.get("TOOLSMITH_INDEX_URL") or packages.get("index_url") or d.index_url,
        "allow_packages": tuple(_str_list(packages.get("allow", list(d.allow_packages)), "packages.allow")),
        "only_binary": _bool(packages.get("only_binary", d.only_binary), "packages.only_binary"),
        "search_backends": _backends(env.get("TOOLSMITH_SEARCH_BACKENDS"), search.get("backends")),
        "searxng_url": env.get("SEARXNG_URL") or search.get("searxng_url") or d.searxng_url,
        "max_steps": _int(budget.get("max_steps", d.max_steps), "budget.max_steps", minimum=1),
        "max_tokens": _int(budget.get("max_tokens", d.max_tokens), "budget.max_tokens", minimum=0),
        "max_wall_s": _float(budget.get("max_wall_s", d.max_wall_s), "budget.max_wall_s"),
        "max_nudges": _int(budget.get("max_nudges", d.max_nudges), "budget.max_nudges", minimum=0),
        "max_calls_per_turn": _int(
            budget.get("max_calls_per_turn", d.max_calls_per_turn), "budget.max_calls_per_turn", minimum=1
        ),
        "prices": _prices(_table(data, "prices")),
        "library_url": _library_url(env, library),
        "catalogue_max_tools": _int(
            library.get("catalogue_max_tools", d.catalogue_max_tools), "library.catalogue_max_tools", minimum=0
        ),
        "search_floor": _float(library.get("search_floor", d.search_floor), "library.search_floor", maximum=1),
        "catalogue_max_chars": _int(
            library.get("catalogue_max_chars", d.catalogue_max_chars), "library.catalogue_max_chars", minimum=200
        ),
        "model": _model_settings(_table(data, "model"), env),
    }
    return Settings(home=home, **values)


def check_keys(data: Mapping[str, Any], path: Path | str = "config.toml") -> None:
    """Refuse keys that are not settings, naming the nearest valid key for each."""
    top = CONFIG_KEYS[""] or frozenset()
    unknown: list[tuple[str, str, frozenset[str]]] = []  # (dotted name, key, keys it could have meant)
    for key, value in data.items():
        if key in CONFIG_KEYS and key:
            known = CONFIG_KEYS[key]
            if known is not None and isinstance(value, dict):
                unknown += [(f"{key}.{k}", k, known) for k in value if k not in known]
        elif key not in top:
            unknown.append((key, key, top | {k for k in CONFIG_KEYS if k}))
    if unknown:
        problems = "; ".join(_unknown(dotted, key, known) for dotted, key, known in unknown)
        raise ConfigError(f"{path}: {problems}.", setting=unknown[0][0][:100])


def _unknown(dotted: str, key: str, known: frozenset[str]) -> str:
    shown = dotted if len(dotted) <= 100 else dotted[:99] + "…"
    near = difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
    if not near:  # a known key in the wrong table: `backend` at the top instead of [sandbox]
        near = [f"{table}.{key}" for table, keys in CONFIG_KEYS.items() if table and keys and key in keys][:1]
        if near:
            return f"unknown setting '{shown}' (did you mean '{near[0]}'?)"
        return f"unknown setting '{shown}'"
    prefix = dotted.rsplit(".", 1)[0] + "." if "." in dotted else ""
    return f"unknown setting '{shown}' (did you mean '{prefix}{near[0]}'?)"


def _library_url(env: Mapping[str, str], library: Mapping[str, Any]) -> str | None:
    value = env.get("TOOLSMITH_LIBRARY_URL") or library.get("url") or None
    if value is not None and not isinstance(value, str):
        raise ConfigError("library.url in config.toml must be a string (a library URL).", setting="library.url")
    return value


def _table(data: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = data.get(key, {})
    if not isinstance(value, dict):
        raise ConfigError(f"[{key}] in config.toml must be a table.", setting=key)
    return value


def _choice(value: Any, allowed: tuple[str, ...], setting: str) -> str:
    text = str(value).strip().lower()
    if text not in allowed:
        raise ConfigError(f"{setting} must be one of {', '.join(allowed)}; got {value!r}.", setting=setting)
    return text


def _bool(value: Any, setting: str) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in {"1", "true", "yes", "on"}:
        return True
    if text in {"0", "false", "no", "off"}:
        return False
    raise ConfigError(f"{setting} must be true or false; got {value!r}.", setting=setting)


def _int(value: Any, setting: str, *, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"{setting} must be an integer >= {minimum}; got {value!r}.", setting=setting)
    return value


def _float(value: Any, setting: str, *, maximum: float | None = None) -> float:
    """A finite number >= 0, from the file or (as text) from the environment.

    TOML and float() both accept nan and inf; neither is a usable setting."""
    if isinstance(value, str):
        with suppress(ValueError):  # text that is no number is refused below, as given
            value = float(value.strip())
    ok = not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value) and value >= 0
    if not ok or (maximum is not None and value > maximum):
        limit = f" and <= {maximum:g}" if maximum is not None else ""
        raise ConfigError(f"{setting} must be a finite number >= 0{limit}; got {value!r}.", setting=setting)
    return float(value)


def _str_list(value: Any, setting: str) -> list[str]:
    if isinstance(value, str):
        value = [part for part in value.replace(",", " ").split() if part]
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{setting} must be a list of strings; got {value!r}.", setting=setting)
    return list(value)


def _backends(from_env: str | None, from_file: Any) -> tuple[str, ...]:
    raw = from_env if from_env is not None else from_file
    if raw is None:
        return SEARCH_BACKENDS
    names = _str_list(raw, "search.backends")
    unknown = [n for n in names if n not in SEARCH_BACKENDS]
    if unknown or not names:
        raise ConfigError(
            f"search.backends must list some of {', '.join(SEARCH_BACKENDS)}; got {raw!r}.",
            setting="search.backends",
        )
    return tuple(names)


def _prices(table: Mapping[str, Any]) -> dict[str, tuple[float, float]]:
    prices: dict[str, tuple[float, float]] = {}
    for model, entry in table.items():
        if not isinstance(entry, dict) or set(entry) - {"input", "output"}:
            raise ConfigError(f"prices.{model} must be a table with input and output.", setting="prices")
        prices[model] = (
            _float(entry.get("input", 0), f"prices.{model}.input"),
            _float(entry.get("output", 0), f"prices.{model}.output"),
        )
    return prices


def _model_settings(table: Mapping[str, Any], env: Mapping[str, str]) -> ModelSettings:
    """The ``[model]`` table, each key overridden by its ``TOOLSMITH_MODEL_*`` variable.

    A bad value's error names where it came from: the variable when it was set, else the key.
    """
    raw: dict[str, tuple[Any, str]] = {}
    for key, variable in MODEL_ENV.items():
        if env.get(variable, "").strip():
            raw[key] = (env[variable], variable)
        elif key in table:
            raw[key] = (table[key], f"model.{key}")
    defaults = DEFAULTS.model

    def number(key: str, *, minimum: float, whole: bool = False) -> float:
        if key not in raw:
            return float(getattr(defaults, key))
        value, name = raw[key]
        try:
            parsed = math.nan if isinstance(value, bool) else float(value)
        except (TypeError, ValueError):
            parsed = math.nan
        if not math.isfinite(parsed) or parsed < minimum or (whole and parsed != int(parsed)):
            kind = "a whole number" if whole else "a finite number of seconds"
            raise ConfigError(f"{name} must be {kind} >= {minimum:g}; got {value!r}.", setting=name)
        return parsed

    def flag(key: str) -> bool:
        return bool(getattr(defaults, key)) if key not in raw else _bool(raw[key][0], raw[key][1])

    return ModelSettings(
        timeout_s=number("timeout_s", minimum=0.001),
        retry_total_s=number("retry_total_s", minimum=0),
        max_attempts=int(number("max_attempts", minimum=1, whole=True)),
        stream=flag("stream"),
        retry_timeouts=flag("retry_timeouts"),
    )
