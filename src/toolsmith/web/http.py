"""Bounded HTTP fetching for the web meta-tools.

Everything here is built so that a hostile or broken server cannot hang the agent or
flood its context: every request has timeouts and an overall deadline, bodies are read
as a stream and cut at a byte cap, redirects are followed by hand (each hop's scheme is
checked), and failures come back as values, never as exceptions. The overall deadline is
read from an injected ``clock`` (the monotonic clock by default), so tests can move time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

from toolsmith import __version__

USER_AGENT = f"toolsmith/{__version__} (reads documentation for an agent)"
ALLOWED_SCHEMES = ("http", "https")
MAX_REDIRECTS = 5
DEFAULT_TIMEOUT_S = 15.0
DEFAULT_MAX_BYTES = 3 * 1024 * 1024
_ACCEPT = "text/html,application/xhtml+xml,application/json;q=0.9,text/plain;q=0.8,text/markdown;q=0.8,*/*;q=0.5"


@dataclass
class Fetched:
    """The outcome of one GET: either a body or an ``error`` for the model."""

    url: str
    final_url: str = ""
    status: int = 0
    content_type: str = ""
    body: bytes = b""
    capped: bool = False
    redirects: list[str] = field(default_factory=list)
    error: str | None = None
    unreachable: bool = False  # no connection at all (DNS, refused): the host, not the page


def scheme_error(url: str) -> str | None:
    """Why ``url`` may not be fetched, or None when it is a plain http(s) URL."""
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        return f"Not a valid URL ({exc})."
    scheme = parts.scheme.lower()
    if scheme not in ALLOWED_SCHEMES:
        shown = f"{scheme}:" if scheme else "no scheme"
        return f"Refused to read {url!r}: only http:// and https:// URLs can be read ({shown} is not allowed)."
    if not parts.hostname:
        return f"Refused to read {url!r}: the URL has no host name."
    return None


def make_client(timeout_s: float = DEFAULT_TIMEOUT_S) -> httpx.Client:
    return httpx.Client(
        timeout=request_timeout(timeout_s),
        follow_redirects=False,
        headers={"User-Agent": USER_AGENT},
    )


def request_timeout(timeout_s: float) -> httpx.Timeout:
    return httpx.Timeout(timeout_s, connect=min(timeout_s, 5.0))


def fetch(
    url: str,
    *,
    client: httpx.Client,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_bytes: int = DEFAULT_MAX_BYTES,
    max_redirects: int = MAX_REDIRECTS,
    clock: Callable[[], float] = time.monotonic,
) -> Fetched:
    """GET ``url`` within ``timeout_s`` overall (by ``clock``), keeping at most ``max_bytes`` of body."""
    result = Fetched(url=url)
    deadline = _Deadline(clock, clock() + timeout_s, timeout_s)
    current = url
    try:
        for _ in range(max_redirects + 1):
            nxt = _one_hop(current, result, client, max_bytes, deadline)
            if nxt is None:
                return result
            result.redirects.append(nxt)
            current = nxt
        result.error = f"Too many redirects (more than {max_redirects}) starting at {url}."
    except httpx.TimeoutException:
        result.error = f"Timed out after {timeout_s:g} s reading {current}."
    except httpx.ConnectError as exc:
        host = urlsplit(current).hostname or current
        result.error = f"Could not connect to {host} (DNS or connection failure: {exc})."
        result.unreachable = True
    except httpx.HTTPError as exc:
        result.error = f"Fetching {current} failed: {type(exc).__name__}: {exc}"
    return result


@dataclass(frozen=True)
class _Deadline:
    """When the whole fetch (every redirect, every chunk) must be done, by ``clock``."""

    clock: Callable[[], float]
    at: float
    timeout_s: float

    def remaining(self) -> float:
        return self.at - self.clock()


def _one_hop(url: str, result: Fetched, client: httpx.Client, max_bytes: int, deadline: _Deadline) -> str | None:
    """Fetch one URL into ``result``; return the redirect target when there is one."""
    headers = {"Accept": _ACCEPT, "User-Agent": USER_AGENT}
    timeout_s = deadline.timeout_s
    timeout = request_timeout(min(timeout_s, max(deadline.remaining(), 0.1)))
    with client.stream("GET", url, headers=headers, timeout=timeout, follow_redirects=False) as resp:
        result.final_url = str(resp.url)
        result.status = resp.status_code
        result.content_type = resp.headers.get("content-type", "")
        location = resp.headers.get("location")
        if resp.is_redirect and location:
            target = str(resp.url.join(location))
            refused = scheme_error(target)
            if refused:
                result.error = f"{url} redirected to a URL that cannot be read. {refused}"
                return None
            return target
        if resp.status_code >= 400:
            result.error = _status_error(resp.status_code, resp.reason_phrase, url)
            return None
        chunks: list[bytes] = []
        size = 0
        for chunk in resp.iter_bytes():
            chunks.append(chunk)
            size += len(chunk)
            if size >= max_bytes:
                result.capped = True
                break
            if deadline.remaining() < 0:
                result.error = f"Timed out after {timeout_s:g} s reading {url} (body too slow)."
                return None
        result.body = b"".join(chunks)[:max_bytes]
    return None


def _status_error(status: int, reason: str, url: str) -> str:
    hint = {
        404: "The page does not exist: check the URL or search for another page.",
        403: "The server refused access; try another source for the same documentation.",
        429: "The server is rate limiting; wait or read another source.",
    }.get(status, "Try another URL." if status < 500 else "The server failed; try again later.")
    return f"HTTP {status} {reason} for {url}. {hint}".replace("  ", " ")
