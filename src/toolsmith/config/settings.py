"""Settings: where toolsmith keeps its data and how it behaves, each setting declared once.

Settings come from three layers, later ones winning: built-in defaults, the TOML file
``config.toml`` in the toolsmith home (or ``TOOLSMITH_CONFIG``), and environment
variables (``.env`` files reach the environment first, under the rules of
:mod:`toolsmith.config.envfiles`). The home directory is ``TOOLSMITH_HOME`` when set,
otherwise the platform's user data directory.

Each setting is one field of :class:`Settings` (or of its ``[model]`` and ``[sandbox]``
limit tables) declared with :func:`~toolsmith.config.kinds.setting`: the attribute name,
type and default, and beside them the key in ``config.toml``, the kind of value (bounds,
choices), one line of help and the environment variable. Everything else is derived from
those declarations: the file's known keys (:data:`CONFIG_KEYS`; an unknown key is refused
with the nearest valid one), the environment overrides, the variables ``toolsmith doctor``
knows (:data:`ENVIRONMENT_VARIABLES`) and the README's settings table
(``python -m toolsmith.config --readme``). Every bad value raises :class:`ConfigError`
naming where it came from: the variable when one was set, else the dotted key.

Why not pydantic-settings, which layers defaults, a TOML file and the environment: its
sources are merged into one mapping before validation, so an error can no longer say
whether ``TOOLSMITH_MODEL_TIMEOUT_S`` or ``model.timeout_s`` was bad; a nested table's
field takes its variable from the nesting (``MODEL__TIMEOUT_S``), while ours are named
freely (``TOOLSMITH_SANDBOX`` sets ``sandbox.backend``, ``SEARXNG_URL`` sets
``search.searxng_url``); it reads ``os.environ`` and its own ``.env`` handling, where we
load from an injected mapping after the hostile-``.env`` rules; and the TOML path is
chosen at load time from that same mapping. Each is possible with custom sources, which
would leave little of the library in use, so the small declaration vocabulary in
:mod:`toolsmith.config.kinds` does the job.
"""

from __future__ import annotations

import difflib
import os
import sys
from collections.abc import Iterator, Mapping
from dataclasses import MISSING, Field, dataclass, fields
from pathlib import Path
from typing import Any

import platformdirs

from toolsmith.config.home import home_problem
from toolsmith.config.kinds import (
    GROUP,
    HELP,
    SPEC,
    Choice,
    Flag,
    Names,
    Number,
    Prices,
    Spec,
    Text,
    Whole,
    group,
    setting,
)
from toolsmith.errors import ConfigError, TaskTooLongError
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

    # fmt: off
    timeout_s: float = setting(
        600.0, "model.timeout_s", Number(minimum=0.001),
        "seconds per request; when streaming, the longest silence between chunks",
        env="TOOLSMITH_MODEL_TIMEOUT_S",
    )
    retry_total_s: float = setting(
        300.0, "model.retry_total_s", Number(),
        "seconds to retry 429s, 5xx and dropped connections for one request",
        env="TOOLSMITH_MODEL_RETRY_TOTAL_S",
    )
    max_attempts: int = setting(
        10, "model.max_attempts", Whole(1), "backstop on attempts within that time",
        env="TOOLSMITH_MODEL_MAX_ATTEMPTS",
    )
    stream: bool = setting(
        True, "model.stream", Flag(), "stream answers (progress in the CLI); falls back when the server cannot",
        env="TOOLSMITH_MODEL_STREAM",
    )
    retry_timeouts: bool = setting(
        False, "model.retry_timeouts", Flag(),
        "send a request that got no answer in time again (off: no double generation)",
        env="TOOLSMITH_MODEL_RETRY_TIMEOUTS",
    )
    # fmt: on


