"""Ed25519 signatures for tool bundles: key files, signing a manifest, verifying one.

Only ``manifest.json`` is signed. It lists every tool's content hash and the sha256 of
its ``tool.py`` and ``tool.json``, so one signature covers every byte an import trusts.
A signed bundle holds two more files next to the manifest::

    manifest.sig       # base64 of the 64-byte Ed25519 signature of manifest.json's bytes
    signature.json     # algorithm, the signer's public key and its fingerprint

Ed25519 signatures are deterministic, so signing the same manifest with the same key
always writes the same bytes (bundles stay free of timestamps).

The public key inside ``signature.json`` only lets an import notice a bundle that was
changed after signing. Who signed it is established only by a key the user trusts
(``--verify-key``): then the signature must verify with that key, whatever
``signature.json`` says.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from cryptography.exceptions import InvalidSignature, UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

from toolsmith.calls import JSONObject
from toolsmith.errors import BundleError, KeyFileError, SignatureError

SIGNATURE_FILE = "manifest.sig"
SIGNATURE_META = "signature.json"
SIGNED_FILE = "manifest.json"
SIGNATURE_FORMAT = "toolsmith-bundle-signature"
ALGORITHM = "ed25519"
_MAX_SMALL_FILE = 64 * 1024
_SIGNATURE_BYTES = 64


@dataclass(frozen=True)
class KeyPairFiles:
    """Where :func:`generate_keypair` wrote a key pair, and the public key's fingerprint."""

    private: Path
    public: Path
    fingerprint: str

    def to_dict(self) -> JSONObject:
        return {"private_key": str(self.private), "public_key": str(self.public), "fingerprint": self.fingerprint}


@dataclass(frozen=True)
class SignatureCheck:
    """What verifying a bundle found.

    ``signed`` and not ``trusted``: the signature matches the key the bundle carries, which
    proves the manifest is intact but not who made it.
    """

    signed: bool
    trusted: bool = False
    fingerprint: str | None = None

    def describe(self) -> str:
        if not self.signed:
            return "unsigned bundle (tool hashes checked; pass --verify-key to require a signature)"
        short = short_fingerprint(self.fingerprint or "")
        if self.trusted:
            return f"signature verified with the trusted key {short}"
        return f"signed by key {short}; intact, but the signer was not checked (pass --verify-key)"

    def to_dict(self) -> JSONObject:
        return {"signed": self.signed, "trusted": self.trusted, "fingerprint": self.fingerprint}


# --- keys ------------------------------------------------------------------------------


def public_key_path(private: Path) -> Path:
    return private.with_name(private.name + ".pub")


def fingerprint(key: Ed25519PublicKey) -> str:
    """``sha256:<hex>`` of the raw 32-byte public key."""
    raw = key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def short_fingerprint(value: str) -> str:
    return value[: len("sha256:") + 16]


def generate_keypair(path: Path, *, overwrite: bool = False) -> KeyPairFiles:
    """Write a new private key to ``path`` (PEM, mode 0600) and its public key to ``path.pub``."""
    path = Path(path)
    pub = public_key_path(path)
    if not overwrite:
        for existing in (path, pub):
            if existing.exists() or existing.is_symlink():
                raise KeyFileError(
                    f"{existing} already exists; choose another path or pass --force to replace it.",
                    path=existing, setting="PATH",
                )  # fmt: skip
    key = Ed25519PrivateKey.generate()
    private_pem = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )
    public_pem = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _write_new(path, private_pem, 0o600)
        _write_new(pub, public_pem, 0o644)
    except OSError as exc:
        raise KeyFileError(
            f"Cannot write the key pair at {path}: {exc.strerror or exc}", path=path, setting="PATH"
        ) from exc
    return KeyPairFiles(private=path, public=pub, fingerprint=fingerprint(key.public_key()))


def _write_new(path: Path, data: bytes, mode: int) -> None:
    # Unlink first so an existing file's looser mode (or a symlink) never carries over.
    if path.exists() or path.is_symlink():
        path.unlink()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
    os.chmod(path, mode)


