"""Which tool library each eval sample runs against (the task argument ``library=``).

* ``shared``: one library for the whole eval, so later samples reuse what earlier ones
  built (and epoch 2 starts with what epoch 1 left). ``library_url`` may name a
  PostgreSQL library that several eval processes share.
* ``per_epoch``: a fresh library for each epoch, so epochs are true repeats of the same
  learning curve (what the arms report uses for the growing arm).
* ``snapshot``: a read-only snapshot of an existing library (a bundle folder, an SQLite
  file or a library URL). It is copied once into the eval's folder, and each sample gets
  its own copy of that, so every sample sees the same frozen library and the source is
  never opened for writing.

An eval never touches the user's own library: without ``library_url`` its libraries
live in the eval's working folder. Review is ``auto`` there, since a tool waiting for a
person could not be reused by the next sample. Each library is prepared once per
process (distractor tools seeded, the snapshot copied) under a lock, because samples
ask for it from several worker threads at once.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from toolsmith.config import Settings
from toolsmith.errors import ConfigError, LibraryError
from toolsmith.library import ToolLibrary, import_tools, user_actor
from toolsmith.library import location as locations
from toolsmith.library.transfer import copy_library
from toolsmith.sandbox import Sandbox

MODES = ("shared", "per_epoch", "snapshot")
SETTING = "the task argument library (-T library=...)"


@dataclass(frozen=True)
class LibraryPlan:
    """The task arguments that place the libraries, checked."""

    mode: str
    workdir: Path
    url: str | None = None  # shared mode only: a library URL instead of the folder's SQLite file
    snapshot: str | None = None
    distractors: int = 0

    @classmethod
    def make(
        cls,
        library: str,
        *,
        workdir: str | Path | None,
        library_url: str | None,
        snapshot: str | None,
        distractors: int,
        home: Path,
    ) -> LibraryPlan:
        mode = "snapshot" if snapshot and library == "shared" else library
        if mode not in MODES:
            raise ConfigError(f"library must be one of {', '.join(MODES)}; got {library!r}.", setting=SETTING)
        if mode == "snapshot" and not snapshot:
            raise ConfigError("library=snapshot needs snapshot=PATH_OR_URL (bundle, .db file, URL).", setting=SETTING)
        if library_url and mode != "shared":
            raise ConfigError("library_url is for library=shared only.", setting=SETTING)
        if distractors < 0:
            raise ConfigError(f"distractors must be 0 or more; got {distractors}.", setting="distractors")
        if library_url:
            locations.parse(library_url, Path("library.db"))  # a bad URL fails here, before any sample
        folder = Path(workdir) if workdir else new_workdir(home)
        return cls(mode, folder.expanduser().resolve(), library_url or None, snapshot or None, distractors)


def new_workdir(home: Path) -> Path:
    """A new folder for one eval's libraries and trajectories, under the toolsmith home."""
    return home / "evals" / f"{time.strftime('%Y%m%dT%H%M%S')}-{uuid.uuid4().hex[:6]}"


class Libraries:
    """Hands each sample the settings of its library, preparing each library once."""

    def __init__(self, plan: LibraryPlan, base: Settings) -> None:
        self.plan = plan
        self.base = replace(base, review="auto", library_url=None)
        self._lock = threading.Lock()
        self._ready: dict[str, threading.Lock] = {}
        self._done: set[str] = set()

    def settings_for(self, epoch: int, sample: str) -> Settings:
        """The settings of the library sample ``sample`` of ``epoch`` runs against (ready to open)."""
        plan = self.plan
        if plan.mode == "shared":
            settings = replace(self.base, home=plan.workdir, library_url=plan.url)
            self._once("shared", lambda: self._seed(settings))
            return settings
        if plan.mode == "per_epoch":
            settings = replace(self.base, home=plan.workdir / f"epoch-{epoch}")
            self._once(f"epoch-{epoch}", lambda: self._seed(settings))
            return settings
        frozen = replace(self.base, home=plan.workdir / "snapshot")
        self._once("snapshot", lambda: self._freeze(frozen))
        return self._sample_copy(frozen, f"e{epoch}-{_safe(sample)}")

    def _once(self, key: str, prepare: Callable[[], None]) -> None:
        with self._lock:
            lock = self._ready.setdefault(key, threading.Lock())
        with lock:
            if key not in self._done:
                prepare()
                self._done.add(key)

    def _seed(self, settings: Settings) -> None:
        if self.plan.distractors <= 0:
            return
        from toolsmith.evals.distractors import seed_library

        library = ToolLibrary.open(settings)
        sandbox = Sandbox(settings)
        try:
            seed_library(library, self.plan.distractors, sandbox=sandbox)
        finally:
            sandbox.close()
            library.close()

    def _freeze(self, frozen: Settings) -> None:
        source = self.plan.snapshot or ""
        frozen.home.mkdir(parents=True, exist_ok=True)
        if frozen.db_path.exists():
            raise LibraryError(f"{frozen.db_path} already exists: give each snapshot eval its own workdir.")
        fill_from_snapshot(source, frozen)
        self._seed(frozen)

    def _sample_copy(self, frozen: Settings, name: str) -> Settings:
        settings = replace(frozen, home=self.plan.workdir / "samples" / name)
        settings.home.mkdir(parents=True, exist_ok=True)
        if settings.db_path.exists():  # a retried sample starts again from the snapshot
            for suffix in ("", "-wal", "-shm"):
                Path(f"{settings.db_path}{suffix}").unlink(missing_ok=True)
        _backup(frozen.db_path, settings.db_path)  # our own copy: its WAL files may appear
        envs = settings.envs_dir
        if not envs.exists():  # installed packages are shared; only the library is per sample
            frozen.envs_dir.mkdir(parents=True, exist_ok=True)
            os.symlink(frozen.envs_dir, envs, target_is_directory=True)
        return settings


