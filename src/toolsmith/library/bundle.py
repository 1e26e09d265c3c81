"""Tool bundles: exporting tools to plain folders and importing them back through the gate.

A bundle is a directory with one folder per tool and a ``manifest.json``::

    bundle/
      manifest.json            # every tool's name, version and hashes (sorted keys)
      manifest.sig             # optional: Ed25519 signature of manifest.json (see signing.py)
      signature.json           # optional: the signer's public key and fingerprint
      days_between/
        tool.py                # the code, byte for byte
        tool.json              # metadata, provenance, gate result, content hash

Everything is human-readable so that a person can review a bundle before importing it.
Importing trusts nothing, in this order: the manifest's signature is checked first (a
bad one refuses the whole bundle before anything is read or written), then every tool's
hashes against the manifest, then the save-time gate runs again; a tool that fails
either of the last two is refused and never written.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, TypeVar

from toolsmith.calls import JSONObject, JSONValue
from toolsmith.errors import BundleError, ToolNotFoundError
from toolsmith.library import signing
from toolsmith.library.models import Provenance, Requirement, Status, ToolSpec, ToolVersion, shown_name
from toolsmith.library.store import ToolLibrary
from toolsmith.library.testcases import case_json, normalise_cases

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

BUNDLE_FORMAT = "toolsmith-bundle"
TOOL_FORMAT = "toolsmith-tool"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
TOOL_JSON = "tool.json"
TOOL_PY = "tool.py"
_MAX_FILE_BYTES = 5_000_000


class Verdict(Protocol):
    """What a validator (the save-time gate) says about one tool."""

    @property
    def ok(self) -> bool: ...

    @property
    def reason(self) -> str | None: ...

    @property
    def parameters(self) -> JSONObject | None: ...

    def to_dict(self) -> JSONObject: ...


Validator = Callable[[ToolSpec], Verdict]
# A bundle's manifest.json as read: each tool's entry (name, version, hashes) by name.
Manifest = dict[str, JSONObject]
T = TypeVar("T")


@dataclass(frozen=True)
class ImportOutcome:
    """What happened to one tool folder: ``imported``, ``unchanged`` or ``refused``."""

    name: str
    outcome: str
    path: str
    version: int | None = None
    reason: str | None = None

    def to_dict(self) -> JSONObject:
        return {
            "name": self.name,
            "outcome": self.outcome,
            "version": self.version,
            "reason": self.reason,
            "path": self.path,
        }


@dataclass
class ImportReport:
    outcomes: list[ImportOutcome] = field(default_factory=list)
    signature: signing.SignatureCheck = field(default_factory=lambda: signing.SignatureCheck(signed=False))

    def _with(self, outcome: str) -> list[ImportOutcome]:
        return [o for o in self.outcomes if o.outcome == outcome]

    @property
    def imported(self) -> list[ImportOutcome]:
        return self._with("imported")

    @property
    def unchanged(self) -> list[ImportOutcome]:
        return self._with("unchanged")

    @property
    def refused(self) -> list[ImportOutcome]:
        return self._with("refused")

    @property
    def ok(self) -> bool:
        return not self.refused

    def to_dict(self) -> JSONObject:
        return {
            "ok": self.ok,
            "imported": len(self.imported),
            "unchanged": len(self.unchanged),
            "refused": len(self.refused),
            "signature": self.signature.to_dict(),
            "tools": [o.to_dict() for o in self.outcomes],
        }


# --- export ----------------------------------------------------------------------------


def export_tools(
    library: ToolLibrary,
    directory: Path,
    names: Iterable[str] | None = None,
    *,
    sign_key: Ed25519PrivateKey | None = None,
) -> list[Path]:
    """Write one folder per tool (its served version, else its newest) and a manifest.

    With ``sign_key`` the manifest is signed (``manifest.sig`` and ``signature.json``);
    without it, a signature left from an earlier export into the same folder is removed,
    since it would no longer match.
    """
    directory = Path(directory)
    wanted = None if names is None else list(dict.fromkeys(names))
    tools = library.list_tools() if wanted is None else [library.get(n) for n in wanted]
    try:
        directory.mkdir(parents=True, exist_ok=True)
        entries = sorted((_export_one(tool, directory / tool.name) for tool in tools), key=lambda e: str(e["name"]))
        manifest: JSONObject = {"format": BUNDLE_FORMAT, "format_version": FORMAT_VERSION, "tools": entries}
        manifest_bytes = _json_bytes(manifest)
        for stale in (signing.SIGNATURE_FILE, signing.SIGNATURE_META):
            (directory / stale).unlink(missing_ok=True)
        _write_atomic(directory / MANIFEST, manifest_bytes)
        if sign_key is not None:
            for name, data in signing.signature_files(manifest_bytes, sign_key).items():
                _write_atomic(directory / name, data)
    except OSError as exc:
        raise BundleError(f"Cannot write the bundle in {directory}: {exc}", path=directory) from exc
    return [directory / tool.name for tool in tools]


def _export_one(tool: ToolVersion, folder: Path) -> JSONObject:
    code = tool.spec.code.encode("utf-8")
    meta: JSONObject = {
        "format": TOOL_FORMAT,
        "format_version": FORMAT_VERSION,
        "name": tool.name,
        "version": tool.version,
        "hash": tool.hash,
        "tool_py_sha256": _sha256(code),
        "description": tool.spec.description,
        "parameters": tool.spec.parameters,
        "test_args": tool.spec.test_args,
        "tests": [case_json(c) for c in tool.spec.tests],
        "requirements": tool.spec.canonical()["requirements"],
        "keywords": list(tool.spec.keywords),
        "provenance": tool.provenance.to_dict(),
        "gate": tool.gate,
        "status": tool.status.value,
        "status_reason": tool.status_reason,
        "parent_version": tool.parent_version,
    }
    folder.mkdir(exist_ok=True)
    meta_bytes = _json_bytes(meta)
    _write_atomic(folder / TOOL_PY, code)
    _write_atomic(folder / TOOL_JSON, meta_bytes)
    return {
        "name": tool.name,
        "version": tool.version,
        "hash": tool.hash,
        "tool_py_sha256": meta["tool_py_sha256"],
        "tool_json_sha256": _sha256(meta_bytes),
    }


def _json_bytes(data: JSONValue) -> bytes:
    return (json.dumps(data, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _write_atomic(path: Path, data: bytes) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


# --- import ----------------------------------------------------------------------------


@dataclass(frozen=True)
class _Folder:
    path: Path
    meta: JSONObject  # tool.json as read (its fields checked where the spec is made)
    meta_bytes: bytes
    code_bytes: bytes
    spec: ToolSpec


def import_tools(
    library: ToolLibrary,
    directory: Path,
    *,
    validate: Validator,
    status: Status = Status.ACTIVE,
    actor: str,
    trusted_key: Ed25519PublicKey | None = None,
) -> ImportReport:
    """Import every tool folder of a bundle (or one tool folder) through ``validate``.

    The manifest's signature is checked first: with ``trusted_key`` the bundle must be
    signed by that key, without it an unsigned bundle is accepted but a signature that
    does not verify is not (:class:`~toolsmith.errors.SignatureError`, nothing written).
    Malformed folders raise :class:`BundleError` before anything is written; tampered
    tools and tools the gate refuses are reported as refused and never stored.
    """
    directory = Path(directory)
    # The manifest is read once: the bytes whose signature is checked are the bytes used.
    raw_manifest, signature = _verified_manifest(directory, trusted_key)
    manifest = None if raw_manifest is None else _parse_manifest(directory / MANIFEST, raw_manifest)
    folders = [_read_folder(path) for path in _tool_folders(directory, manifest)]
    report = ImportReport(signature=signature)
    for folder in folders:
        report.outcomes.append(_import_one(library, folder, manifest, validate, status, actor))
    if manifest is not None:
        present = {f.path.name for f in folders}
        for name in sorted(set(manifest) - present):
            path = str(directory / name)
            reason = "listed in manifest.json but its folder is missing"
            report.outcomes.append(ImportOutcome(name, "refused", path, reason=reason))
    return report


def verify_bundle(directory: Path, trusted_key: Ed25519PublicKey | None = None) -> signing.SignatureCheck:
    """Check a bundle's signature only (what :func:`import_tools` does first), writing nothing."""
    return _verified_manifest(Path(directory), trusted_key)[1]