@dataclass(frozen=True)
class Settings:
    """Everything configurable about one toolsmith installation."""

    home: Path
    # fmt: off
    review: str = setting(
        "auto", "review", Choice(REVIEW_POLICIES),
        "`required`: a new tool waits for `toolsmith tools review` before it serves",
        env="TOOLSMITH_REVIEW",
    )
    quarantine_after: int = setting(
        3, "quarantine_after", Whole(1), "consecutive failures before a tool is quarantined"
    )
    rollback: bool = setting(
        True, "rollback", Flag(),
        "serve the parent again when the served version is quarantined failing its own tests and the parent passes",
        env="TOOLSMITH_ROLLBACK",
    )
    dedup_threshold: float = setting(
        0.55, "dedup_threshold", Number(maximum=1),
        "similarity at which a new tool is reported as a likely duplicate of an active one",
    )
    pre_retrieval: bool = setting(
        True, "pre_retrieval", Flag(), "search the library for the task before the first model request",
        env="TOOLSMITH_PRE_RETRIEVAL",
    )
    sandbox_backend: str = setting(
        "auto", "sandbox.backend", Choice(SANDBOX_BACKENDS),
        "where model code runs: `auto` is bwrap where it works, else `process` (no isolation, with a warning)",
        env="TOOLSMITH_SANDBOX",
    )
    bwrap_path: str = setting(
        "", "sandbox.bwrap_path", Text("empty, `auto`, `system`, `bundled` or a path", strip=True),
        "which bwrap runs: empty or `auto` tries the system's, then the bundled one",
        env="TOOLSMITH_BWRAP_PATH",
    )
    network: bool = setting(
        True, "sandbox.network", Flag(), "give sandboxed code the network (the host's, loopback included)",
        env="TOOLSMITH_NETWORK",
    )
    limits: Limits = group(Limits, "sandbox")
    warm_workers: int = setting(
        8, "sandbox.warm_workers", Whole(0), "warm tool workers kept per process (0: every call runs cold)"
    )
    warm_per_tool: int = setting(
        4, "sandbox.warm_per_tool", Whole(1),
        "warm workers one tool may have, for concurrent calls (more callers wait for a free one)",
    )
    warm_idle_s: float = setting(
        300.0, "sandbox.warm_idle_s", Number(), "seconds a warm worker may idle before it stops"
    )
    mcp_token: str = setting(
        "", "mcp.token", Text(), "the bearer token HTTP clients of `toolsmith mcp` must send",
        env="TOOLSMITH_MCP_TOKEN", secret=True,
    )
    index_url: str | None = setting(
        None, "packages.index_url", Text("URL", optional=True), "the package index (default: pip's own)",
        env="TOOLSMITH_INDEX_URL",
    )
    allow_packages: tuple[str, ...] = setting(
        (), "packages.allow", Names(), "package names accepted even if they look like typosquats"
    )
    only_binary: bool = setting(
        True, "packages.only_binary", Flag(),
        "wheels only (`false` allows source builds, which run the package's own code at install)",
    )
    search_backends: tuple[str, ...] = setting(
        SEARCH_BACKENDS, "search.backends", Names(SEARCH_BACKENDS), "web search backends, tried in order",
        env="TOOLSMITH_SEARCH_BACKENDS",
    )
    searxng_url: str | None = setting(
        None, "search.searxng_url", Text("URL", optional=True), "a SearXNG instance for the `searxng` backend",
        env="SEARXNG_URL",
    )
    max_steps: int = setting(20, "budget.max_steps", Whole(1), "model requests per task")
    max_tokens: int = setting(
        0, "budget.max_tokens", Whole(0),
        "tokens per task (0: unlimited); an endpoint that reports no usage is counted at ~4 characters a token",
    )
    max_wall_s: float = setting(0.0, "budget.max_wall_s", Number(), "seconds per task (0: unlimited)")
    max_nudges: int = setting(
        2, "budget.max_nudges", Whole(0), "reminders to create a tool before answering from verified data"
    )
    max_calls_per_turn: int = setting(
        10, "budget.max_calls_per_turn", Whole(1), "tool calls run per model reply; the rest are refused"
    )
    max_task_chars: int = setting(
        50_000, "budget.max_task_chars", Whole(0),
        "characters a task may hold (0: unlimited); a longer one is refused before any model call",
    )
    library_url: str | None = setting(
        None, "library.url", Text("library URL", optional=True),
        "empty: `library.db` in the home; `postgresql://...` for a team; `sqlite:///path`",
        env="TOOLSMITH_LIBRARY_URL",
    )
    catalogue_max_tools: int = setting(
        12, "library.catalogue_max_tools", Whole(0),
        "a library this small is listed whole in a task's first request (0: never)",
    )
    catalogue_max_chars: int = setting(
        3000, "library.catalogue_max_chars", Whole(200), "the most characters that list may take"
    )
    search_floor: float = setting(
        0.3, "library.search_floor", Number(maximum=1),
        "least share of a task's words a tool must cover to be found (0: any BM25 hit)",
    )
    prices: Mapping[str, tuple[float, float]] = setting(
        {}, "prices", Prices(), "a model's price per million tokens, for the run's cost: a `[prices.\"name\"]` table"
    )
    model: ModelSettings = group(ModelSettings, "model")
    # fmt: on

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

    def check_task(self, task: str, *, source: str | None = None) -> None:
        """Refuse a task longer than ``budget.max_task_chars`` (:class:`TaskTooLongError`)."""
        if self.max_task_chars and len(task) > self.max_task_chars:
            raise TaskTooLongError(len(task), self.max_task_chars, source=source)

    @classmethod
    def load(cls, home: Path | None = None, env: Mapping[str, str] | None = None, *, strict: bool = True) -> Settings:
        """Resolve settings from the home directory's config file and the environment.

        A home that is a file is refused (:class:`ConfigError` naming ``TOOLSMITH_HOME``),
        unless not ``strict``: ``toolsmith doctor`` reports it and checks the rest."""
        env = os.environ if env is None else env
        resolved_home = Path(home) if home else default_home(env)
        problem = home_problem(resolved_home)
        if problem and strict:
            raise ConfigError(problem, setting="TOOLSMITH_HOME")
        config_file = Path(env["TOOLSMITH_CONFIG"]) if env.get("TOOLSMITH_CONFIG") else None
        path = config_file or resolved_home / "config.toml"
        data = read_config_file(path, required=bool(config_file))
        check_keys(data, path)
        return _from_layers(resolved_home, data, env)


