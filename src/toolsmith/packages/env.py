"""The package environment of one tool library: checked installs, recorded pins, sync.

Each library has one virtual environment under ``settings.envs_dir``, created and
filled by ``uv`` (``python -m venv`` plus pip only where uv is missing). Installs take
wheels only unless ``packages.only_binary`` is false, always name the index explicitly
(``--index-url`` from :func:`toolsmith.packages.index.resolve_index_url`), ignore every installer
config file, keep their cache in ``settings.cache_dir`` and run from a scrubbed
environment, so no API key reaches a package's code; where bwrap works they also run
inside it, seeing only the environment and cache directories (a source build runs the
package's own code), and always in their own cgroups (processes, memory, CPU) with their
output read under a byte cap. They never happen inside a run of model-written code; while such
code runs, the environment is mounted read only. A distribution that brings a startup
hook (a ``.pth`` file with code, a ``sitecustomize`` module; see
:mod:`toolsmith.packages.hooks`) is removed again and refused unless ``packages.allow``
names it: its code would otherwise run in every later run and inside later installs.

After an install the full dependency closure of what was asked for is read from the
installed metadata (no code runs for that) and recorded as :class:`Requirement` pins:
name, version and the sha256 of the file the index lists for that version and this
platform (the wheel an installer picks by ``packaging.tags.sys_tags()`` order).
:meth:`PackageEnv.sync` rebuilds the environment from such pins on a fresh machine,
with ``--require-hashes`` when every hash is known.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.metadata
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement
from packaging.requirements import Requirement as Pep508
from packaging.tags import Tag, sys_tags
from packaging.utils import InvalidSdistFilename, InvalidWheelFilename, parse_sdist_filename, parse_wheel_filename
from packaging.version import InvalidVersion, Version

from toolsmith.calls import JSONObject, JSONValue
from toolsmith.errors import InstallError, PackageRefused
from toolsmith.isolation import bwrap
from toolsmith.isolation.backend import base_python
from toolsmith.isolation.launch import LaunchPlan, run_plan
from toolsmith.limits import Limits
from toolsmith.packages import hooks
from toolsmith.packages.index import PackageIndex, normalize_name, resolve_index_url
from toolsmith.packages.policy import Request, check_requests, parse_request, parse_requests
from toolsmith.packages.requirement import Requirement

if TYPE_CHECKING:
    from toolsmith.config import Settings

INSTALL_TIMEOUT_S = 900.0
# Room for an installer (and a source build) while it cannot take the machine.
INSTALL_LIMITS = Limits(timeout_s=INSTALL_TIMEOUT_S, memory_mb=8192, max_procs=1024, cpus=4.0, output_bytes=1024 * 1024)
# Paths and proxies an installer needs to reach the index; nothing else of ours passes.
_PASS_THROUGH = (
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "TZ",
)


def env_name() -> str:
    """One environment per interpreter version, so an upgrade never mixes ABIs."""
    return f"{sys.implementation.name}{sys.version_info.major}{sys.version_info.minor}"


def find_uv() -> str | None:
    """The uv binary shipped by the ``uv`` package, or one on PATH."""
    try:
        from uv import find_uv_bin

        return str(find_uv_bin())
    except (ImportError, FileNotFoundError):
        return shutil.which("uv")


def scrubbed_env(home: Path, host: dict[str, str] | None = None) -> dict[str, str]:
    """The installer's whole environment: a private HOME and the network plumbing."""
    host = dict(os.environ) if host is None else host
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(home), "LANG": "C.UTF-8"}
    for name in _PASS_THROUGH:
        if host.get(name):
            env[name] = host[name]
    return env


@dataclass(frozen=True)
class SyncReport:
    """What :meth:`PackageEnv.sync` found and did."""

    env: Path
    requested: tuple[Requirement, ...]
    already: tuple[Requirement, ...] = ()
    installed: tuple[Requirement, ...] = ()
    hash_checked: bool = False
    notes: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return bool(self.installed)

    def to_dict(self) -> JSONObject:
        return {
            "env": str(self.env),
            "requested": [r.to_dict() for r in self.requested],
            "already": [r.pin for r in self.already],
            "installed": [r.pin for r in self.installed],
            "hash_checked": self.hash_checked,
            "notes": list(self.notes),
        }