def load_private_key(path: Path, *, setting: str = "--sign-key") -> Ed25519PrivateKey:
    """An Ed25519 private key from a PEM (PKCS#8) or OpenSSH file without a passphrase."""
    data = _read_key_file(Path(path), setting)
    loaders = (serialization.load_pem_private_key, serialization.load_ssh_private_key)
    for loader in loaders:
        try:
            key = loader(data, password=None)
        except TypeError as exc:  # the key is encrypted
            raise KeyFileError(
                f"{path} is protected by a passphrase; toolsmith needs an unencrypted key.",
                path=Path(path),
                setting=setting,
            ) from exc
        except (ValueError, UnsupportedAlgorithm):
            continue
        if isinstance(key, Ed25519PrivateKey):
            return key
        raise KeyFileError(
            f"{path} holds a {type(key).__name__}, not an Ed25519 private key "
            "(create one with `toolsmith tools keygen PATH`).",
            path=Path(path),
            setting=setting,
        )
    raise KeyFileError(
        f"{path} is not a PEM or OpenSSH private key (create one with `toolsmith tools keygen PATH`).",
        path=Path(path),
        setting=setting,
    )


def load_public_key(path: Path, *, setting: str = "--verify-key") -> Ed25519PublicKey:
    """An Ed25519 public key from a PEM or OpenSSH (``ssh-ed25519 ...``) file."""
    data = _read_key_file(Path(path), setting)
    if b"PRIVATE KEY" in data:
        raise KeyFileError(
            f"{path} is a private key; verify with the public key (the .pub file) instead.",
            path=Path(path),
            setting=setting,
        )
    for loader in (serialization.load_pem_public_key, serialization.load_ssh_public_key):
        try:
            key = loader(data)
        except (ValueError, UnsupportedAlgorithm):
            continue
        if isinstance(key, Ed25519PublicKey):
            return key
        raise KeyFileError(
            f"{path} holds a {type(key).__name__}, not an Ed25519 public key.", path=Path(path), setting=setting
        )
    raise KeyFileError(f"{path} is not a PEM or OpenSSH public key.", path=Path(path), setting=setting)


def _read_key_file(path: Path, setting: str) -> bytes:
    try:
        if path.stat().st_size > _MAX_SMALL_FILE:
            raise KeyFileError(f"{path} is too large to be a key file.", path=path, setting=setting)
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise KeyFileError(f"The key file {path} does not exist.", path=path, setting=setting) from exc
    except OSError as exc:
        raise KeyFileError(
            f"Cannot read the key file {path}: {exc.strerror or exc}", path=path, setting=setting
        ) from exc


# --- signing ---------------------------------------------------------------------------


def signature_files(manifest: bytes, key: Ed25519PrivateKey) -> dict[str, bytes]:
    """The two files that sign ``manifest``: file name -> content."""
    public = key.public_key()
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    meta = {
        "format": SIGNATURE_FORMAT,
        "format_version": 1,
        "algorithm": ALGORITHM,
        "signed_file": SIGNED_FILE,
        "public_key": base64.b64encode(raw).decode("ascii"),
        "public_key_fingerprint": fingerprint(public),
    }
    signature = base64.b64encode(key.sign(manifest)).decode("ascii") + "\n"
    meta_text = json.dumps(meta, indent=2, sort_keys=True) + "\n"
    return {SIGNATURE_FILE: signature.encode("ascii"), SIGNATURE_META: meta_text.encode("utf-8")}


# --- verifying -------------------------------------------------------------------------


def verify_manifest(directory: Path, manifest: bytes | None, trusted: Ed25519PublicKey | None = None) -> SignatureCheck:
    """Check the signature of ``manifest`` (the bytes of the bundle's manifest.json).

    Raises :class:`SignatureError` when a signature is present but does not verify, when
    it is incomplete, or when ``trusted`` is given and the bundle is not signed by it.
    """
    sig_path, meta_path = directory / SIGNATURE_FILE, directory / SIGNATURE_META
    has_sig, has_meta = _present(sig_path), _present(meta_path)
    if not has_sig and not has_meta:
        if trusted is not None:
            raise SignatureError(
                f"{directory} is not signed (no {SIGNATURE_FILE}), but --verify-key requires a signature "
                "by that key; nothing was imported.", path=directory,
            )  # fmt: skip
        return SignatureCheck(signed=False)
    if manifest is None:
        raise SignatureError(
            f"{directory} carries a signature but no {SIGNED_FILE} it could sign; nothing was imported.", path=directory
        )
    if not has_sig:
        raise SignatureError(
            f"{meta_path} exists but {SIGNATURE_FILE} is missing: the signature was removed "
            "or never completed; nothing was imported.",
            path=directory,
        )
    signature = _read_signature(sig_path)
    embedded = _read_meta(meta_path) if has_meta else None
    if trusted is not None:
        return _verify_trusted(directory, manifest, signature, embedded, trusted)
    if embedded is None:
        raise SignatureError(
            f"{directory} is signed but {SIGNATURE_META} (the signer's public key) is missing, so the "
            "signature cannot be checked; pass --verify-key with the signer's public key.", path=directory,
        )  # fmt: skip
    try:
        embedded.verify(signature, manifest)
    except InvalidSignature as exc:
        raise SignatureError(
            f"The signature in {sig_path} does not verify: {SIGNED_FILE} was changed after it was signed; "
            "nothing was imported.", path=sig_path,
        ) from exc  # fmt: skip
    return SignatureCheck(signed=True, trusted=False, fingerprint=fingerprint(embedded))


