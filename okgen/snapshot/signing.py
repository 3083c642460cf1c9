"""Ed25519 signatures of snapshot manifests (the ``sign`` extra: cryptography).

The manifest lists the SHA-256 of every data file, so signing its exact bytes signs the
snapshot's data. ``quality.json`` (the quality evidence) is outside the manifest on purpose
(reviews arrive after a release), so it is signed apart, in the same file: ``manifest.sig`` is
a small JSON file: algorithm, key id (first 16 hex digits of the SHA-256 of the raw public key),
the SHA-256 of the signed manifest bytes and the base64 signature, and, when the snapshot had
quality evidence when signed, ``quality_sha256`` and ``quality_signature`` over its bytes. A
later ``okgen review import`` drops those two (the evidence is then the local reviewers', not
the publisher's), and a verification says the evidence is not covered. Keys are PEM files: the private key PKCS#8 (written with mode 0600), the public key
SubjectPublicKeyInfo.
"""

from __future__ import annotations

import base64
import json
from pathlib import Path

from okgen.errors import ConfigError, IntegrityError
from okgen.files import atomic_write_bytes, atomic_write_text
from okgen.hashing import sha256_bytes
from okgen.registry import require
from okgen.snapshot import layout


def _crypto():
    require("cryptography", "sign", "snapshot signing")
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ed25519

    return serialization, ed25519


def generate_keypair(private_path: str | Path, public_path: str | Path | None = None, *, overwrite: bool = False) -> tuple[Path, Path]:
    """Create an Ed25519 key pair; return (private key path, public key path).

    Raises:
        ConfigError: a key file exists and ``overwrite`` is False.
    """
    serialization, ed25519 = _crypto()
    private_path = Path(private_path)
    public_path = Path(public_path) if public_path else private_path.with_suffix(".pub")
    for p in (private_path, public_path):
        if p.exists() and not overwrite:
            raise ConfigError(f"{p} already exists (use --force to overwrite)")
    key = ed25519.Ed25519PrivateKey.generate()
    priv = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    pub = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    private_path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(private_path, priv, mode=0o600)
    atomic_write_bytes(public_path, pub)
    return private_path, public_path


def _load_private(path: Path):
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_private_key(Path(path).read_bytes(), password=None)
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such key file") from None
    except (ValueError, TypeError) as e:
        raise ConfigError(f"{path}: not an unencrypted PEM private key ({e})") from None
    if not isinstance(key, ed25519.Ed25519PrivateKey):
        raise ConfigError(f"{path}: not an Ed25519 key")
    return key


def _load_public(path: Path):
    serialization, ed25519 = _crypto()
    try:
        key = serialization.load_pem_public_key(Path(path).read_bytes())
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such key file") from None
    except ValueError as e:
        raise ConfigError(f"{path}: not a PEM public key ({e})") from None
    if not isinstance(key, ed25519.Ed25519PublicKey):
        raise ConfigError(f"{path}: not an Ed25519 public key")
    return key


def key_id(public_key) -> str:
    """First 16 hex digits of the SHA-256 of the raw public key."""
    serialization, _ = _crypto()
    raw = public_key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return sha256_bytes(raw)[:16]


def sign_manifest(folder: str | Path, private_key: str | Path) -> Path:
    """Write ``manifest.sig`` for the snapshot in ``folder``; return its path."""
    folder = Path(folder)
    key = _load_private(Path(private_key))
    data = (folder / layout.MANIFEST).read_bytes()
    sig = key.sign(data)
    record = {
        "algorithm": "ed25519",
        "key_id": key_id(key.public_key()),
        "manifest_sha256": sha256_bytes(data),
        "signature": base64.b64encode(sig).decode("ascii"),
    }
    if (folder / layout.QUALITY).is_file():
        evidence = (folder / layout.QUALITY).read_bytes()
        record.update(quality_sha256=sha256_bytes(evidence),
                      quality_signature=base64.b64encode(key.sign(evidence)).decode("ascii"))
    out = folder / layout.MANIFEST_SIG
    atomic_write_text(out, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return out


def verify_manifest_signature(folder: str | Path, public_key: str | Path) -> str:
    """Check ``manifest.sig`` against the manifest (and the quality evidence, when it signs it)
    and a public key; return the key id.

    Raises:
        IntegrityError: no signature, another key, or a signature that does not match (the
            manifest's, or the quality evidence's: changed since it was signed).
    """
    from cryptography.exceptions import InvalidSignature

    folder = Path(folder)
    key = _load_public(Path(public_key))
    sig_path = folder / layout.MANIFEST_SIG
    if not sig_path.is_file():
        raise IntegrityError("the snapshot is not signed (no manifest.sig)")
    try:
        record = json.loads(sig_path.read_text(encoding="utf-8"))
        raw_sig = base64.b64decode(record["signature"], validate=True)
    except (ValueError, KeyError, TypeError) as e:
        raise IntegrityError(f"manifest.sig is malformed ({e})") from None
    if record.get("algorithm") != "ed25519":
        raise IntegrityError(f"manifest.sig uses {record.get('algorithm')!r}, not ed25519")
    kid = key_id(key)
    if record.get("key_id") != kid:
        raise IntegrityError(f"manifest.sig was made with key {record.get('key_id')}, not {kid}")
    data = (folder / layout.MANIFEST).read_bytes()
    try:
        key.verify(raw_sig, data)
    except InvalidSignature:
        raise IntegrityError("manifest signature does not match manifest.json") from None
    if "quality_signature" in record:
        path = folder / layout.QUALITY
        try:
            key.verify(base64.b64decode(record["quality_signature"], validate=True), path.read_bytes())
        except (InvalidSignature, ValueError, OSError):
            raise IntegrityError(f"{layout.QUALITY} changed since it was signed (or is missing): its quality "
                                 "evidence is not the publisher's") from None
    return kid


def quality_signed(folder: str | Path) -> bool:
    """Whether ``manifest.sig`` signs the quality evidence too (a verified signature then covers it)."""
    try:
        return "quality_signature" in json.loads((Path(folder) / layout.MANIFEST_SIG).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False


def unsign_quality(folder: str | Path) -> bool:
    """Drop the quality evidence's signature from ``manifest.sig`` (the manifest's stays): for
    evidence changed after the release, which the publisher did not sign. True when one was there."""
    path = Path(folder) / layout.MANIFEST_SIG
    if not quality_signed(folder):
        return False
    record = json.loads(path.read_text(encoding="utf-8"))
    for k in ("quality_sha256", "quality_signature"):
        record.pop(k, None)
    atomic_write_text(path, json.dumps(record, indent=2, sort_keys=True) + "\n")
    return True
