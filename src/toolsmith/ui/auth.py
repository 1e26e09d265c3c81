"""Who may use the web UI: the access token, the session cookie and CSRF protection.

Every request needs the token except the login page and :data:`PUBLIC_PATHS` (the
stylesheet and the icon the login page uses, which hold no data). A client shows it in one
of three ways: an ``Authorization: Bearer`` header (scripts), a login form, or a
``?token=`` query on a GET (the link printed at start). The last two set an HttpOnly,
SameSite=Strict cookie and redirect, so the token leaves the address bar at once. The
cookie does not hold the token but a value derived from it with HMAC, and so does the
CSRF field every form carries; neither can be turned back into the token.

State-changing requests are POSTs; each must carry the CSRF field, and a browser's
``Origin`` header, when sent, must be this server's own.
"""

from __future__ import annotations

import hashlib
import hmac
import ipaddress
import secrets
from collections.abc import Callable
from typing import Any
from urllib.parse import urlencode, urlsplit

from starlette.datastructures import MutableHeaders
from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

COOKIE = "toolsmith_ui"
CSRF_FIELD = "csrf"
MIN_TOKEN = 8
_LOOPBACK_NAMES = {"localhost", "localhost.localdomain", "ip6-localhost"}


def new_token() -> str:
    """A fresh random access token (32 bytes of entropy, URL-safe)."""
    return secrets.token_urlsafe(32)


def is_loopback(host: str) -> bool:
    """Whether ``host`` names only this machine (``127.0.0.0/8``, ``::1``, ``localhost``)."""
    name = host.strip().strip("[]").lower()
    if name in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(name).is_loopback
    except ValueError:
        return False


class Guard:
    """Checks requests against one access token; holds nothing else."""

    def __init__(self, token: str) -> None:
        if len(token) < MIN_TOKEN:
            raise ValueError(f"The UI token must be at least {MIN_TOKEN} characters long.")
        self._token = token.encode("utf-8")
        self.session = self._derive("session")
        self.csrf = self._derive("csrf")

    def _derive(self, purpose: str) -> str:
        return hmac.new(self._token, purpose.encode(), hashlib.sha256).hexdigest()

    def token_matches(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(self._token, str(given).encode("utf-8"))

    def authenticated(self, request: Request) -> bool:
        """A valid bearer header or session cookie."""
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        if scheme.lower() == "bearer" and self.token_matches(value.strip()):
            return True
        cookie = request.cookies.get(COOKIE, "")
        return bool(cookie) and hmac.compare_digest(cookie.encode(), self.session.encode())

    def csrf_ok(self, request: Request, form: Any) -> bool:
        """The form's CSRF field is right and the browser's Origin (if any) is this server."""
        origin = request.headers.get("origin")
        if origin is not None and not same_origin(origin, request):
            return False
        given = str(form.get(CSRF_FIELD) or "")
        return bool(given) and hmac.compare_digest(given.encode(), self.csrf.encode())

    def login_response(self, target: str, *, secure: bool) -> Response:
        """Redirect to ``target`` with the session cookie set."""
        response = RedirectResponse(safe_next(target), status_code=303)
        response.set_cookie(COOKIE, self.session, httponly=True, samesite="strict", secure=secure, path="/")
        return response


def same_origin(origin: str, request: Request) -> bool:
    parts = urlsplit(origin)
    own = request.url
    return (parts.scheme, parts.netloc) == (own.scheme, own.netloc)


def host_name(header: str) -> str:
    """The host part of a Host header, lower-case, without port or IPv6 brackets."""
    text = header.strip()
    if text.count(":") > 1 and not text.startswith("["):  # a bare IPv6 address, as in --host ::1
        text = f"[{text}]"
    try:
        return (urlsplit("//" + text).hostname or "").lower()
    except ValueError:
        return ""


def safe_next(target: str | None) -> str:
    """A local path to go to after login; anything else (other hosts, ``//x``) becomes ``/``."""
    text = (target or "/").strip()
    if not text.startswith("/") or text.startswith("//") or "\\" in text:
        return "/"
    return text


def without_token(request: Request) -> str:
    """The request's path and query with the ``token`` parameter removed."""
    kept = [(k, v) for k, v in request.query_params.multi_items() if k != "token"]
    return (request.url.path or "/") + (f"?{urlencode(kept)}" if kept else "")


class AuthMiddleware:
    """Lets a request through only with the token (header, cookie, or ``?token=`` once).

    With ``hosts``, a request whose Host header names another host is refused first.

    ``challenge`` renders the 401 answer (a login form for browsers). Every answer gets
    headers that keep pages out of caches, frames and other sites' referrers, and a
    content policy that runs no script and loads nothing from elsewhere.
    """

    def __init__(
        self,
        app: ASGIApp,
        guard: Guard,
        challenge: Callable[[Request], Response],
        hosts: frozenset[str] | None = None,
    ) -> None:
        self.app, self.guard, self.challenge, self.hosts = app, guard, challenge, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request = Request(scope, receive)
        response = self._gate(request)
        if response is not None:
            await response(scope, receive, _with_headers(send))
            return
        await self.app(scope, receive, _with_headers(send))

    def _gate(self, request: Request) -> Response | None:
        """None to let the request through, else the answer that replaces it."""
        if self.hosts is not None and host_name(request.headers.get("host", "")) not in self.hosts:
            # Served on loopback, the Host is a loopback name; another one means a page
            # elsewhere reached us through DNS rebinding.
            return PlainTextResponse("400: this server answers only to its loopback name.\n", 400)
        if request.url.path == LOGIN_PATH:
            return None
        if request.url.path in PUBLIC_PATHS and request.method in ("GET", "HEAD"):
            return None
        given = request.query_params.get("token")
        if given is not None and request.method in ("GET", "HEAD"):
            if self.guard.token_matches(given):
                return self.guard.login_response(without_token(request), secure=request.url.scheme == "https")
            return self.challenge(request)
        if self.guard.authenticated(request):
            return None
        return self.challenge(request)


LOGIN_PATH = "/login"
# Served without the token: the login page's look. Exact paths only; nothing here holds data.
PUBLIC_PATHS = frozenset({"/static/style.css", "/static/favicon.svg", "/favicon.ico"})
SECURITY_HEADERS = {
    "content-security-policy": (
        "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; "
        "frame-ancestors 'none'; base-uri 'none'"
    ),
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
}


def _with_headers(send: Send) -> Send:
    async def wrapped(message: Message) -> None:
        if message["type"] == "http.response.start":
            headers = MutableHeaders(scope=message)
            for key, value in SECURITY_HEADERS.items():
                headers.setdefault(key, value)
        await send(message)

    return wrapped