def _verified_manifest(
    directory: Path, trusted_key: Ed25519PublicKey | None
) -> tuple[bytes | None, signing.SignatureCheck]:
    raw = _read_bytes(directory / MANIFEST) if (directory / MANIFEST).exists() else None
    return raw, signing.verify_manifest(directory, raw, trusted_key)


def _tool_folders(directory: Path, manifest: Manifest | None) -> list[Path]:
    if not directory.is_dir():
        raise BundleError(f"{directory} is not a directory.", path=directory)
    if (directory / TOOL_JSON).exists():  # a single tool folder
        return [directory]
    folders = sorted(p for p in directory.iterdir() if p.is_dir() and not p.name.startswith("."))
    if not folders and not manifest:
        raise BundleError(f"{directory} holds no tool folders and no {MANIFEST}.", path=directory)
    return folders


def _parse_manifest(path: Path, raw: bytes) -> Manifest:
    data = _parse_json(path, raw)
    tools = data.get("tools")
    if data.get("format") != BUNDLE_FORMAT or not isinstance(tools, list):
        raise BundleError(f"{path} is not a toolsmith bundle manifest.", path=path)
    entries: Manifest = {}
    for entry in tools:
        if not (isinstance(entry, dict) and isinstance(entry.get("name"), str)):
            raise BundleError(f"{path}: every entry of 'tools' needs a 'name'.", path=path)
        entries[entry["name"]] = entry
    return entries


