"""Signed bundles: key files, signing at export, verification before anything at import.

The library-level tests use a stand-in gate; the CLI round trip runs the real gate (the
test run in the default sandbox) in a second home with ``review = "required"``.
"""

from __future__ import annotations

import getpass
import json
import os
import stat
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from cli_helpers import as_json, assert_error, invoke
from toolsmith.cli import tools as cli
from toolsmith.errors import KeyFileError, SignatureError
from toolsmith.library import Provenance, Status, ToolLibrary, ToolSpec, export_tools, import_tools, signing

DAYS_CODE = (
    "from datetime import date\n\n\n"
    "def run(start, end):\n"
    "    return {'days': (date.fromisoformat(end) - date.fromisoformat(start)).days}\n"
)
DAYS = ToolSpec(
    name="days_between",
    description="Count the days between two ISO dates.",
    parameters={
        "type": "object",
        "properties": {"start": {"type": "string"}, "end": {"type": "string"}},
        "required": ["start", "end"],
    },
    code=DAYS_CODE,
    test_args={"start": "2020-01-01", "end": "2020-03-01"},
)
WEEKDAY = replace(
    DAYS,
    name="weekday_of",
    description="The weekday of an ISO date.",
    parameters={"type": "object", "properties": {"day": {"type": "string"}}, "required": ["day"]},
    code="from datetime import date\n\n\ndef run(day):\n    return {'weekday': date.fromisoformat(day).strftime('%A')}\n",
    test_args={"day": "2024-02-29"},
)
PROV = Provenance(
    task="How many days from New Year to March?",
    model="scripted-model",
    sources=("https://docs.python.org/3/library/datetime.html",),
    created_at="2024-03-01T12:34:56Z",
    session_id="sess-round-trip",
)


class Verdict:
    ok, reason, parameters = True, None, None

    def to_dict(self) -> dict[str, Any]:
        return {"ok": True, "checks": [{"check": "stand-in", "ok": True, "message": ""}]}


def gate(spec: ToolSpec) -> Verdict:
    return Verdict()


@pytest.fixture
def source(tmp_path: Path) -> Iterator[ToolLibrary]:
    with ToolLibrary(tmp_path / "source.db") as library:
        library.add(DAYS, provenance=PROV, gate={"ok": True})
        library.add(WEEKDAY, provenance=PROV, gate={"ok": True})
        yield library


@pytest.fixture
def target(tmp_path: Path) -> Iterator[ToolLibrary]:
    with ToolLibrary(tmp_path / "target.db") as library:
        yield library


@pytest.fixture
def key() -> Ed25519PrivateKey:
    return Ed25519PrivateKey.generate()


def written(library: ToolLibrary) -> tuple[int, int]:
    return len(library.list_tools(include_retired=True)), len(library.audit_log())


def edit_json(path: Path, **changes: Any) -> None:
    data = json.loads(path.read_text(encoding="utf-8"))
    data.update(changes)
    path.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")


# --- key files -------------------------------------------------------------------------


def test_generate_keypair_modes_and_loading(tmp_path: Path) -> None:
    files = signing.generate_keypair(tmp_path / "keys" / "bundle.key")
    assert files.public == tmp_path / "keys" / "bundle.key.pub"
    assert stat.S_IMODE(files.private.stat().st_mode) == 0o600
    assert b"BEGIN PRIVATE KEY" in files.private.read_bytes()
    assert b"BEGIN PUBLIC KEY" in files.public.read_bytes()
    private, public = signing.load_private_key(files.private), signing.load_public_key(files.public)
    assert signing.fingerprint(private.public_key()) == signing.fingerprint(public) == files.fingerprint
    with pytest.raises(KeyFileError, match="already exists"):
        signing.generate_keypair(files.private)
    again = signing.generate_keypair(files.private, overwrite=True)
    assert again.fingerprint != files.fingerprint and stat.S_IMODE(again.private.stat().st_mode) == 0o600


