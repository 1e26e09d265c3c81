"""The pages and the one state-changing action, as Starlette endpoints.

GET endpoints are plain functions (Starlette runs them in a worker thread, since the
library calls block). Two POSTs change things, both CSRF-checked: a review decision,
whose reason is required and which goes through :func:`toolsmith.service.review.decide` with
the person running the server as the actor, exactly as ``toolsmith tools approve``
does (an approval first runs the version's own tests in the sandbox: its evidence); and
a test run, :func:`toolsmith.service.review.health_check` as ``toolsmith tools test``
runs it (recorded as a call; it never quarantines).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from starlette.concurrency import run_in_threadpool
from starlette.datastructures import FormData
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.templating import Jinja2Templates

from toolsmith.config import Settings
from toolsmith.errors import LibraryError, ReviewError, ToolNotFoundError
from toolsmith.library import Status, ToolLibrary, ToolVersion, user_actor
from toolsmith.sandbox import Sandbox, ToolRunner
from toolsmith.service import evidence
from toolsmith.service import review as rv
from toolsmith.ui import auth, listing, views
from toolsmith.ui.runs import RunStore

STATIC_DIR = Path(__file__).with_name("static")
_MAX_REASON = 500
# Only this shape is echoed back, so a crafted link cannot put other words on the page.
_DONE = re.compile(r"(approve|reject|quarantine) ([A-Za-z_][A-Za-z0-9_]*@[0-9]+)")
_DONE_WORDS = {"approve": "Approved", "reject": "Rejected", "quarantine": "Quarantined"}


@dataclass
class UiState:
    """What every endpoint needs; kept on ``app.state.ui``."""

    settings: Settings
    library: ToolLibrary
    runs: RunStore
    guard: auth.Guard
    templates: Jinja2Templates
    sandbox: ToolRunner | None = None  # made on the first test run
    # One test run at a time: each starts a sandboxed process, and a page need not race another.
    test_lock: threading.Lock = field(default_factory=threading.Lock)

    def runner(self) -> ToolRunner:
        if self.sandbox is None:
            self.sandbox = Sandbox(self.settings)
        return self.sandbox


def _state(request: Request) -> UiState:
    state: UiState = request.app.state.ui
    return state


def render(request: Request, name: str, context: dict[str, Any], status_code: int = 200) -> Response:
    state = _state(request)
    base = {
        "csrf": state.guard.csrf,
        "csrf_field": auth.CSRF_FIELD,
        "library_at": state.library.display,
        "runs_at": str(state.runs.directory),
        "done": done_message(request),
    }
    return state.templates.TemplateResponse(request, name, {**base, **context}, status_code=status_code)


# --- pages -----------------------------------------------------------------------------


def library_page(request: Request) -> Response:
    state = _state(request)
    view = listing.library_view(state.library, request.query_params)
    pending = view.counts.get(Status.PENDING.value, 0)
    return render(request, "library.html", {"view": view, "pending": pending, "statuses": listing.STATUSES})


def tool_page(request: Request) -> Response:
    state = _state(request)
    name = request.path_params["name"]
    version = request.path_params.get("version")
    view = views.tool_view(state.library, name, version, state.runs.all())
    return render(request, "tool.html", {"view": view, "tool": view.tool, "check": None})


def review_page(request: Request) -> Response:
    state = _state(request)
    pending = views.review_queue(state.library)
    quarantined = state.library.with_status(Status.QUARANTINED)
    return render(request, "review.html", {"queue": pending, "quarantined": quarantined})


def runs_page(request: Request) -> Response:
    runs = _state(request).runs.all()
    return render(request, "runs.html", {"runs": runs, "directory": str(_state(request).runs.directory)})


def run_page(request: Request) -> Response:
    run = _state(request).runs.get(request.path_params["run_id"])
    if run is None:
        raise HTTPException(404, "No such run in the trajectories directory.")
    return render(request, "run.html", {"run": run})


def overview_page(request: Request) -> Response:
    state = _state(request)
    return render(request, "overview.html", {"o": views.overview(state.library, state.runs.all())})


def pygments_css(request: Request) -> Response:
    return PlainTextResponse(views.pygments_css(), media_type="text/css")


def favicon(request: Request) -> Response:
    """The icon at the address browsers ask for when a page names none (the pages name the SVG)."""
    return FileResponse(STATIC_DIR / "favicon.svg", media_type="image/svg+xml")


# --- logging in ------------------------------------------------------------------------


def login_page(request: Request) -> Response:
    return challenge(request, status_code=200)


async def login_submit(request: Request) -> Response:
    form = await request.form()
    guard = _state(request).guard
    target = str(form.get("next") or "/")
    if not guard.token_matches(str(form.get("token") or "")):
        return challenge(request, error="That token is not right.", target=target)
    return guard.login_response(target, secure=request.url.scheme == "https")


async def logout(request: Request) -> Response:
    form = await request.form()
    _require_csrf(request, form)
    response = RedirectResponse(auth.LOGIN_PATH, status_code=303)
    response.delete_cookie(auth.COOKIE, path="/")
    return response


def challenge(request: Request, *, status_code: int = 401, error: str = "", target: str | None = None) -> Response:
    """The 401 answer: a login form for a browser, one line and a Bearer challenge otherwise."""
    headers = {"www-authenticate": 'Bearer realm="toolsmith ui"'} if status_code == 401 else {}
    if "text/html" not in request.headers.get("accept", "") and request.url.path != auth.LOGIN_PATH:
        return PlainTextResponse("401: this toolsmith UI needs its token.\n", 401, headers=headers)
    default = request.url.path if request.url.path != auth.LOGIN_PATH else "/"
    nxt = auth.safe_next(target or request.query_params.get("next") or default)
    context = {"request": request, "error": error, "next": nxt}
    templates = _state(request).templates
    return templates.TemplateResponse(request, "login.html", context, status_code=status_code, headers=headers)


# --- the review action -----------------------------------------------------------------


async def review_action(request: Request) -> Response:
    form = await request.form()
    _require_csrf(request, form)
    name, version = request.path_params["name"], request.path_params["version"]
    action = str(form.get("action") or "")
    reason = " ".join(str(form.get("reason") or "").split())[:_MAX_REASON]
    back = auth.safe_next(str(form.get("next") or f"/tools/{name}/{version}"))
    if action not in rv.DEFAULT_REASONS:
        return _review_refused(request, name, version, f"Unknown action {action!r}.", 400)
    if not reason:
        return _review_refused(request, name, version, f"Say why you {action} {name}@{version}.", 400)
    state = _state(request)
    try:
        await run_in_threadpool(_decide, state, action, name, version, reason)
    except ReviewError as exc:
        return _review_refused(request, name, version, str(exc), 409)
    return RedirectResponse(_with_done(back, f"{action} {name}@{version}"), status_code=303)


def _decide(state: UiState, action: str, name: str, version: int, reason: str) -> rv.Decision:
    """The decision; an approval first runs the version's own tests in the sandbox (its evidence)."""
    proof = None
    if action == rv.APPROVE:
        tool = rv.target(state.library, action, name, version)
        with state.test_lock:
            proof = evidence.gather(tool, library=state.library, runner=state.runner(), actor=user_actor())
    return rv.decide(state.library, action, name, version, reason=reason, actor=user_actor(), evidence=proof)