def fill_from_snapshot(source: str, target: Settings) -> None:
    """Copy the snapshot ``source`` into the (new) library of ``target``, writing nothing to it.

    A folder is a bundle (``toolsmith tools export``; every tool goes through the gate
    again); an SQLite file is read through a read-only connection; a ``postgresql://``
    URL is read in one snapshot transaction.
    """
    if "://" in source and not source.startswith("sqlite:"):
        _copy_url(source, target)
        return
    path = Path(locations.parse(source, Path(source)).path or source) if source.startswith("sqlite:") else Path(source)
    path = path.expanduser()
    if path.is_dir():
        _import_bundle(path, target)
    elif path.is_file():
        _sqlite_copy(path, target.db_path)
    else:
        raise ConfigError(f"snapshot {source!r} is no bundle folder, SQLite file or URL.", setting="snapshot")


def _import_bundle(folder: Path, target: Settings) -> None:
    from toolsmith.gate.core import Gate

    library = ToolLibrary.open(target)
    sandbox = Sandbox(target)
    try:
        report = import_tools(library, folder, validate=Gate(runner=sandbox).check, actor=user_actor())
    finally:
        sandbox.close()
        library.close()
    if report.refused:
        names = ", ".join(f"{o.name} ({o.reason})" for o in report.refused)
        raise LibraryError(f"snapshot bundle {folder}: the gate refused {names}; fix the bundle or drop those tools.")


def _copy_url(url: str, target: Settings) -> None:
    source = ToolLibrary(url)
    try:
        library = ToolLibrary.open(target)
        try:
            copy_library(source, library)
        finally:
            library.close()
    finally:
        source.close()


def _sqlite_copy(source: Path, target: Path) -> None:
    """A consistent copy of an SQLite library that writes nothing next to ``source``.

    Even a read-only connection to a WAL-mode file creates its ``-wal`` and ``-shm``
    files, so the file (and its WAL, if one is there) is first copied byte for byte into
    a scratch folder, and SQLite opens only that copy. Snapshot a library no run is
    writing at that moment (or name it by URL).
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="snapshot-", dir=target.parent) as scratch:
        raw = Path(scratch) / "library.db"
        try:
            shutil.copyfile(source, raw)
            if Path(f"{source}-wal").is_file():
                shutil.copyfile(f"{source}-wal", f"{raw}-wal")
        except OSError as exc:
            raise LibraryError(f"cannot read the snapshot {source}: {exc.strerror or exc}") from exc
        _backup(raw, target)


def _backup(source: Path, target: Path) -> None:
    try:
        src = sqlite3.connect(source)
        try:
            if src.execute("PRAGMA quick_check").fetchone()[0] != "ok":
                raise LibraryError(f"the snapshot {source} is damaged (quick_check failed).")
            dst = sqlite3.connect(target)
            try:
                src.backup(dst)
                dst.execute("PRAGMA journal_mode=WAL")
            finally:
                dst.close()
        finally:
            src.close()
    except sqlite3.Error as exc:
        raise LibraryError(f"cannot copy the library {source} to {target}: {exc}") from exc


def _safe(text: str) -> str:
    return "".join(c if c.isalnum() or c in "-_." else "_" for c in text)[:80]