def test_key_loading_errors_and_openssh_keys(tmp_path: Path, key: Ed25519PrivateKey) -> None:
    with pytest.raises(KeyFileError, match="does not exist") as missing:
        signing.load_private_key(tmp_path / "none")
    assert missing.value.setting == "--sign-key"
    (tmp_path / "junk").write_text("hello")
    with pytest.raises(KeyFileError, match="not a PEM or OpenSSH private key"):
        signing.load_private_key(tmp_path / "junk")
    files = signing.generate_keypair(tmp_path / "k")
    with pytest.raises(KeyFileError, match="is a private key"):
        signing.load_public_key(files.private)
    ssh = key.public_key().public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH)
    (tmp_path / "id.pub").write_bytes(ssh + b" someone@host\n")
    assert signing.fingerprint(signing.load_public_key(tmp_path / "id.pub")) == signing.fingerprint(key.public_key())
    encrypted = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.BestAvailableEncryption(b"secret")
    )
    (tmp_path / "enc.key").write_bytes(encrypted)
    with pytest.raises(KeyFileError, match="passphrase"):
        signing.load_private_key(tmp_path / "enc.key")


# --- signing and verifying through the library API -------------------------------------


def test_signed_export_is_deterministic_and_verifies(
    source: ToolLibrary, target: ToolLibrary, tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    out = tmp_path / "bundle"
    export_tools(source, out, sign_key=key)
    sig, meta = (out / "manifest.sig").read_bytes(), json.loads((out / "signature.json").read_text())
    assert meta["algorithm"] == "ed25519"
    assert meta["public_key_fingerprint"] == signing.fingerprint(key.public_key())
    key.public_key().verify(__import__("base64").b64decode(sig), (out / "manifest.json").read_bytes())
    export_tools(source, out, sign_key=key)
    assert (out / "manifest.sig").read_bytes() == sig  # Ed25519 is deterministic: no timestamps

    report = import_tools(target, out, validate=gate, actor="user:t", trusted_key=key.public_key())
    assert report.ok and [o.outcome for o in report.outcomes] == ["imported", "imported"]
    assert report.signature == signing.SignatureCheck(True, True, signing.fingerprint(key.public_key()))
    assert report.to_dict()["signature"]["trusted"] is True


def test_unsigned_export_removes_a_stale_signature(source: ToolLibrary, tmp_path: Path, key: Ed25519PrivateKey) -> None:
    out = tmp_path / "bundle"
    export_tools(source, out, sign_key=key)
    export_tools(source, out)
    assert not (out / "manifest.sig").exists() and not (out / "signature.json").exists()


def test_tampered_manifest_refuses_the_whole_bundle(
    source: ToolLibrary, target: ToolLibrary, tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    out = tmp_path / "bundle"
    export_tools(source, out, sign_key=key)
    manifest = json.loads((out / "manifest.json").read_text())
    manifest["tools"] = manifest["tools"][:1]  # still valid JSON, now lists one tool
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    before = written(target)
    with pytest.raises(SignatureError, match="does not verify with the trusted key"):
        import_tools(target, out, validate=gate, actor="u", trusted_key=key.public_key())
    with pytest.raises(SignatureError, match="changed after it was signed"):
        import_tools(target, out, validate=gate, actor="u")  # no trusted key: still refused
    assert written(target) == before == (0, 0)


def test_signature_by_another_key_or_missing(
    source: ToolLibrary, target: ToolLibrary, tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    out = tmp_path / "bundle"
    export_tools(source, out, sign_key=key)
    other = Ed25519PrivateKey.generate().public_key()
    with pytest.raises(SignatureError, match="not by the trusted key"):
        import_tools(target, out, validate=gate, actor="u", trusted_key=other)
    # The embedded key is only a hint: without it the trusted key still decides.
    (out / "signature.json").unlink()
    with pytest.raises(SignatureError, match="does not verify with the trusted key"):
        import_tools(target, out, validate=gate, actor="u", trusted_key=other)
    with pytest.raises(SignatureError, match="cannot be checked"):
        import_tools(target, out, validate=gate, actor="u")
    assert written(target) == (0, 0)
    assert import_tools(target, out, validate=gate, actor="u", trusted_key=key.public_key()).ok

    export_tools(source, tmp_path / "b2", sign_key=key)
    (tmp_path / "b2" / "manifest.sig").unlink()
    with pytest.raises(SignatureError, match=r"manifest\.sig is missing"):
        import_tools(target, tmp_path / "b2", validate=gate, actor="u")


def test_unsigned_bundle_needs_no_key_but_is_refused_with_one(
    source: ToolLibrary, target: ToolLibrary, tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    out = tmp_path / "bundle"
    export_tools(source, out)
    with pytest.raises(SignatureError, match="is not signed"):
        import_tools(target, out, validate=gate, actor="u", trusted_key=key.public_key())
    with pytest.raises(SignatureError, match="is not signed"):  # one tool's folder carries no signature
        import_tools(target, out / "days_between", validate=gate, actor="u", trusted_key=key.public_key())
    assert written(target) == (0, 0)
    report = import_tools(target, out, validate=gate, actor="u")
    assert report.ok and not report.signature.signed
    assert "unsigned" in report.signature.describe()


@pytest.mark.parametrize("garbage", [b"not base64 at all!!", b"c2hvcnQ=\n"])
def test_malformed_signature_files(
    source: ToolLibrary, target: ToolLibrary, tmp_path: Path, key: Ed25519PrivateKey, garbage: bytes
) -> None:
    out = tmp_path / "bundle"
    export_tools(source, out, sign_key=key)
    (out / "manifest.sig").write_bytes(garbage)
    with pytest.raises(SignatureError):
        import_tools(target, out, validate=gate, actor="u", trusted_key=key.public_key())
    export_tools(source, out, sign_key=key)
    edit_json(out / "signature.json", public_key_fingerprint="sha256:" + "0" * 64)
    with pytest.raises(SignatureError, match="fingerprint does not match"):
        import_tools(target, out, validate=gate, actor="u")
    assert written(target) == (0, 0)


def test_signed_bundle_still_refuses_a_tampered_tool(
    source: ToolLibrary, target: ToolLibrary, tmp_path: Path, key: Ed25519PrivateKey
) -> None:
    out = tmp_path / "bundle"
    export_tools(source, out, sign_key=key)
    (out / "days_between" / "tool.py").write_text(DAYS_CODE + "import os\n", encoding="utf-8")
    edit_json(out / "weekday_of" / "tool.json", provenance={**PROV.to_dict(), "task": "forged task"})
    report = import_tools(target, out, validate=gate, actor="u", trusted_key=key.public_key())
    outcomes = {o.name: (o.outcome, o.reason) for o in report.outcomes}
    assert outcomes["days_between"][0] == "refused" and "tool.py" in str(outcomes["days_between"][1])
    # Provenance is outside the content hash; the manifest's sha256 of tool.json covers it.
    assert outcomes["weekday_of"][0] == "refused" and "provenance" in str(outcomes["weekday_of"][1])
    assert written(target) == (0, 0)


# --- the command line ------------------------------------------------------------------


@pytest.fixture
def homes(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.delenv("TOOLSMITH_REVIEW", raising=False)
    mine = Path(os.environ["TOOLSMITH_HOME"])
    theirs = tmp_path / "their-home"
    theirs.mkdir()
    (theirs / "config.toml").write_text('review = "required"\n', encoding="utf-8")
    with ToolLibrary(mine / "library.db") as library:
        library.add(DAYS, provenance=PROV, gate={"ok": True})
        library.add(WEEKDAY, provenance=PROV, gate={"ok": True})
    return mine, theirs


def test_cli_keygen_sign_verify_round_trip(
    homes: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, theirs = homes
    keys = as_json(invoke("keygen", str(tmp_path / "keys" / "team.key"), "--json"))
    assert stat.S_IMODE(Path(keys["private_key"]).stat().st_mode) == 0o600
    assert keys["public_key"].endswith("team.key.pub")
    assert_error(invoke("keygen", str(tmp_path / "keys" / "team.key")), 2, "already exists")

    bundle = tmp_path / "bundle"
    exported = as_json(invoke("export", str(bundle), "--sign-key", keys["private_key"], "--json"))
    assert exported["signed_by"] == keys["fingerprint"] and exported["tools"] == ["days_between", "weekday_of"]
    assert (bundle / "manifest.sig").is_file()

    monkeypatch.setenv("TOOLSMITH_HOME", str(theirs))
    report = as_json(invoke("import", str(bundle), "--verify-key", keys["public_key"], "--json"))
    assert report["signature"] == {"signed": True, "trusted": True, "fingerprint": keys["fingerprint"]}
    assert [(t["name"], t["outcome"]) for t in report["tools"]] == [
        ("days_between", "imported"),
        ("weekday_of", "imported"),
    ]
    with ToolLibrary(theirs / "library.db") as library:
        copy = library.get("days_between")
        assert copy.status is Status.PENDING  # review = required
        prov = copy.provenance
        assert (prov.task, prov.model, prov.sources, prov.session_id, prov.created_at) == (
            PROV.task,
            PROV.model,
            PROV.sources,
            PROV.session_id,
            PROV.created_at,
        )
        assert prov.origin == "import"
        assert copy.gate["ok"] is True and [c["check"] for c in copy.gate["checks"]][-1] == "test_run"  # real gate
        entry = library.audit_log("days_between")[-1]
        assert (entry.action, entry.actor) == ("import", f"user:{getpass.getuser()}")
        assert library.search("days between two dates") == []  # pending is not served
    text = invoke("import", str(bundle), "--verify-key", keys["public_key"])
    assert "signature verified with the trusted key sha256:" in text.stdout and "2 unchanged" in text.stdout


def test_cli_refuses_bad_signatures_and_writes_nothing(
    homes: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mine, theirs = homes
    keys = signing.generate_keypair(tmp_path / "team.key")
    stranger = signing.generate_keypair(tmp_path / "stranger.key")
    bundle = tmp_path / "bundle"
    assert invoke("export", str(bundle), "--sign-key", str(keys.private)).exit_code == 0
    monkeypatch.setenv("TOOLSMITH_HOME", str(theirs))
    monkeypatch.setattr(cli, "_gate_validator", lambda settings: gate)

    assert_error(invoke("import", str(bundle), "--verify-key", str(stranger.public)), 1, "not by the trusted key")
    manifest = bundle / "manifest.json"
    manifest.write_text(manifest.read_text().replace('"days_between"', '"days_between" ', 1))
    assert_error(invoke("import", str(bundle), "--verify-key", str(keys.public), "--json"), 1, "does not verify")
    assert_error(invoke("import", str(bundle)), 1, "changed after it was signed")
    assert_error(invoke("import", str(bundle), "--verify-key", str(tmp_path / "nope.pub")), 2, "does not exist")
    assert_error(invoke("import", str(bundle), "--verify-key", str(keys.private)), 2, "is a private key")
    assert not (theirs / "library.db").exists()  # refused before the library was opened
    assert_error(invoke("export", str(tmp_path / "b2"), "--sign-key", str(keys.public)), 2, "private key")

    monkeypatch.setenv("TOOLSMITH_HOME", str(mine))
    assert invoke("export", str(tmp_path / "plain")).exit_code == 0
    monkeypatch.setenv("TOOLSMITH_HOME", str(theirs))
    assert_error(invoke("import", str(tmp_path / "plain"), "--verify-key", str(keys.public)), 1, "is not signed")
    plain = invoke("import", str(tmp_path / "plain"))
    assert plain.exit_code == 0 and "unsigned bundle" in plain.stdout
    assert "2 imported tool(s) await review" in plain.stdout
