"""Verify a snapshot: recompute every hash and report each problem with the file it is in."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ValidationError

from okgen.errors import OkgenError
from okgen.files import describe_validation_error
from okgen.hashing import sha256_file
from okgen.schema import Article, Question, SnapshotManifest
from okgen.signature import Signature
from okgen.snapshot import layout


@dataclass
class Problem:
    """One verification failure."""

    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


@dataclass
class VerifyReport:
    """The outcome of :func:`verify_folder`."""

    path: str
    signature: str | None = None
    problems: list[Problem] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)
    signed: bool | None = None
    quality_signed: bool | None = None
    """With a public key: whether the signature covers ``quality.json`` too (None: no quality.json)."""

    @property
    def ok(self) -> bool:
        """True when nothing is wrong."""
        return not self.problems

    def add(self, file: str, message: str) -> None:
        """Record a problem."""
        self.problems.append(Problem(file, message))

    def to_dict(self) -> dict:
        """JSON-ready form."""
        return {
            "path": self.path,
            "ok": self.ok,
            "signature": self.signature,
            "signed": self.signed,
            "quality_signed": self.quality_signed,
            "checked": self.checked,
            "problems": [{"file": p.file, "message": p.message} for p in self.problems],
        }


def verify_folder(folder: str | Path, expected_signature: Signature | None = None) -> VerifyReport:
    """Check a snapshot folder against its manifest and signature.

    Checks: the manifest parses, is byte-for-byte canonical and matches its own hash; every
    listed file exists with the recorded size and SHA-256; no unlisted file is present; every
    record parses (a broken line is reported with its number); article texts match their
    hashes; the content hash recomputed from the files matches the manifest and the signature;
    counts match; every question's article is in the corpus; and, when given, the signature
    the snapshot was looked up by matches.
    """
    folder = Path(folder)
    rep = VerifyReport(path=str(folder))
    mpath = folder / layout.MANIFEST
    if not mpath.is_file():
        rep.add(layout.MANIFEST, "missing")
        return rep
    raw = mpath.read_bytes()
    try:
        manifest = SnapshotManifest.model_validate(json.loads(raw.decode("utf-8")))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        rep.add(layout.MANIFEST, f"corrupted JSON ({getattr(e, 'msg', e)})")
        return rep
    except ValidationError as e:
        rep.add(layout.MANIFEST, f"does not match the manifest schema ({describe_validation_error(e)})")
        return rep
    rep.checked.append(layout.MANIFEST)
    rep.signature = manifest.signature
    if layout.manifest_hash(manifest) != manifest.manifest_sha256:
        rep.add(layout.MANIFEST, "content changed: its hash does not match manifest_sha256")
    elif raw != layout.manifest_bytes(manifest):
        rep.add(layout.MANIFEST, "bytes changed: not the canonical form written by okgen")
    try:
        sig = Signature.parse(manifest.signature)
    except OkgenError as e:
        rep.add(layout.MANIFEST, f"bad signature: {e}")
        sig = None
    if expected_signature is not None and manifest.signature != expected_signature.format():
        rep.add(layout.MANIFEST, "signature differs from the one the snapshot was looked up by")

    for name, entry in sorted(manifest.files.items()):
        p = folder / name
        if not p.is_file():
            rep.add(name, "missing")
            continue
        size = p.stat().st_size
        digest = sha256_file(p)
        if digest != entry.sha256:
            rep.add(name, f"SHA-256 mismatch: {size} bytes now, {entry.bytes} recorded; the file was changed")
        elif size != entry.bytes:
            rep.add(name, f"size mismatch ({size} bytes, {entry.bytes} recorded)")
        rep.checked.append(name)
    allowed = set(manifest.files) | {layout.MANIFEST, layout.MANIFEST_SIG, layout.QUALITY}
    if (folder / layout.QUALITY).is_file():
        from okgen.snapshot.quality import load_quality

        try:
            load_quality(folder, manifest.content_hash)
            rep.checked.append(layout.QUALITY)
        except OkgenError as e:
            rep.add(layout.QUALITY, str(e))
    for p in sorted(folder.rglob("*")):
        rel = p.relative_to(folder).as_posix()
        if p.is_file() and rel not in allowed:
            rep.add(rel, "not listed in the manifest")

    questions = _read_records(folder / layout.QUESTIONS, Question, rep)
    corpus = _read_records(folder / layout.CORPUS, Article, rep)
    if questions is not None and corpus is not None:
        if (folder / layout.QUESTIONS).is_file():
            chash = layout.content_hash(sha256_file(folder / layout.QUESTIONS), corpus)
            if chash != manifest.content_hash:
                rep.add(layout.MANIFEST, "content hash does not match the questions and corpus")
            if sig is not None and chash != sig.content_hash:
                rep.add(layout.MANIFEST, "content hash in the signature does not match the questions and corpus")
        if sig is not None and sig.questions != len(questions):
            rep.add(layout.QUESTIONS, f"{len(questions)} questions, the signature says {sig.questions}")
        ids = {a.id for a in corpus}
        orphans = [q.id for q in questions if q.article_id not in ids]
        if orphans:
            rep.add(layout.QUESTIONS, f"{len(orphans)} question(s) refer to articles missing from the corpus (first: {orphans[0]})")
        omitted = sum(a.text_omitted for a in corpus)
        if manifest.text_included and omitted:
            rep.add(layout.CORPUS, f"{omitted} article(s) have no text but the manifest says texts are included")
    if sig is not None and (sig.date != manifest.date or sig.content_hash != manifest.content_hash):
        rep.add(layout.MANIFEST, "signature does not match the manifest's date or content hash")
    return rep


def _read_records(path: Path, model, rep: VerifyReport):
    name = path.name
    if not path.is_file():
        return None
    out = []
    try:
        with open(path, encoding="utf-8") as f:
            for lineno, line in enumerate(f, 1):
                try:
                    out.append(model.model_validate_json(line))
                except ValidationError as e:
                    rep.add(name, f"line {lineno}: {describe_validation_error(e)}")
                    return None
    except UnicodeDecodeError:
        rep.add(name, "not valid UTF-8")
        return None
    return out
