"""The ``/etc`` a sandboxed run sees: an allowlist, never the host's whole ``/etc``.

The host's ``/etc`` holds credentials (``pip.conf`` and ``.npmrc`` tokens, ``shadow``,
machine ids), so the sandbox gets only what name resolution, TLS, time zones, the
dynamic loader and user lookups need. Binding each file separately costs a mount per
file on every run, so small files are copied once per process into a private snapshot
directory that is bound as ``/etc`` in one mount; the snapshot is rebuilt when a source
file changes (``resolv.conf`` does, on DHCP renewals). Directories of many files
(certificates, alternatives) are bound on top of it read only.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import tempfile
import threading
from pathlib import Path

# Copied into the snapshot (symlinks are followed, so /etc/localtime brings its zone).
FILES = (
    "resolv.conf",
    "hosts",
    "host.conf",
    "nsswitch.conf",
    "gai.conf",
    "services",
    "protocols",
    "networks",
    "passwd",
    "group",
    "localtime",
    "timezone",
    "ld.so.cache",
    "ld.so.conf",
    "ssl/openssl.cnf",
    "mime.types",
    "os-release",
)
# Bound read only on top of the snapshot.
DIRS = (
    "ssl/certs",
    "ca-certificates",
    "pki/tls/certs",
    "pki/ca-trust",
    "crypto-policies",
    "alternatives",
    "fonts",
    "ld.so.conf.d",
)
_MAX_FILE_BYTES = 4 * 1024 * 1024


class EtcSnapshot:
    """A private copy of the allowlisted ``/etc`` files, refreshed when they change."""

    def __init__(self, source: Path = Path("/etc")) -> None:
        self.source = source
        self.path: Path | None = None
        self._stamp: tuple[tuple[str, int, int], ...] | None = None
        # Older snapshots may still be in use by a run starting in another thread, so
        # they are only removed with the process.
        self._retired: list[Path] = []
        self._lock = threading.Lock()

    def _current_stamp(self) -> tuple[tuple[str, int, int], ...]:
        stamp = []
        for name in FILES:
            try:
                info = (self.source / name).stat()
            except OSError:
                continue
            stamp.append((name, info.st_mtime_ns, info.st_size))
        return tuple(stamp)

    def directory(self) -> Path:
        """The snapshot directory, rebuilt first if any source file changed."""
        stamp = self._current_stamp()
        with self._lock:
            if self.path is None or stamp != self._stamp or not self.path.is_dir():
                self._rebuild()
                self._stamp = stamp
            assert self.path is not None
            return self.path

    def _rebuild(self) -> None:
        fresh = Path(tempfile.mkdtemp(prefix="toolsmith-etc-"))
        os.chmod(fresh, 0o755)
        for name in FILES:
            source = self.source / name
            with contextlib.suppress(OSError):
                if source.is_file() and source.stat().st_size <= _MAX_FILE_BYTES:
                    target = fresh / name
                    target.parent.mkdir(parents=True, exist_ok=True)
                    shutil.copyfile(source, target)
                    os.chmod(target, 0o644)
        for name in DIRS:
            if (self.source / name).is_dir():
                (fresh / name).mkdir(parents=True, exist_ok=True)
        if self.path is not None:
            self._retired.append(self.path)
        self.path = fresh

    def bind_args(self) -> list[str]:
        """bwrap arguments mounting the snapshot at ``/etc`` plus the directory binds."""
        args = ["--ro-bind", str(self.directory()), "/etc"]
        for name in DIRS:
            path = self.source / name
            if path.is_dir():
                args += ["--ro-bind", str(path), f"/etc/{name}"]
        return args

    def remove(self) -> None:
        for old in [*self._retired, *([self.path] if self.path else [])]:
            shutil.rmtree(old, ignore_errors=True)
        self._retired.clear()
        self.path = None


_snapshot: EtcSnapshot | None = None


def snapshot() -> EtcSnapshot:
    """The process-wide snapshot, removed when the process exits."""
    global _snapshot
    if _snapshot is None:
        _snapshot = EtcSnapshot()
        atexit.register(_snapshot.remove)
    return _snapshot
