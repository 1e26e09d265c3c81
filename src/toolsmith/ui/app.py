"""The web application: templates, middleware and routes wired into one Starlette app.

:func:`create_app` builds it for a library and a token; :func:`serve` runs it with
uvicorn after the one check that must happen before a socket opens: a host other than
loopback is refused unless the person chose the token themselves.
"""

from __future__ import annotations

import socket
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import jinja2
import uvicorn
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.templating import Jinja2Templates

from toolsmith.config import Settings
from toolsmith.errors import ConfigError, ToolNotFoundError, ToolsmithError
from toolsmith.library import ToolLibrary
from toolsmith.service import review
from toolsmith.ui import auth, listing, routes, views
from toolsmith.ui.runs import RunStore

TEMPLATES_DIR = Path(__file__).with_name("templates")
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "[::1]")


def _moment(value: Any) -> datetime | None:
    """A timestamp (ISO text, epoch seconds or datetime) as an aware UTC datetime, if it is one."""
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return datetime.fromtimestamp(value, tz=timezone.utc)
    if isinstance(value, str):
        try:
            value = datetime.fromisoformat(value.strip())
        except ValueError:
            return None
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=timezone.utc)).astimezone(timezone.utc)
    return None


def _when(value: Any, precision: str = "seconds") -> str:
    """A timestamp as ``YYYY-MM-DD HH:MM:SS UTC`` (no fractions of a second).

    ``precision="minutes"`` drops the seconds and the zone, for a narrow column whose
    heading says UTC. Text that is not a timestamp is shown as it is.
    """
    if value is None or value == "":
        return "-"
    moment = _moment(value)
    if moment is None:
        return str(value)
    if precision == "minutes":
        return moment.strftime("%Y-%m-%d %H:%M")
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _percent(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.0f}%"


def templates() -> Jinja2Templates:
    """Jinja2 with autoescaping on for every template, and a few filters."""
    env = jinja2.Environment(
        loader=jinja2.FileSystemLoader(str(TEMPLATES_DIR)),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters.update(when=_when, percent=_percent, pretty=views.pretty, compact=views.compact)
    env.globals.update(
        failure_rate=listing.failure_rate, requirement_lines=review.requirement_lines, page_href=listing.page_href
    )
    return Jinja2Templates(env=env)


def create_app(
    settings: Settings,
    token: str,
    *,
    library: ToolLibrary | None = None,
    loopback: bool = True,
    extra_hosts: tuple[str, ...] = (),
) -> Starlette:
    """The UI for ``settings``' library and trajectories; every request needs ``token``.

    With ``loopback`` the app also refuses requests whose Host header is not a loopback
    name, so a page on another site cannot reach it through DNS rebinding.
    """
    guard = auth.Guard(token)
    owned = library is None
    lib = library if library is not None else ToolLibrary.open(settings)
    state = routes.UiState(settings, lib, RunStore(settings.trajectories_dir), guard, templates())

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        if owned:
            lib.close()

    hosts = frozenset(auth.host_name(h) for h in (*LOOPBACK_HOSTS, *extra_hosts)) if loopback else None
    middleware = [Middleware(auth.AuthMiddleware, guard=guard, challenge=routes.challenge, hosts=hosts)]
    app = Starlette(
        routes=routes.ROUTES,
        middleware=middleware,
        exception_handlers={
            ToolNotFoundError: routes.not_found,
            ToolsmithError: routes.toolsmith_error,
            HTTPException: routes.http_error,
        },
        lifespan=lifespan,
    )
    app.state.ui = state
    return app


def check_host(host: str, token: str | None) -> None:
    """Refuse a token too short to guess, and listening beyond loopback with a generated one."""
    if token is not None and len(token) < auth.MIN_TOKEN:
        raise ConfigError(f"The UI token must be at least {auth.MIN_TOKEN} characters long.", setting="--token")
    if not auth.is_loopback(host) and not token:
        raise ConfigError(
            f"Refusing to serve the UI on {host}, which is not loopback, without a token you chose: "
            "pass --token (or TOOLSMITH_UI_TOKEN), or keep the default --host 127.0.0.1.",
            setting="--token",
        )


def serve(settings: Settings, *, host: str, port: int, token: str | None, announce: Callable[[str], None]) -> None:
    """Serve until interrupted. ``announce`` gets the address once the socket is bound.

    A generated token is part of the announced link (the terminal is the only place it
    appears); a token the person passed is never echoed back. Uvicorn's access log is
    off, because a ``?token=`` link would otherwise be written to it.
    """
    check_host(host, token)
    chosen = token or auth.new_token()
    loopback = auth.is_loopback(host)
    app = create_app(settings, chosen, loopback=loopback, extra_hosts=(host,))
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{bound}/"
    if token:
        announce(f"toolsmith ui: {url} (log in with the token you passed)")
    else:
        announce(f"toolsmith ui: {url}?token={chosen}")
    announce("Press Ctrl+C to stop.")
    config = uvicorn.Config(app, log_level="warning", access_log=False, server_header=False, lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host.strip("[]"), port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"Cannot listen on {host}:{port}: {exc.strerror or exc}.", setting="--port") from exc
    sock.listen(128)
    sock.set_inheritable(True)
    return sock