def _verify_trusted(
    directory: Path,
    manifest: bytes,
    signature: bytes,
    embedded: Ed25519PublicKey | None,
    trusted: Ed25519PublicKey,
) -> SignatureCheck:
    want = fingerprint(trusted)
    if embedded is not None and fingerprint(embedded) != want:
        raise SignatureError(
            f"{directory} is signed by key {short_fingerprint(fingerprint(embedded))}, not by the trusted key "
            f"{short_fingerprint(want)}; nothing was imported.", path=directory,
        )  # fmt: skip
    try:
        trusted.verify(signature, manifest)
    except InvalidSignature as exc:
        raise SignatureError(
            f"The signature of {directory / SIGNED_FILE} does not verify with the trusted key "
            f"{short_fingerprint(want)}: the manifest was changed after signing, or another key signed it; "
            "nothing was imported.", path=directory,
        ) from exc  # fmt: skip
    return SignatureCheck(signed=True, trusted=True, fingerprint=want)


def _present(path: Path) -> bool:
    return path.exists() or path.is_symlink()


def read_plain_file(path: Path, *, limit: int, error: type[BundleError] = BundleError) -> bytes:
    """A bundle file's bytes: plain files only (no symbolic links), at most ``limit`` bytes.

    Both the bundle reader and the signature check read untrusted folders this way.
    """
    if path.is_symlink():
        raise error(f"{path} is a symbolic link; bundles hold plain files only.", path=path)
    try:
        if path.stat().st_size > limit:
            raise error(f"{path} is larger than {limit} bytes.", path=path)
        return path.read_bytes()
    except FileNotFoundError as exc:
        raise error(f"{path} is missing.", path=path) from exc
    except OSError as exc:
        raise error(f"Cannot read {path}: {exc.strerror or exc}", path=path) from exc


def _read_small(path: Path) -> bytes:
    return read_plain_file(path, limit=_MAX_SMALL_FILE, error=SignatureError)


def _read_signature(path: Path) -> bytes:
    try:
        signature = base64.b64decode(_read_small(path).strip(), validate=True)
    except (binascii.Error, ValueError) as exc:
        raise SignatureError(f"{path} is not a base64 signature.", path=path) from exc
    if len(signature) != _SIGNATURE_BYTES:
        raise SignatureError(f"{path} does not hold a {_SIGNATURE_BYTES}-byte Ed25519 signature.", path=path)
    return signature


def _read_meta(path: Path) -> Ed25519PublicKey:
    """The signer's public key from signature.json, checked against its own fingerprint."""
    try:
        meta = json.loads(_read_small(path).decode("utf-8"))
        if not isinstance(meta, dict) or meta.get("format") != SIGNATURE_FORMAT:
            raise ValueError(f"not a {SIGNATURE_FORMAT} file")
        if meta.get("algorithm") != ALGORITHM:
            raise ValueError(f"algorithm {meta.get('algorithm')!r} is not {ALGORITHM}")
        if meta.get("signed_file", SIGNED_FILE) != SIGNED_FILE:
            raise ValueError(f"it signs {meta.get('signed_file')!r}, not {SIGNED_FILE}")
        raw = base64.b64decode(str(meta.get("public_key", "")), validate=True)
        key = Ed25519PublicKey.from_public_bytes(raw)
    except (UnicodeDecodeError, json.JSONDecodeError, binascii.Error, ValueError, TypeError) as exc:
        raise SignatureError(f"{path} is malformed: {exc}", path=path) from exc
    if meta.get("public_key_fingerprint") != fingerprint(key):
        raise SignatureError(f"{path}: the fingerprint does not match the public key it holds.", path=path)
    return key