@dataclass
class PackageEnv:
    """The virtual environment of one library and everything that writes to it."""

    settings: Settings
    index: PackageIndex | None = None
    name: str = field(default_factory=env_name)
    installer: str = "auto"  # auto | uv | pip
    isolate: bool | None = None  # run installers under bwrap; None: wherever bwrap works

    def __post_init__(self) -> None:
        if self.installer not in ("auto", "uv", "pip"):
            raise ValueError("installer must be auto, uv or pip")
        self._uv = find_uv() if self.installer in ("auto", "uv") else None
        if self.installer == "uv" and self._uv is None:
            raise InstallError("uv is not available; install the 'uv' package or use installer='pip'")

    # -- where things are -------------------------------------------------------------

    @property
    def path(self) -> Path:
        return self.settings.envs_dir / self.name

    @property
    def python(self) -> Path:
        return self.path / "bin" / "python"

    @property
    def site_packages(self) -> Path:
        return self.path / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"

    @property
    def index_url(self) -> str:
        return self.index.simple_url if self.index is not None else resolve_index_url(self.settings.index_url)

    @property
    def tool(self) -> str:
        return "uv" if self._uv else "pip"

    def exists(self) -> bool:
        return (self.path / "pyvenv.cfg").is_file() and self.python.exists()

    def _index(self) -> PackageIndex:
        if self.index is None:
            self.index = PackageIndex(self.settings.index_url, cache_dir=self.settings.cache_dir)
        return self.index

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        self.settings.envs_dir.mkdir(parents=True, exist_ok=True)
        with open(self.settings.envs_dir / f".{self.name}.lock", "w") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    # -- creating and filling ---------------------------------------------------------

    def ensure(self) -> Path:
        """Create the environment if it does not exist yet; return its path."""
        with self._locked():
            self._ensure()
        return self.path

    def _ensure(self) -> None:
        if self.exists():
            return
        if self.path.exists():
            shutil.rmtree(self.path)  # a half-made environment from an interrupted run
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self._uv:
            argv = [
                self._uv,
                "venv",
                "--no-config",
                "--quiet",
                "--python",
                str(base_python()),
                "--cache-dir",
                str(self._cache("uv")),
                str(self.path),
            ]
        else:
            argv = [str(base_python()), "-I", "-m", "venv", str(self.path)]
        self._run(argv, what="Creating the package environment")

    def install(self, pip_install: JSONValue, *, check: bool = True) -> tuple[Requirement, ...]:
        """Check, install and pin what a model asked for; return the closure's pins.

        Raises :class:`PackageRefused` before anything runs when a request is refused,
        :class:`InstallError` when the installer fails.
        """
        if check:
            requests = check_requests(pip_install, index=self._index(), allow=self.settings.allow_packages)
        else:
            requests = parse_requests(pip_install)
        if not requests:
            return ()
        with self._locked():
            self._ensure()
            self._drop_hooks(refuse=False)
            self._run(self._install_argv([str(r) for r in requests]), what=f"Installing {_names(requests)}")
            self._drop_hooks(refuse=True)
        return self.pins(requests)

    def _drop_hooks(self, *, refuse: bool) -> None:
        """Remove startup hooks nobody accepted, and the distributions that brought them.

        Before an installer runs (``refuse=False``) this clears hooks an older toolsmith
        let in, since the installer starts the environment's interpreter; after it
        (``refuse=True``) a new hook refuses the install. The hook files go first, so
        the uninstaller's own start of the interpreter runs none of them.
        """
        found = hooks.foreign(self.site_packages, self.settings.allow_packages)
        if not found:
            return
        hooks.remove(self.site_packages, found)
        owners = sorted({h.owner for h in found if h.owner})
        if owners:
            self._run(self._uninstall_argv(owners), what=f"Removing {', '.join(owners)}")
        if refuse:
            files = ", ".join(h.name for h in found)
            raise PackageRefused(
                ", ".join(owners) or files,
                f"it installs a start-up hook ({files}) whose code would run at every start of the environment's "
                f"interpreter, in every tool's runs and inside later installs; it was removed again. Pick another "
                f"package, or a user can accept it by adding it to packages.allow in config.toml",
            )

    def _uninstall_argv(self, names: list[str]) -> list[str]:
        if self._uv:
            return [
                self._uv,
                "pip",
                "uninstall",
                "--no-config",
                "--python",
                str(self.python),
                "--no-progress",
                "--color",
                "never",
                *names,
            ]
        return [
            str(self.python),
            "-I",
            "-m",
            "pip",
            "uninstall",
            "--isolated",
            "--yes",
            "--disable-pip-version-check",
            *names,
        ]

    def _install_argv(self, requirements: list[str], *, require_hashes: bool = False) -> list[str]:
        index = ["--index-url", self.index_url]
        binary = ["--only-binary", ":all:"] if self.settings.only_binary else []
        hashes = ["--require-hashes"] if require_hashes else []
        if self._uv:
            # Env and cache are separate mounts under bwrap, where hard links cannot cross.
            link = ["--link-mode", "copy"] if self.isolated else []
            return [
                self._uv,
                "pip",
                "install",
                "--no-config",
                "--python",
                str(self.python),
                *index,
                "--cache-dir",
                str(self._cache("uv")),
                "--no-progress",
                "--color",
                "never",
                *link,
                *binary,
                *hashes,
                *requirements,
            ]
        # --isolated drops pip's config and PIP_* variables; a custom CA bundle must stay.
        bundle = next(
            (os.environ[v] for v in ("PIP_CERT", "SSL_CERT_FILE", "REQUESTS_CA_BUNDLE") if os.environ.get(v)), None
        )
        cert = ["--cert", bundle] if bundle else []
        return [
            str(self.python),
            "-I",
            "-m",
            "pip",
            "install",
            "--isolated",
            "--no-input",
            "--disable-pip-version-check",
            *index,
            *cert,
            "--cache-dir",
            str(self._cache("pip")),
            *binary,
            *hashes,
            *requirements,
        ]

    def _cache(self, tool: str) -> Path:
        path = self.settings.cache_dir / tool
        path.mkdir(parents=True, exist_ok=True)
        return path

    @property
    def isolated(self) -> bool:
        """Whether installers run under bwrap (auto: wherever the bwrap backend works)."""
        if self.isolate is None:
            self.isolate = self.settings.sandbox_backend != "process" and bwrap.choose(self.settings.bwrap_path)[1]
        return self.isolate

    def _run(self, argv: list[str], *, what: str) -> None:
        home = self._cache("home")
        env = scrubbed_env(home)
        env["PIP_CONFIG_FILE"] = os.devnull
        # A source build runs a package's code: it gets a process, memory and CPU cap, and
        # its output is read with a byte cap like any sandboxed run's.
        if self.isolated:
            readable = [Path(self._uv).parent] if self._uv else []
            # Only this environment and this installer's cache: a source build must not reach
            # the other environments or toolsmith's own caches (the index listing).
            plan = bwrap.installer_plan(
                argv,
                env=env,
                writable=[home, self.path, self._cache(self.tool)],
                readable=readable,
                limits=INSTALL_LIMITS,
                cwd=home,
                bwrap=bwrap.find_bwrap(self.settings.bwrap_path),  # the one sandbox.bwrap_path names
                before_exec=_installer_umask,
            )
        else:
            plan = LaunchPlan(
                command=tuple(argv),
                cwd=home,
                limits=INSTALL_LIMITS,
                env=env,
                rlimits=False,
                before_exec=_installer_umask,
            )
        try:
            done, _ = run_plan(plan, backend="installer", network=True)
        except (OSError, subprocess.SubprocessError) as exc:
            raise InstallError(f"{what} failed: the installer could not start ({exc}).") from exc
        if done.timed_out:
            raise InstallError(f"{what} did not finish within {INSTALL_TIMEOUT_S:.0f} s.")
        if done.exit_code != 0:
            lines = [ln for ln in done.stderr.strip().splitlines() if ln.strip()][-6:]
            raise InstallError(
                f"{what} failed: {' | '.join(lines) or 'no output'}{_wheel_hint(done.stderr)}",
                stderr=done.stderr,
                exit_code=done.exit_code,
            )

    # -- what is installed ------------------------------------------------------------

    def _distributions(self) -> dict[str, importlib.metadata.Distribution]:
        if not self.site_packages.is_dir():
            return {}
        found: dict[str, importlib.metadata.Distribution] = {}
        for dist in importlib.metadata.distributions(path=[str(self.site_packages)]):
            name = dist.metadata["Name"]
            if name:
                found.setdefault(normalize_name(name), dist)
        return found

    def installed(self) -> dict[str, str]:
        """Normalised name -> version of every distribution in the environment."""
        return {key: dist.version for key, dist in self._distributions().items()}

    def closure(self, requests: Iterable[Request]) -> list[tuple[str, str]]:
        """(name, version) of the requested distributions and all their dependencies."""
        dists = self._distributions()
        todo = [(r.key, set(r.extras)) for r in requests]
        seen: dict[str, set[str]] = {}
        while todo:
            key, extras = todo.pop()
            dist = dists.get(key)
            if dist is None or (key in seen and extras <= seen[key]):
                continue
            seen[key] = seen.get(key, set()) | extras
            for line in dist.requires or []:
                dep = _dependency(line, seen[key])
                if dep is not None:
                    todo.append(dep)
        return sorted((dists[k].metadata["Name"], dists[k].version) for k in seen)

    def pins(self, requests: Iterable[Request]) -> tuple[Requirement, ...]:
        """The closure of ``requests`` as pins with the index's sha256 for this platform."""
        closure = self.closure(requests)
        return tuple(Requirement(name, version, self.file_hash(name, version)) for name, version in closure)

    def file_hash(self, name: str, version: str) -> str | None:
        """sha256 the index lists for the file this machine installs for ``name==version``."""
        chosen = self._best_file(name, version)
        return chosen[1] if chosen else None

    def _files(self, name: str, version: str) -> list[JSONObject]:
        try:
            project = self._index().project(name)
        except Exception:  # a pin without a hash beats a failed install
            return []
        if project is None:
            return []
        wanted = _version(version)
        return [f for f in project.files if _file_version(str(f.get("filename", ""))) == wanted]

    def _best_file(self, name: str, version: str) -> tuple[str, str] | None:
        """(filename, sha256) of the wheel ``sys_tags()`` prefers, else the sdist."""
        files = [f for f in self._files(name, version) if not f.get("yanked") and _sha256(f)]
        by_tag: dict[Tag, JSONObject] = {}
        sdist: JSONObject | None = None
        for entry in files:
            filename = str(entry.get("filename", ""))
            if not filename.endswith(".whl"):
                sdist = sdist or entry
                continue
            try:
                tags = parse_wheel_filename(filename)[3]
            except InvalidWheelFilename:
                continue
            for tag in tags:
                by_tag.setdefault(tag, entry)
        for tag in sys_tags():
            if tag in by_tag:
                return str(by_tag[tag]["filename"]), str(_sha256(by_tag[tag]))
        if sdist is not None:
            return str(sdist["filename"]), str(_sha256(sdist))
        return None

    # -- rebuilding from pins ---------------------------------------------------------

    def missing(self, requirements: Iterable[Requirement]) -> list[Requirement]:
        installed = self.installed()
        return [r for r in requirements if _version(installed.get(normalize_name(r.name), "")) != _version(r.version)]

    def sync(self, requirements: Sequence[Requirement]) -> SyncReport:
        """Make the environment hold exactly these pins (adding what is missing)."""
        wanted = tuple(_validated(r) for r in requirements)
        missing = self.missing(wanted)
        if not missing:
            return SyncReport(env=self.path, requested=wanted, already=wanted)
        notes: list[str] = []
        hashed = all(r.sha256 for r in wanted)
        lines = [self._hash_line(r, notes) if hashed else r.pin for r in wanted]
        if not hashed:
            notes.append("some pins have no recorded sha256, so the install is not hash-checked")
        with self._locked(), tempfile.TemporaryDirectory(prefix="sync-", dir=self._cache("home")) as tmp:
            self._ensure()
            self._drop_hooks(refuse=False)
            spec = Path(tmp) / "requirements.txt"
            spec.write_text("\n".join(lines) + "\n", encoding="utf-8")
            self._run(self._install_argv(["-r", str(spec)], require_hashes=hashed), what=f"Syncing {_names(missing)}")
            self._drop_hooks(refuse=True)
        still = self.missing(wanted)
        if still:
            raise InstallError(f"Syncing left {_names(still)} at other versions than recorded.")
        already = tuple(r for r in wanted if r not in missing)
        return SyncReport(
            env=self.path,
            requested=wanted,
            already=already,
            installed=tuple(missing),
            hash_checked=hashed,
            notes=tuple(notes),
        )

    def _hash_line(self, requirement: Requirement, notes: list[str]) -> str:
        """``name==version --hash=...``: the recorded hash, plus this platform's when it differs.

        The recorded hash must be one the index lists for that version; otherwise the
        record or the index has been tampered with and nothing is installed.
        """
        files = self._files(requirement.name, requirement.version)
        listed = {str(_sha256(f)) for f in files}
        hashes = [str(requirement.sha256)]
        if files and requirement.sha256 not in listed:
            raise InstallError(
                f"The recorded sha256 of {requirement.pin} matches no file the package index lists for that "
                f"version; the tool record or the index may have been tampered with, so nothing was installed."
            )
        best = self._best_file(requirement.name, requirement.version)
        if best is not None and best[1] != requirement.sha256:
            hashes.append(best[1])
            notes.append(f"{requirement.pin}: the recorded file is for another platform; also accepting {best[0]}")
        return requirement.pin + "".join(f" --hash=sha256:{h}" for h in hashes)


