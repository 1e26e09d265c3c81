"""Where a tool library lives: the library URL, parsed once, and its printable form.

``library.url`` (config.toml) or ``TOOLSMITH_LIBRARY_URL`` selects the backend:
absent or ``sqlite:///path`` is the embedded SQLite file, ``postgresql://...`` a
PostgreSQL database shared by a team. Anything shown to a person (errors, logs,
``doctor``) uses :attr:`LibraryLocation.display`, which never contains a password.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from toolsmith.errors import ConfigError

SETTING = "library.url (or TOOLSMITH_LIBRARY_URL)"
_POSTGRES_SCHEMES = ("postgresql", "postgres")
_SECRET_PARAMS = frozenset({"password", "sslpassword"})


@dataclass(frozen=True)
class LibraryLocation:
    """A parsed library URL. ``url`` holds credentials; show ``display`` instead."""

    kind: str  # "sqlite" or "postgresql"
    url: str
    path: Path | None = None

    @property
    def display(self) -> str:
        return str(self.path) if self.path is not None else redact(self.url)

    @property
    def is_postgres(self) -> bool:
        return self.kind == "postgresql"

    def __repr__(self) -> str:  # never leak the password through a traceback or a log
        return f"LibraryLocation({self.kind!r}, {self.display!r})"


def sqlite_at(path: Path) -> LibraryLocation:
    return LibraryLocation("sqlite", f"sqlite:///{path}", Path(path))


def parse(url: str | None, default_path: Path) -> LibraryLocation:
    """The location a URL names; no URL means the SQLite file at ``default_path``."""
    text = (url or "").strip()
    if not text:
        return sqlite_at(default_path)
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""
    if scheme == "sqlite":
        rest = text[len("sqlite:") :]
        if not rest.startswith("///") or len(rest) == 3:
            raise ConfigError(
                f"Library URL {redact(text)!r} needs a path: sqlite:///relative/file.db or sqlite:////absolute/file.db.",
                setting=SETTING,
            )
        return sqlite_at(Path(rest[3:]).expanduser())
    if scheme in _POSTGRES_SCHEMES:
        parts = urlsplit(text)
        if not (parts.hostname or parts.path.strip("/") or "host=" in parts.query):
            raise ConfigError(f"Library URL {redact(text)!r} names no server or database.", setting=SETTING)
        return LibraryLocation("postgresql", text)
    raise ConfigError(
        f"Library URL {redact(text)!r} is not supported: use sqlite:///path or postgresql://user@host/db.",
        setting=SETTING,
    )


def redact(url: str) -> str:
    """The URL with any password (in the authority or the query) replaced by ``***``."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            userinfo, host = netloc.rsplit("@", 1)
            if ":" in userinfo:
                userinfo = userinfo.split(":", 1)[0] + ":***"
            netloc = f"{userinfo}@{host}"
        pairs = parse_qsl(parts.query, keep_blank_values=True)
        query = urlencode([(k, "***" if k.lower() in _SECRET_PARAMS else v) for k, v in pairs], safe="*")
        return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))
    except ValueError:  # unparseable: show only the scheme rather than risk a secret
        return url.split(":", 1)[0] + "://(unparseable)"
