"""The Python package index as toolsmith sees it: which index, and what it says.

The index URL is never written into toolsmith. It comes, in order, from
``packages.index_url`` in config (or ``TOOLSMITH_INDEX_URL``), from pip's own
configuration (``PIP_INDEX_URL`` and pip's config files, so a company mirror is
honoured), and finally from the default that the installed pip itself ships.

Three kinds of request are made, all through :class:`PackageIndex`:

* a project page of the simple API (PEP 691 JSON, falling back to PEP 503 HTML): does
  the project exist, which files and hashes does it have;
* the per-project JSON metadata next to the simple API (``/pypi/NAME/json``): summary,
  version, project URLs and the README;
* the full simple listing of project names, cached on disk for a day, for discovery.
"""

from __future__ import annotations

import configparser
import json
import os
import re
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from toolsmith.calls import JSONObject
from toolsmith.errors import ConfigError, PackageError

SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
_ACCEPT = f"{SIMPLE_JSON}, application/vnd.pypi.simple.v1+html;q=0.2, text/html;q=0.01"
_ANCHOR = re.compile(r'<a\s+[^>]*href="([^"]+)"[^>]*>([^<]+)</a>', re.IGNORECASE)
LISTING_TTL_S = 24 * 3600


def normalize_name(name: str) -> str:
    """PEP 503 normalisation: lower case, runs of ``-_.`` become one ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _pip_config_files(env: Mapping[str, str]) -> list[Path]:
    """pip's config files in the order pip reads them (later files win)."""
    xdg_dirs = env.get("XDG_CONFIG_DIRS", "/etc/xdg").split(os.pathsep)
    files = [Path(d) / "pip" / "pip.conf" for d in xdg_dirs if d]
    files.append(Path("/etc/pip.conf"))
    home = Path(env.get("HOME", str(Path.home())))
    files.append(home / ".pip" / "pip.conf")
    files.append(Path(env.get("XDG_CONFIG_HOME", str(home / ".config"))) / "pip" / "pip.conf")
    files.append(Path(sys.prefix) / "pip.conf")
    if env.get("PIP_CONFIG_FILE") and env["PIP_CONFIG_FILE"] != os.devnull:
        files.append(Path(env["PIP_CONFIG_FILE"]))
    return files


def pip_configured_index(env: Mapping[str, str] | None = None) -> str | None:
    """The ``index-url`` pip is configured with, if any."""
    env = os.environ if env is None else env
    if env.get("PIP_INDEX_URL"):
        return env["PIP_INDEX_URL"].strip()
    found: str | None = None
    for path in _pip_config_files(env):
        parser = configparser.ConfigParser(interpolation=None)
        try:
            parser.read(path, encoding="utf-8")
        except (configparser.Error, OSError, UnicodeDecodeError):
            continue
        for section in ("global", "install"):
            for key in ("index-url", "index_url"):
                if parser.has_option(section, key):
                    found = parser.get(section, key).strip()
    return found


def pip_default_index() -> str:
    """The index the installed pip uses when nothing is configured."""
    try:
        from pip._internal.models.index import PyPI
    except Exception as exc:  # pip missing or its internals moved
        raise ConfigError(
            "Cannot tell which package index to use: pip is not importable and no index is "
            "configured. Set packages.index_url in config.toml or PIP_INDEX_URL.",
            setting="packages.index_url",
        ) from exc
    return str(PyPI.simple_url)


def resolve_index_url(configured: str | None = None, env: Mapping[str, str] | None = None) -> str:
    url = configured or pip_configured_index(env) or pip_default_index()
    return url.rstrip("/") + "/"


@dataclass(frozen=True)
class ProjectFiles:
    """What the simple API says about one project."""

    name: str
    versions: tuple[str, ...]
    files: tuple[JSONObject, ...] = ()  # each as the index lists it: filename, url, hashes, yanked...

    def files_for(self, version: str) -> list[JSONObject]:
        return [f for f in self.files if _file_version(str(f.get("filename", "")), self.name) == version]


@dataclass(frozen=True)
class ProjectInfo:
    """The JSON metadata of one project (its latest release)."""

    name: str
    version: str
    summary: str
    description: str = ""
    description_content_type: str = ""
    home_page: str = ""
    project_urls: dict[str, str] = field(default_factory=dict)
    requires_python: str = ""
    keywords: str = ""

    def to_dict(self) -> JSONObject:
        return {
            "name": self.name,
            "version": self.version,
            "summary": self.summary,
            "home_page": self.home_page,
            "project_urls": self.project_urls,
            "requires_python": self.requires_python,
            "keywords": self.keywords,
        }


def _link(raw: Any) -> str:
    # Old metadata says "UNKNOWN" (or other filler) where it has no URL.
    text = str(raw or "").strip()
    return text if "://" in text else ""


def _keywords(raw: Any) -> str:
    # Older metadata has a string, newer tooling sometimes a list.
    if isinstance(raw, (list, tuple)):
        return ", ".join(str(k) for k in raw)
    return str(raw or "")


def _file_version(filename: str, project: str) -> str | None:
    stem = filename
    for suffix in (".whl", ".tar.gz", ".zip", ".tar.bz2", ".tgz"):
        if stem.endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    prefix = normalize_name(project).replace("-", "_")
    parts = stem.split("-")
    # Both wheels and sdists start with the name (possibly with - or _) then the version.
    for i in range(1, len(parts)):
        if normalize_name("-".join(parts[:i])).replace("-", "_") == prefix:
            return parts[i]
    return None