def _installer_umask() -> None:
    """Pre-exec step: files the installer writes stay world-readable, as runs that are not
    the launcher's uid (a root launcher's, see :mod:`toolsmith.isolation.userns`) read them."""
    os.umask(0o022)


def _names(items: Iterable[object]) -> str:
    return ", ".join(str(getattr(i, "pin", i)) for i in items)


def _version(text: str) -> Version | str:
    try:
        return Version(text)
    except InvalidVersion:
        return text


def _file_version(filename: str) -> Version | None:
    try:
        if filename.endswith(".whl"):
            return parse_wheel_filename(filename)[1]
        return parse_sdist_filename(filename)[1]
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None


def _dependency(line: str, extras: set[str]) -> tuple[str, set[str]] | None:
    """The (name, extras) a ``Requires-Dist`` line adds for a dist installed with ``extras``."""
    try:
        req = Pep508(line)
    except InvalidRequirement:
        return None
    if req.marker is not None and not _marker_holds(req.marker, extras):
        return None
    return normalize_name(req.name), set(req.extras)


def _marker_holds(marker: Marker, extras: set[str]) -> bool:
    return any(marker.evaluate({"extra": extra}) for extra in (extras or {""}) | {""})


def _validated(requirement: Requirement) -> Requirement:
    """Stored pins are data from disk: check them like a model's request before use."""
    request = parse_request(f"{requirement.name}=={requirement.version}")
    sha = requirement.sha256
    if sha is not None and (len(sha) != 64 or any(c not in "0123456789abcdef" for c in sha.lower())):
        raise PackageRefused(requirement.pin, "its recorded sha256 is not a hex digest")
    return Requirement(name=request.name, version=requirement.version, sha256=sha.lower() if sha else None)


def _wheel_hint(stderr: str) -> str:
    """Say which setting allows source builds when only wheels were allowed and none fit."""
    text = stderr.lower()
    if "no usable wheels" in text or "building from source is disabled" in text or "only-binary" in text:
        return (
            " | No wheel fits this machine and toolsmith installs wheels only: pick another package, "
            "or set packages.only_binary = false in config.toml to allow source builds (they run "
            "inside the sandbox)."
        )
    return ""


def _sha256(entry: JSONObject) -> str | None:
    """The sha256 an index lists for one file (its ``hashes`` table), if any."""
    hashes = entry.get("hashes")
    digest = hashes.get("sha256") if isinstance(hashes, Mapping) else None
    return digest if isinstance(digest, str) and digest else None