def _with_done(path: str, done: str) -> str:
    """``path`` with ``done=...`` added to its query, so the next page can confirm the decision."""
    path, _, fragment = path.partition("#")
    joined = f"{path}{'&' if '?' in path else '?'}{urlencode({'done': done})}"
    return joined + (f"#{fragment}" if fragment else "")


def done_message(request: Request) -> str:
    """The confirmation for a ``done=ACTION NAME@N`` query; anything else shows nothing."""
    found = _DONE.fullmatch(request.query_params.get("done", ""))
    if found is None:
        return ""
    return f"{_DONE_WORDS[found.group(1)]} {found.group(2)}."


async def test_action(request: Request) -> Response:
    """Re-run a version's stored test arguments in the sandbox, as ``toolsmith tools test`` does."""
    form = await request.form()
    _require_csrf(request, form)
    name, version = request.path_params["name"], request.path_params["version"]
    state = _state(request)
    tool = await run_in_threadpool(state.library.get, name, version)
    check = await run_in_threadpool(_run_test, state, tool)
    # The page is rendered here rather than after a redirect, so it can say exactly which
    # case failed and why (reloading it runs the test again, which is harmless).
    view = await run_in_threadpool(views.tool_view, state.library, name, version, state.runs.all())
    return render(request, "tool.html", {"view": view, "tool": view.tool, "check": check})


def _run_test(state: UiState, tool: ToolVersion) -> rv.HealthCheck:
    with state.test_lock:
        return rv.health_check(tool, library=state.library, runner=state.runner(), actor=user_actor())


def _review_refused(request: Request, name: str, version: int, message: str, status: int) -> Response:
    context = {"title": "Not done", "message": message, "link": f"/tools/{name}/{version}"}
    return render(request, "error.html", context, status_code=status)


def _require_csrf(request: Request, form: FormData) -> None:
    if not _state(request).guard.csrf_ok(request, form):
        raise HTTPException(403, "The form's CSRF check failed: reload the page and try again.")


# --- errors ----------------------------------------------------------------------------


def not_found(request: Request, exc: Exception) -> Response:
    message = "Not found."
    if isinstance(exc, ToolNotFoundError):
        message = str(exc)
    elif isinstance(exc, HTTPException):
        message = exc.detail
    return render(request, "error.html", {"title": "Not found", "message": message, "link": "/"}, 404)


def toolsmith_error(request: Request, exc: Exception) -> Response:
    """A library or sandbox failure mid-request: say what failed, as the CLI would (503)."""
    title = "The library could not be used" if isinstance(exc, LibraryError) else "toolsmith could not do that"
    return render(request, "error.html", {"title": title, "message": str(exc), "link": "/"}, 503)


def http_error(request: Request, exc: Exception) -> Response:
    """Starlette's HTTPException (the app registers this handler for that class only)."""
    assert isinstance(exc, HTTPException)
    status = exc.status_code
    if status == 404:
        return not_found(request, exc)
    detail = exc.detail or "Error"
    return render(request, "error.html", {"title": f"Error {status}", "message": detail, "link": "/"}, status)


ROUTES = [
    Route("/", library_page),
    Route("/tools/{name}", tool_page),
    Route("/tools/{name}/{version:int}", tool_page),
    Route("/review", review_page),
    Route("/review/{name}/{version:int}", review_action, methods=["POST"]),
    Route("/tools/{name}/{version:int}/test", test_action, methods=["POST"]),
    Route("/runs", runs_page),
    Route("/runs/{run_id}", run_page),
    Route("/overview", overview_page),
    Route(auth.LOGIN_PATH, login_page),
    Route(auth.LOGIN_PATH, login_submit, methods=["POST"]),
    Route("/logout", logout, methods=["POST"]),
    Route("/static/pygments.css", pygments_css),
    Route("/favicon.ico", favicon),
    Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
]