# TOOLSMITH_* variables that are not settings, and what reads them (the README lists these).
VARIABLES: Mapping[str, str] = {
    "TOOLSMITH_HOME": "where toolsmith keeps its data (default: the platform's user data directory)",
    "TOOLSMITH_CONFIG": "the config file to read instead of `$TOOLSMITH_HOME/config.toml` (it must exist)",
    "TOOLSMITH_UI_TOKEN": "the token `toolsmith ui` asks for (as `--token`)",
    "TOOLSMITH_ALLOW_REAL_MODEL": "`1` lets the test suite reach a real model endpoint",
    "TOOLSMITH_BAN_REAL_MODEL": "`1` makes the model client refuse every endpoint not on loopback",
}
# The test suite's and scripts' own: known, so `toolsmith doctor` does not call them typos.
TEST_VARIABLES = frozenset(
    {
        "TOOLSMITH_TEST_POSTGRES_URL", "TOOLSMITH_TEST_POSTGRES_PORT", "TOOLSMITH_REQUIRE_POSTGRES",
        "TOOLSMITH_REQUIRE_BROWSER", "TOOLSMITH_CHROMIUM", "TOOLSMITH_TEST_ARTIFACTS", "TOOLSMITH_TEST_SECRET",
    }
)  # fmt: skip


@dataclass(frozen=True)
class Declared:
    """A declared setting and where it lives: ``path`` is the attribute path from :class:`Settings`."""

    spec: Spec
    path: tuple[str, ...]
    default: Any


def declarations(cls: type[Any] = Settings) -> tuple[Declared, ...]:
    """Every setting declared on ``cls`` and its tables, in declaration order."""
    return tuple(_walk(cls))


def _walk(cls: type[Any]) -> Iterator[Declared]:
    for outer in fields(cls):
        if SPEC in outer.metadata:
            yield Declared(outer.metadata[SPEC], (outer.name,), _default(outer))
        elif GROUP in outer.metadata:
            table = outer.metadata[GROUP]
            for inner in fields(table.cls):
                spec = inner.metadata.get(SPEC) or _limit(table.name, inner)
                assert spec.table == table.name, f"{spec.key} is declared in the [{table.name}] table"
                yield Declared(spec, (outer.name, inner.name), _default(inner))


