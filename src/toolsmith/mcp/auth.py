"""Bearer-token authentication for ``toolsmith mcp --transport http``.

Anyone who can reach the port could otherwise run the library's tools (and, with
``--solve-task``, spend the user's model budget). So every request to the MCP endpoint
must carry ``Authorization: Bearer <token>``. The token is the ``mcp.token`` setting
(or ``TOOLSMITH_MCP_TOKEN``); without one, a random token is generated for this run and
printed once on stderr for the user to hand to their client. Listening beyond loopback
needs a configured token: a token that changes on every restart and lives only in a
terminal is fine for a local client, not for a service others reach. ``--no-auth`` is
accepted on loopback only.

The check is the MCP SDK's own bearer middleware (``BearerAuthBackend`` and
``RequireAuthMiddleware``, installed by ``streamable_http_app`` when given a token
verifier), with a verifier that compares in constant time.
"""

from __future__ import annotations

import hmac
import secrets
from dataclasses import dataclass

from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from pydantic import AnyHttpUrl

from toolsmith.errors import ConfigError

TOKEN_ENV = "TOOLSMITH_MCP_TOKEN"
MIN_TOKEN_CHARS = 16
CLIENT_ID = "toolsmith-mcp-client"
LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")


@dataclass(frozen=True)
class HttpAuth:
    """The token this server accepts (None: no authentication) and whether it was generated."""

    token: str | None
    generated: bool = False

    @property
    def enabled(self) -> bool:
        return self.token is not None


def is_loopback(host: str) -> bool:
    return host in LOOPBACK_HOSTS or host.startswith("127.")


def resolve_auth(configured: str, host: str, *, disabled: bool = False) -> HttpAuth:
    """The authentication for a server on ``host``; a ConfigError for an unsafe combination."""
    token = configured.strip()
    if disabled:
        if not is_loopback(host):
            raise ConfigError(
                f"--no-auth is refused on {host}: beyond loopback every request must carry the token. "
                f"Set mcp.token (or {TOKEN_ENV}) and drop --no-auth.",
                setting="--no-auth",
            )
        return HttpAuth(None)
    if token:
        if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token):
            raise ConfigError(
                f"mcp.token must be at least {MIN_TOKEN_CHARS} characters without spaces "
                f"(e.g. the output of: python -c 'import secrets; print(secrets.token_urlsafe(32))').",
                setting="mcp.token",
            )
        return HttpAuth(token)
    if not is_loopback(host):
        raise ConfigError(
            f"Refusing to listen on {host} without a configured token: set mcp.token in config.toml "
            f"(or {TOKEN_ENV}) so clients beyond this machine must present it.",
            setting="mcp.token",
        )
    return HttpAuth(secrets.token_urlsafe(32), generated=True)


class StaticTokenVerifier:
    """Accepts exactly one bearer token (the SDK's ``TokenVerifier`` protocol)."""

    def __init__(self, token: str) -> None:
        self._token = token.encode()

    async def verify_token(self, token: str) -> AccessToken | None:
        if not hmac.compare_digest(token.encode(), self._token):
            return None
        return AccessToken(token=token, client_id=CLIENT_ID, scopes=[])


def auth_settings(server_url: str) -> AuthSettings:
    """The SDK's auth settings for a server that checks tokens itself and issues none.

    With no ``resource_server_url`` no OAuth metadata is advertised: clients are given
    the token out of band. ``issuer_url`` is required by the model and names this server.
    """
    return AuthSettings(issuer_url=AnyHttpUrl(server_url), resource_server_url=None)
