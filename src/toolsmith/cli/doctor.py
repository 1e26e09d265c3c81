"""``toolsmith doctor``: what is configured, what works, and what to change.

Each check returns a row (name, ok, detail). Checks that need the network have short
timeouts, so the doctor answers in seconds even when nothing is reachable. It exits 1
when any row reports a problem, so scripts can use it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import httpx
import typer
from rich.console import Console
from rich.table import Table

from toolsmith.config import Settings, unknown_environment
from toolsmith.config.home import home_problem, is_read_only
from toolsmith.config.providers import resolve_provider
from toolsmith.errors import ToolsmithError
from toolsmith.packages.index import resolve_index_url

console = Console(highlight=False)
PROBE_TIMEOUT_S = 5.0


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool | None  # None: not applicable / skipped
    detail: str

    def to_dict(self) -> dict[str, Any]:
        return {"check": self.name, "ok": self.ok, "detail": self.detail}


def check_provider(settings: Settings) -> list[Check]:
    try:
        config = resolve_provider()
    except ToolsmithError as exc:
        return [Check("model provider", False, str(exc))]
    info = config.to_dict()
    key = "present" if info["key_present"] else "absent"
    where = info["base_url"] or "the SDK default URL"
    rows = [Check("model provider", True, f"{info['provider']} model {info['model']} at {where} (key {key})")]
    rows.extend(_probe_models(config.base_url, config.api_key, config.model))
    return rows


def _probe_models(base_url: str | None, api_key: str, model: str) -> list[Check]:
    if not base_url:
        return [Check("model endpoint /models", None, "skipped: provider uses the SDK's default URL")]
    try:
        response = httpx.get(
            base_url.rstrip("/") + "/models", headers={"Authorization": f"Bearer {api_key}"}, timeout=PROBE_TIMEOUT_S
        )
    except httpx.HTTPError as exc:
        return [Check("model endpoint /models", False, f"unreachable: {type(exc).__name__}")]
    if response.status_code != 200:
        return [Check("model endpoint /models", False, f"HTTP {response.status_code}")]
    listed = _model_ids(response)
    rows = [Check("model endpoint /models", True, f"HTTP 200, {len(listed)} model(s) listed")]
    if listed and model not in listed:
        shown = ", ".join(listed[:8]) + (", ..." if len(listed) > 8 else "")
        rows.append(
            Check(
                "model name",
                False,
                f"warning: the endpoint does not list {model!r} (it lists {shown}). Set LLM_MODEL (or --model) to "
                "a model it serves; a server that answers with another model is recorded under the name it reports.",
            )
        )
    return rows


def _model_ids(response: httpx.Response) -> list[str]:
    """The ids an OpenAI-style ``/models`` answer lists (``{"data": [{"id": ...}, ...]}``)."""
    try:
        data = response.json().get("data", [])
    except (ValueError, AttributeError):
        return []
    if not isinstance(data, list):
        return []
    return [str(item["id"]) for item in data if isinstance(item, dict) and isinstance(item.get("id"), str)]


def check_sandbox(settings: Settings) -> list[Check]:
    from toolsmith.cli.sandbox import bwrap_line, network_line
    from toolsmith.isolation import describe

    info = describe(settings)
    ok = bool(info.get("isolating"))
    detail = f"backend {info.get('backend')}: {info.get('reason', '')}"
    rows = [Check("sandbox", ok, detail)]
    rows.append(Check("sandbox network", True, network_line(settings.network, info.get("backend"))))
    if "bwrap" in info:
        rows.append(Check("sandbox bwrap", bool(info["bwrap"].get("usable")), bwrap_line(info["bwrap"])))
    if "cgroup" in info:
        rows.append(
            Check(
                "sandbox process limits",
                bool(info["cgroup"].get("available")),
                str(info["cgroup"].get("detail", info["cgroup"])),
            )
        )
    return rows


def check_uv(settings: Settings) -> list[Check]:
    try:
        from uv import find_uv_bin

        path = find_uv_bin()
    except (ImportError, FileNotFoundError):
        path = shutil.which("uv") or ""
    if not path:
        return [Check("uv", False, "not found; package installs fall back to pip (slower)")]
    try:
        version = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        return [Check("uv", False, f"{path}: {exc}")]
    return [Check("uv", True, f"{version} ({path})")]


def check_library(settings: Settings) -> list[Check]:
    from toolsmith.library import ToolLibrary
    from toolsmith.library.location import parse

    try:
        where = parse(settings.library_url, settings.db_path)
    except ToolsmithError as exc:
        return [Check("tool library", False, str(exc))]
    path = where.path
    if path is not None and not path.exists():
        problem = home_problem(path.parent)
        if problem or is_read_only(path.parent):
            why = "see the toolsmith home row" if problem else f"its folder {path.parent} is read-only"
            return [Check("tool library", False, f"{path} cannot be created ({why})")]
        return [Check("tool library", True, f"{path} (not created yet)")]
    try:
        with ToolLibrary(where) as library:
            count = len(library)
    except ToolsmithError as exc:
        return [Check("tool library", False, str(exc))]
    if path is None:
        return [Check("tool library", True, f"{where.display}: {count} tool(s)")]
    size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*") if p.is_file())
    return [Check("tool library", True, f"{path}: {count} tool(s), {size / 1024:.0f} KiB")]


def check_search(settings: Settings) -> list[Check]:
    rows = []
    for backend in settings.search_backends:
        rows.append(_SEARCH_PROBES[backend](settings))
    return rows


def _probe_ddgs(settings: Settings) -> Check:
    started = time.monotonic()
    try:
        from ddgs import DDGS

        results = DDGS(timeout=int(PROBE_TIMEOUT_S)).text("python packaging", max_results=1)
    except Exception as exc:  # ddgs raises its own exception types for every failure
        return Check("search: ddgs", False, f"unreachable: {type(exc).__name__}: {str(exc)[:120]}")
    return Check("search: ddgs", bool(results), f"{len(results)} result(s) in {time.monotonic() - started:.1f}s")


def _probe_searxng(settings: Settings) -> Check:
    if not settings.searxng_url:
        return Check("search: searxng", None, "not configured (set search.searxng_url or SEARXNG_URL)")
    try:
        response = httpx.get(
            settings.searxng_url.rstrip("/") + "/search",
            params={"q": "python", "format": "json"},
            timeout=PROBE_TIMEOUT_S,
        )
    except httpx.HTTPError as exc:
        return Check("search: searxng", False, f"unreachable: {type(exc).__name__}")
    return Check("search: searxng", response.status_code == 200, f"HTTP {response.status_code}")


def _probe_index(settings: Settings) -> Check:
    try:
        url = resolve_index_url(settings.index_url)
        response = httpx.get(url + "pip/", timeout=PROBE_TIMEOUT_S, follow_redirects=True)
    except (httpx.HTTPError, ToolsmithError) as exc:
        return Check("search: package index", False, f"unreachable: {type(exc).__name__}")
    return Check("search: package index", response.status_code == 200, f"{url} answered HTTP {response.status_code}")


_SEARCH_PROBES: dict[str, Callable[[Settings], Check]] = {
    "ddgs": _probe_ddgs,
    "searxng": _probe_searxng,
    "pypi": _probe_index,
}


def check_environment(env: Mapping[str, str]) -> list[Check]:
    """A TOOLSMITH_* variable nothing reads is most likely a typo of one that is."""
    rows = []
    for name, near in unknown_environment(env):
        hint = f"did you mean {near}?" if near else "the README's Configuration section lists the ones it reads"
        rows.append(Check("environment", False, f"{name} is not a toolsmith variable and is ignored; {hint}"))
    return rows


def check_home(settings: Settings) -> Check:
    """The home must be a folder; a read-only one serves browsing only."""
    home = settings.home
    problem = home_problem(home)
    if problem:
        return Check("toolsmith home", False, problem)
    if is_read_only(home):
        return Check(
            "toolsmith home",
            False,
            f"{home} is read-only: `tools list`, `tools show`, `tools search`, `library where` and `ui` work, "
            "but runs, reviews and imports cannot write. Point TOOLSMITH_HOME at a writable folder.",
        )
    return Check("toolsmith home", True, str(home) if home.is_dir() else f"{home} (not created yet)")


def run_checks(settings: Settings) -> list[Check]:
    rows: list[Check] = [check_home(settings), *check_environment(os.environ)]
    for check in (check_provider, check_sandbox, check_uv, check_library, check_search):
        try:
            rows.extend(check(settings))
        except Exception as exc:  # one broken check must not hide the others
            rows.append(Check(check.__name__.removeprefix("check_"), False, f"{type(exc).__name__}: {exc}"))
    return rows


def doctor_command(
    json_mode: bool = typer.Option(False, "--json", help="Print the checks as JSON."),
) -> None:
    """Check the provider, sandbox, uv, library and search backends; exit 1 on any problem."""
    from toolsmith.cli.common import EXIT_FAILED, cli_errors, load_dotenv

    load_dotenv(json_mode)
    with cli_errors(json_mode):
        settings = Settings.load(strict=False)  # a home that is a file is one of the problems reported
    rows = run_checks(settings)
    if json_mode:
        print(json.dumps([r.to_dict() for r in rows], ensure_ascii=False))
    else:
        table = Table(title="toolsmith doctor", show_lines=False)
        table.add_column("check")
        table.add_column("status")
        table.add_column("detail", overflow="fold")
        for row in rows:
            status = {True: "[green]ok[/]", False: "[red]problem[/]", None: "[dim]n/a[/]"}[row.ok]
            table.add_row(row.name, status, row.detail)
        console.print(table)
    if any(row.ok is False for row in rows):
        raise typer.Exit(EXIT_FAILED)