def _limit(table: str, limit: Field[Any]) -> Spec:
    """A sandbox limit's spec: every limit is a positive number, whole when its default is."""
    whole = isinstance(limit.default, int)
    return Spec(f"{table}.{limit.name}", Whole(1) if whole else Number(positive=True), limit.metadata[HELP])


def _default(declared: Field[Any]) -> Any:
    if declared.default_factory is not MISSING:
        return declared.default_factory()
    return declared.default


DECLARED = declarations()
# The one set of defaults: the declarations' own. The config reader falls back to these.
DEFAULTS = Settings(home=Path())

# Every key config.toml may hold, table by table ("" is the top level). A table mapped to
# None takes any key (model names under [prices]).
CONFIG_KEYS: dict[str, frozenset[str] | None] = {
    table: frozenset(d.spec.name for d in DECLARED if d.spec.table == table and not isinstance(d.spec.kind, Prices))
    for table in dict.fromkeys(d.spec.table for d in DECLARED)
} | {d.spec.key: None for d in DECLARED if isinstance(d.spec.kind, Prices)}

# Every TOOLSMITH_* variable the program, its tests or its scripts read. `toolsmith doctor`
# names any other as a problem, with the nearest known one: a typo'd variable is otherwise
# ignored without a word. A test scans the sources for names missing here.
ENVIRONMENT_VARIABLES = frozenset(
    {d.spec.env for d in DECLARED if d.spec.env and d.spec.env.startswith("TOOLSMITH_")}
    | set(VARIABLES)
    | TEST_VARIABLES
)


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


def unknown_environment(env: Mapping[str, str]) -> list[tuple[str, str | None]]:
    """``TOOLSMITH_*`` variables in ``env`` that nothing reads, each with the nearest known name."""
    prefix = "TOOLSMITH_"
    known = {name.removeprefix(prefix): name for name in ENVIRONMENT_VARIABLES}
    unknown = sorted(name for name in env if name.startswith(prefix) and name not in ENVIRONMENT_VARIABLES)
    # Compared without the shared prefix, which would make every name look close.
    nearest = (difflib.get_close_matches(name.removeprefix(prefix), known, n=1) for name in unknown)
    return [(name, known[near[0]] if near else None) for name, near in zip(unknown, nearest, strict=True)]


def _from_layers(home: Path, data: Mapping[str, Any], env: Mapping[str, str]) -> Settings:
    """Each declared setting from its variable when set (not blank), else the file, else its default."""
    values: dict[str, Any] = {}
    tables: dict[str, dict[str, Any]] = {}
    for declared in DECLARED:
        raw = _raw(declared.spec, data, env)
        if raw is None:
            continue
        value = declared.spec.kind.parse(*raw)
        if len(declared.path) == 1:
            values[declared.path[0]] = value
        else:
            tables.setdefault(declared.path[0], {})[declared.path[1]] = value
    for outer in fields(Settings):
        if GROUP in outer.metadata:
            values[outer.name] = outer.metadata[GROUP].cls(**tables.get(outer.name, {}))
    return Settings(home=home, **values)


def _raw(spec: Spec, data: Mapping[str, Any], env: Mapping[str, str]) -> tuple[object, str, str] | None:
    """The value that sets ``spec``, the name an error gives it and how its message shows it;
    None when neither the environment nor the file sets it (the default holds)."""
    if spec.env and env.get(spec.env, "").strip():
        return env[spec.env], spec.env, f"{spec.env} (which sets {spec.key})"
    table = data.get(spec.table, {}) if spec.table else data
    return (table[spec.name], spec.key, spec.key) if spec.name in table else None


def check_keys(data: Mapping[str, Any], path: Path | str = "config.toml") -> None:
    """Refuse keys that are not settings, naming the nearest valid key for each, and tables that are not."""
    top = CONFIG_KEYS[""] or frozenset()
    unknown: list[tuple[str, str, frozenset[str]]] = []  # (dotted name, key, keys it could have meant)
    for key, value in data.items():
        if key in CONFIG_KEYS and key:
            if not isinstance(value, dict):
                raise ConfigError(f"[{key}] in {path} must be a table.", setting=key)
            known = CONFIG_KEYS[key]
            if known is not None:
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