def _read_folder(folder: Path) -> _Folder:
    meta_bytes = _read_bytes(folder / TOOL_JSON)
    meta = _parse_json(folder / TOOL_JSON, meta_bytes)
    code_path = folder / TOOL_PY
    code_bytes = _read_bytes(code_path)
    try:
        code = code_bytes.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise BundleError(f"{code_path} is not UTF-8 text.", path=code_path) from exc
    try:
        spec = ToolSpec(
            name=_field(meta, "name", str),
            description=_field(meta, "description", str),
            parameters=_field(meta, "parameters", dict),
            code=code,
            test_args=_field(meta, "test_args", dict),
            requirements=tuple(Requirement.from_dict(r) for r in _field(meta, "requirements", list)),
            keywords=tuple(str(k) for k in _field(meta, "keywords", list)),
            tests=normalise_cases(meta.get("tests", [])),  # bundles from before tests have none
        )
        _field(meta, "hash", str)
        _field(meta, "tool_py_sha256", str)
        if not isinstance(meta.get("provenance", {}), dict):
            raise ValueError("'provenance' must be an object")
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise BundleError(f"{folder / TOOL_JSON} is malformed: {exc}", path=folder) from exc
    return _Folder(path=folder, meta=meta, meta_bytes=meta_bytes, code_bytes=code_bytes, spec=spec)


def _field(meta: JSONObject, key: str, kind: type[T]) -> T:
    if key not in meta:
        raise ValueError(f"the field {key!r} is missing")
    value = meta[key]
    if not isinstance(value, kind) or isinstance(value, bool):
        raise ValueError(f"the field {key!r} must be a {kind.__name__}")
    return value


def _read_bytes(path: Path) -> bytes:
    return signing.read_plain_file(path, limit=_MAX_FILE_BYTES)


def _parse_json(path: Path, raw: bytes) -> JSONObject:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BundleError(f"{path} is not valid JSON: {exc}", path=path) from exc
    if not isinstance(data, dict):
        raise BundleError(f"{path} must hold a JSON object.", path=path)
    return data


def _tampering(folder: _Folder, manifest: Manifest | None) -> str | None:
    """Why the folder's content cannot be trusted, or None when every hash checks out."""
    meta, name = folder.meta, folder.spec.name
    if folder.path.name != name and manifest is not None:
        return f"the folder {shown_name(folder.path.name)} holds a tool named {shown_name(name)}"
    if _sha256(folder.code_bytes) != meta["tool_py_sha256"]:
        return "tool.py does not match the sha256 recorded in tool.json (modified after export)"
    if folder.spec.content_hash() != meta["hash"]:
        return "the content hash does not match tool.json (code or metadata modified after export)"
    if manifest is not None:
        entry = manifest.get(name)
        if entry is None:
            return f"not listed in {MANIFEST}"
        if entry.get("hash") != meta["hash"] or entry.get("tool_py_sha256") != meta["tool_py_sha256"]:
            return f"hashes differ from {MANIFEST}"
        # tool.json also carries what the content hash leaves out (provenance, gate result).
        recorded = entry.get("tool_json_sha256")
        if recorded is not None and recorded != _sha256(folder.meta_bytes):
            return f"tool.json does not match the sha256 in {MANIFEST} (provenance or metadata modified after export)"
    return None


def _import_one(
    library: ToolLibrary,
    folder: _Folder,
    manifest: Manifest | None,
    validate: Validator,
    status: Status,
    actor: str,
) -> ImportOutcome:
    spec, path = folder.spec, str(folder.path)
    problem = _tampering(folder, manifest)
    if problem is not None:
        return ImportOutcome(spec.name, "refused", path, reason=problem)
    existing = _existing_version(library, spec)
    if existing is not None:
        return ImportOutcome(spec.name, "unchanged", path, version=existing)
    verdict = validate(spec)
    if not verdict.ok:
        return ImportOutcome(spec.name, "refused", path, reason=f"gate: {verdict.reason}")
    if verdict.parameters is not None:
        spec = replace(spec, parameters=verdict.parameters)
    recorded = folder.meta.get("provenance")
    original = Provenance.from_dict(recorded if isinstance(recorded, dict) else {})
    details: JSONObject = {
        "source": path,
        "exported_version": folder.meta.get("version"),
        "exported_hash": folder.meta["hash"],
        "original_origin": original.origin,
    }
    version, created = library.add_or_get(
        spec, provenance=replace(original, origin="import"), gate=verdict.to_dict(),
        status=status, actor=actor, action="import", details=details,
    )  # fmt: skip
    return ImportOutcome(spec.name, "imported" if created else "unchanged", path, version.version)


def _existing_version(library: ToolLibrary, spec: ToolSpec) -> int | None:
    try:
        history = library.history(spec.name)
    except ToolNotFoundError:
        return None
    digest = spec.content_hash()
    return next((v.version for v in history if v.hash == digest), None)