class PackageIndex:
    """A small, cached client for one package index."""

    def __init__(
        self,
        url: str | None = None,
        *,
        cache_dir: Path | None = None,
        timeout_s: float = 20.0,
        client: httpx.Client | None = None,
    ) -> None:
        self.simple_url = resolve_index_url(url)
        self.cache_dir = cache_dir
        # A client handed in belongs to the caller: close() leaves it open.
        self._owns_client = client is None
        self._client = client or httpx.Client(timeout=timeout_s, follow_redirects=True)
        self._projects: dict[str, ProjectFiles | None] = {}

    @staticmethod
    def base_url_of(url: str | None) -> str:
        """The root of the index at ``url`` (its simple API without ``/simple``), no slash."""
        base = resolve_index_url(url).rstrip("/")
        if base.endswith("/simple"):
            base = base[: -len("/simple")]
        return base

    @property
    def base_url(self) -> str:
        """This index's root: the simple API's URL without its ``/simple`` part."""
        return self.base_url_of(self.simple_url)

    @property
    def json_api_url(self) -> str:
        """Where per-project JSON metadata lives, next to the simple API."""
        return self.base_url + "/pypi/"

    def project_page_url(self, name: str, version: str | None = None) -> str:
        """The human-facing project page (``/project/NAME/`` next to the simple API)."""
        url = f"{self.base_url}/project/{normalize_name(name)}/"
        return url + f"{version}/" if version else url

    def close(self) -> None:
        if self._owns_client:
            self._client.close()

    # -- the simple API ----------------------------------------------------------------

    def project(self, name: str) -> ProjectFiles | None:
        """The project's files, or None when the index has no such project."""
        key = normalize_name(name)
        if key in self._projects:
            return self._projects[key]
        response = self._client.get(self.simple_url + key + "/", headers={"Accept": _ACCEPT})
        if response.status_code == 404:
            self._projects[key] = None
            return None
        response.raise_for_status()
        files = self._parse_project(key, response)
        self._projects[key] = files
        return files

    def exists(self, name: str) -> bool:
        return self.project(name) is not None

    @staticmethod
    def _parse_project(key: str, response: httpx.Response) -> ProjectFiles:
        if response.headers.get("content-type", "").startswith(SIMPLE_JSON):
            data = response.json()
            files = tuple(f for f in data.get("files", []) if isinstance(f, dict))
            versions = tuple(str(v) for v in data.get("versions", []))
            if not versions:
                found = {_file_version(str(f.get("filename", "")), key) for f in files}
                versions = tuple(sorted(v for v in found if v))
            return ProjectFiles(name=str(data.get("name", key)), versions=versions, files=files)
        parsed: list[JSONObject] = []
        for href, text in _ANCHOR.findall(response.text):
            url, _, fragment = href.partition("#")
            hashes = dict([fragment.split("=", 1)]) if "=" in fragment else {}
            parsed.append({"filename": text.strip(), "url": url, "hashes": hashes})
        found = {_file_version(str(f["filename"]), key) for f in parsed}
        return ProjectFiles(name=key, versions=tuple(sorted(v for v in found if v)), files=tuple(parsed))

    # -- JSON metadata -----------------------------------------------------------------

    def info(self, name: str, version: str | None = None) -> ProjectInfo | None:
        """Release metadata (the latest, or ``version``), or None when the index has none."""
        path = normalize_name(name) + (f"/{version}" if version else "")
        response = self._client.get(self.json_api_url + path + "/json")
        if response.status_code == 404:
            return None
        response.raise_for_status()
        try:
            data = response.json()
        except ValueError as exc:
            raise PackageError(f"The index sent metadata for {name!r} that is not JSON.") from exc
        info = data.get("info") if isinstance(data, dict) else None
        if not isinstance(info, dict):
            raise PackageError(f"The index sent metadata for {name!r} without an 'info' table.")
        return ProjectInfo(
            name=str(info.get("name") or name),
            version=str(info.get("version") or ""),
            summary=str(info.get("summary") or ""),
            description=str(info.get("description") or ""),
            description_content_type=str(info.get("description_content_type") or ""),
            home_page=_link(info.get("home_page")),
            project_urls={str(k): _link(v) for k, v in (info.get("project_urls") or {}).items() if _link(v)},
            requires_python=str(info.get("requires_python") or ""),
            keywords=_keywords(info.get("keywords")),
        )

    # -- the full listing --------------------------------------------------------------

    def project_names(self, *, max_age_s: float = LISTING_TTL_S) -> list[str]:
        """Every project name on the index, cached on disk for ``max_age_s``."""
        cache = self._listing_cache()
        if cache and cache.exists() and time.time() - cache.stat().st_mtime < max_age_s:
            try:
                return json.loads(cache.read_text("utf-8"))["names"]  # type: ignore[no-any-return]
            except (OSError, ValueError, KeyError):
                pass  # a damaged cache is simply refetched
        names = self._fetch_listing()
        if cache:
            cache.parent.mkdir(parents=True, exist_ok=True)
            tmp = cache.with_suffix(f".tmp{os.getpid()}")
            tmp.write_text(json.dumps({"index": self.simple_url, "names": names}), "utf-8")
            os.replace(tmp, cache)
        return names

    def _listing_cache(self) -> Path | None:
        if self.cache_dir is None:
            return None
        slug = re.sub(r"[^A-Za-z0-9]+", "_", self.simple_url).strip("_")[-80:]
        return self.cache_dir / f"index-listing-{slug}.json"

    def _fetch_listing(self) -> list[str]:
        response = self._client.get(self.simple_url, headers={"Accept": _ACCEPT}, timeout=120.0)
        response.raise_for_status()
        if response.headers.get("content-type", "").startswith(SIMPLE_JSON):
            return [str(p["name"]) for p in response.json().get("projects", []) if "name" in p]
        return [text.strip() for _, text in _ANCHOR.findall(response.text)]
