"""Snapshot store: build, resolve, verify, tamper detection, archives, catalogue, CLI."""

from __future__ import annotations

import datetime as dt
import io
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

from okgen.errors import ArchiveError, OkgenError
from okgen.hashing import sha256_file
from okgen.signature import Signature
from okgen.snapshot import layout
from okgen.snapshot.archive import make_archive, safe_extract
from okgen.snapshot.store import Snapshot, resolve
from okgen.snapshot.verify import verify_folder

SNAP_DATE = dt.date(2026, 11, 21)  # the date of the conftest fixtures


def run_cli(*args, home: Path, ok: bool | None = True):
    out = subprocess.run([sys.executable, "-m", "okgen", "--home", str(home), *args], capture_output=True, text=True)
    if ok is True:
        assert out.returncode == 0, out.stderr
    return out


def test_build_round_trip(make_snapshot, synthetic_records):
    articles, questions = synthetic_records
    snap = make_snapshot()
    m = snap.manifest
    assert sorted(p.name for p in snap.path.iterdir()) == sorted([layout.MANIFEST, layout.QUESTIONS, layout.CORPUS, layout.README,
                                                                  layout.QUALITY])
    assert {q.id for q in snap.questions} == {q.id for q in questions}
    assert snap.questions == sorted(questions, key=lambda q: (q.article_id, q.id))
    assert {a.id for a in snap.corpus} == {a.id for a in articles}
    sig = snap.signature
    assert Signature.parse(sig.format()) == sig == Signature.parse(sig.short)
    assert sig.questions == len(questions) and sig.date == SNAP_DATE and sig.window == 10
    assert sig.content_hash == m.content_hash
    assert m.counts["articles_by_window"] == {"1": 6, "5": 30, "10": 60}
    assert len(snap.window(1)) == 6 and all(a.date == SNAP_DATE for a in snap.window(1))
    card = (snap.path / layout.README).read_text()
    assert sig.format() in card and "How to cite" in card and "copyright" in card.lower()
    assert verify_folder(snap.path).ok


def test_content_hash_is_content_not_random(make_snapshot, workspace, synthetic_records):
    a = make_snapshot()
    b = make_snapshot(timestamp=dt.datetime(2026, 11, 22, 7, 0, tzinfo=dt.timezone.utc))
    assert a.manifest.content_hash == b.manifest.content_hash
    assert a.signature != b.signature  # timestamps differ
    articles, questions = synthetic_records
    c = make_snapshot(questions=questions[1:], timestamp=dt.datetime(2026, 11, 22, 8, 0, tzinfo=dt.timezone.utc))
    assert c.manifest.content_hash != a.manifest.content_hash


def test_no_text_release_keeps_the_content_hash(make_snapshot, tmp_path):
    full = make_snapshot()
    bare = make_snapshot(include_text=False, out_dir=tmp_path / "bare", register_it=False)
    assert bare.manifest.content_hash == full.manifest.content_hash
    assert bare.signature == full.signature
    assert all(a.text == "" and a.text_omitted for a in bare.corpus)
    assert verify_folder(bare.path).ok


def _files(snap: Snapshot) -> list[str]:
    return [layout.MANIFEST, layout.QUESTIONS, layout.CORPUS, layout.README]


@pytest.mark.parametrize("name", [layout.MANIFEST, layout.QUESTIONS, layout.CORPUS, layout.README])
@pytest.mark.parametrize("where", [0.0, 0.37, 0.81, 1.0])
def test_one_changed_byte_is_detected(make_snapshot, name, where):
    snap = make_snapshot()
    path = snap.path / name
    data = bytearray(path.read_bytes())
    i = min(len(data) - 1, int(len(data) * where))
    data[i] = (data[i] + 1) % 256 if data[i] not in (ord("\n"),) else ord(" ")
    path.write_bytes(bytes(data))
    rep = verify_folder(snap.path)
    assert not rep.ok
    assert any(p.file == name for p in rep.problems), [str(p) for p in rep.problems]


def test_missing_and_extra_files(make_snapshot):
    snap = make_snapshot()
    (snap.path / layout.CORPUS).unlink()
    (snap.path / "notes.txt").write_text("hi")
    rep = verify_folder(snap.path)
    msgs = [str(p) for p in rep.problems]
    assert any(m.startswith("corpus.jsonl: missing") for m in msgs)
    assert any(m.startswith("notes.txt: not listed") for m in msgs)


def test_corrupted_manifest_and_broken_line_errors(make_snapshot, workspace):
    snap = make_snapshot()
    q = snap.path / layout.QUESTIONS
    lines = q.read_text().splitlines()
    lines[2] = lines[2][:40]
    q.write_text("\n".join(lines) + "\n")
    rep = verify_folder(snap.path)
    assert any(p.file == layout.QUESTIONS and "line 3" in p.message for p in rep.problems)
    from okgen.errors import SchemaError

    with pytest.raises(SchemaError, match=r"questions.jsonl:3: broken JSON line"):
        _ = Snapshot(snap.path).questions
    (snap.path / layout.MANIFEST).write_text('{"schema_version": 1, "kind": "okgen-snap')
    rep = verify_folder(snap.path)
    assert [str(p) for p in rep.problems] == ["manifest.json: corrupted JSON (Unterminated string starting at)"] or (
        rep.problems[0].file == layout.MANIFEST and "corrupted JSON" in rep.problems[0].message
    )
    out = run_cli("snapshot", "verify", str(snap.path), home=workspace.home, ok=None)
    assert out.returncode == 1 and "corrupted JSON" in out.stderr and "Traceback" not in out.stderr


def test_archive_is_byte_identical(make_snapshot, tmp_path):
    snap = make_snapshot()
    a1 = make_archive(snap.path, tmp_path / "a1.tar.gz")
    a2 = make_archive(snap.path, tmp_path / "a2.tar.gz")
    assert a1.read_bytes() == a2.read_bytes()
    # Extract, touch every file's mtime, re-archive: still identical.
    folder = safe_extract(a1, tmp_path / "x")
    for p in folder.iterdir():
        p.touch()
    a3 = make_archive(folder, tmp_path / "a3.tar.gz")
    assert a3.read_bytes() == a1.read_bytes()
    with tarfile.open(a1) as tar:
        names = tar.getnames()
        assert names == sorted(names)
        assert all(m.mtime == tar.getmembers()[0].mtime and m.uid == 0 and m.uname == "" for m in tar.getmembers())
    assert verify_folder(folder).ok
    # The build's own archive is registered with its checksum.
    from okgen.snapshot.store import catalogue

    entry = catalogue(snap_ws(snap)).get_by_name(snap.name)
    assert entry.archive_sha256 == sha256_file(snap.path.parent / f"{snap.name}.tar.gz") == sha256_file(a1)


def snap_ws(snap):
    from okgen.settings import Workspace

    return Workspace(snap.path.parent.parent)


def _evil_archive(path: Path, members: list[tuple[tarfile.TarInfo, bytes | None]]) -> Path:
    with tarfile.open(path, "w:gz") as tar:
        for info, data in members:
            tar.addfile(info, io.BytesIO(data) if data is not None else None)
    return path


def _file(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    info = tarfile.TarInfo(name)
    info.size = len(data)
    return info, data


def _special(name: str, kind: bytes, linkname: str = "") -> tuple[tarfile.TarInfo, None]:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = linkname
    return info, None


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([_file("snap/ok.txt"), _file("snap/../../evil.txt")], "'..'"),
        ([_file("/tmp/evil-okgen.txt")], "absolute path"),
        ([_file("snap/ok.txt"), _special("snap/link", tarfile.SYMTYPE, "/etc/passwd")], "links are not allowed"),
        ([_file("snap/ok.txt"), _special("snap/hard", tarfile.LNKTYPE, "snap/ok.txt")], "links are not allowed"),
        ([_special("snap/dev", tarfile.CHRTYPE)], "devices"),
        ([_special("snap/fifo", tarfile.FIFOTYPE)], "devices"),
        ([_file("snap/big.bin", b"y" * 5000)], "over the"),
    ],
)
def test_unsafe_archives_are_refused(tmp_path, members, message):
    arch = _evil_archive(tmp_path / "evil.tar.gz", members)
    dest = tmp_path / "dest"
    with pytest.raises(ArchiveError, match=message):
        safe_extract(arch, dest, max_member_bytes=1000)
    # Nothing was written, inside or outside the target.
    assert not dest.exists() or not any(dest.rglob("*"))
    assert not (tmp_path / "evil.txt").exists()
    assert not Path("/tmp/evil-okgen.txt").exists()


def test_truncated_archive(make_snapshot, tmp_path, workspace):
    snap = make_snapshot()
    arch = snap.path.parent / f"{snap.name}.tar.gz"
    data = arch.read_bytes()
    bad = tmp_path / "trunc.tar.gz"
    bad.write_bytes(data[: len(data) // 2])
    with pytest.raises(ArchiveError, match="truncated or corrupted"):
        safe_extract(bad, tmp_path / "out")
    assert not (tmp_path / "out" / snap.name).exists()
    out = run_cli("snapshot", "verify", str(bad), home=workspace.home, ok=None)
    assert out.returncode == 1 and "truncated or corrupted" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    # A byte changed near the end (after the tar's end marker, in its zero padding): every
    # member still reads, but the gzip stream's CRC no longer matches; verify and extract refuse it.
    flipped = bytearray(data)
    flipped[-20] ^= 0xFF
    bad.write_bytes(bytes(flipped))
    with pytest.raises(ArchiveError, match="truncated or corrupted"):
        safe_extract(bad, tmp_path / "out2")
    out = run_cli("snapshot", "verify", str(bad), home=workspace.home, ok=None)
    assert out.returncode == 1 and "truncated or corrupted" in out.stderr


def test_resolve_by_every_reference(make_snapshot, workspace, tmp_path):
    snap = make_snapshot()
    sig = snap.signature
    for ref in (sig.format(), sig.short, sig.content_hash, sig.content_hash[:8], snap.name, str(snap.path)):
        assert resolve(ref, workspace).path == snap.path, ref
    # An eval signature resolves to its snapshot.
    from okgen.signature import EvalSignature

    ev = EvalSignature.from_snapshot(sig, setting="none", retriever="none", retriever_hash="none", ret_window=None, k=None,
                                     template="mc-v1", scoring="loglik", answer_format="mc", eval_temperature=0.0,
                                     eval_max_tokens=1, eval_seed=0, judge="none")
    assert resolve(ev.short, workspace).path == snap.path
    # A score reported by a later okgen: its eval signature's version is that okgen's, not the
    # snapshot's; it still names this snapshot, and the snapshot verifies against it.
    from okgen.signature import expected_snapshot
    from okgen.snapshot.verify import verify_folder

    later = ev.model_copy(update={"version": "9.9.9"})
    assert resolve(later.format(), workspace).path == snap.path
    assert verify_folder(snap.path, expected_snapshot(later.format(), snap.signature)).ok
    assert not verify_folder(snap.path, later.snapshot_signature()).ok  # as it was compared before
    # A record this okgen cannot parse (another okgen's), of the same hash: looked past, not an error.
    import json

    rec = next(workspace.signatures_dir.glob(f"{snap.name}.json"))
    other = json.loads(rec.read_text())
    other.update(name=snap.name + "-other", signature=other["signature"].replace("version:", "vers:"))
    (rec.parent / f"{snap.name}-other.json").write_text(json.dumps(other))
    assert resolve(later.format(), workspace).path == snap.path and resolve(sig.format(), workspace).path == snap.path
    with pytest.raises(OkgenError, match="no snapshot"):
        resolve(sig.format().replace(sig.content_hash, "f" * 64), workspace)
    with pytest.raises(OkgenError, match="no snapshot matches"):
        resolve("deadbeef00", workspace)
    # The questions are here, another field was given otherwise: said so, not "pull it".
    other = sig.model_copy(update={"questions": sig.questions + 1}).format()
    with pytest.raises(OkgenError, match=rf"has hash {sig.short_hash} but its signature differs from the one given in "
                                         rf"n: {sig.questions} \(given {sig.questions + 1}\)$"):
        resolve(other, workspace)


def test_resolve_archive_into_fresh_workspace(make_snapshot, tmp_path):
    from okgen.settings import Workspace

    snap = make_snapshot()
    arch = snap.path.parent / f"{snap.name}.tar.gz"
    other = Workspace(tmp_path / "other")
    got = resolve(str(arch), other)
    assert got.path == other.snapshots_dir / snap.name
    assert verify_folder(got.path).ok
    assert resolve(snap.signature.short, other).path == got.path


def test_failed_build_leaves_nothing(workspace, synthetic_records, monkeypatch):
    from okgen.schema import AgentInfo
    from okgen.snapshot import build as build_mod

    articles, questions = synthetic_records

    def boom(*a, **k):
        raise RuntimeError("disk full")

    monkeypatch.setattr(build_mod, "render_datacard", boom)
    with pytest.raises(RuntimeError):
        build_mod.build_snapshot(questions, articles, date=SNAP_DATE, generator=AgentInfo(model="x"), prompt_hash="a" * 12,
                                 feeds_hash="b" * 12, seed=1, workspace=workspace)
    assert not any(workspace.snapshots_dir.iterdir())
    assert not workspace.signatures_dir.exists() or not any(workspace.signatures_dir.iterdir())


def test_build_refuses_future_and_orphans(workspace, synthetic_records):
    from okgen.schema import AgentInfo
    from okgen.snapshot.build import build_snapshot

    articles, questions = synthetic_records
    late = articles[0].model_copy(update={"date": SNAP_DATE + dt.timedelta(days=1), "id": "f" * 16})
    common = dict(date=SNAP_DATE, generator=AgentInfo(model="x"), prompt_hash="a" * 12, feeds_hash="b" * 12, seed=1, workspace=workspace)
    with pytest.raises(OkgenError, match="after the snapshot date"):
        build_snapshot(questions, [*articles, late], **common)
    with pytest.raises(OkgenError, match="not in the corpus"):
        build_snapshot(questions, [a for a in articles if a.id != questions[0].article_id], **common)
    with pytest.raises(OkgenError, match=f"corpus holds article {articles[1].id} 2 times"):
        build_snapshot(questions, [*articles, articles[1]], **common)
    with pytest.raises(OkgenError, match=f"question {questions[0].id} appears 2 times"):
        build_snapshot([*questions, questions[0]], articles, **common)


def test_cli_ls_show_verify(make_snapshot, workspace):
    snap = make_snapshot()
    out = run_cli("--json", "snapshot", "ls", home=workspace.home)
    rows = json.loads(out.stdout)
    assert rows[0]["name"] == snap.name and rows[0]["questions"] == len(snap.questions)
    out = run_cli("snapshot", "show", snap.signature.short, home=workspace.home)
    assert snap.manifest.signature in out.stdout
    out = run_cli("--json", "snapshot", "verify", snap.signature.format(), home=workspace.home)
    assert json.loads(out.stdout)["ok"] is True
    arch = snap.path.parent / f"{snap.name}.tar.gz"
    out = run_cli("snapshot", "verify", str(arch), home=workspace.home)
    assert out.stdout.startswith("ok:")
    # Tamper: one byte in the corpus; verify by signature fails naming the file.
    p = snap.path / layout.CORPUS
    data = bytearray(p.read_bytes())
    data[100] ^= 0x01
    p.write_bytes(bytes(data))
    out = run_cli("snapshot", "verify", snap.signature.short, home=workspace.home, ok=None)
    assert out.returncode == 1
    assert "FAIL corpus.jsonl: SHA-256 mismatch" in out.stderr
    assert out.stderr.strip().splitlines()[-1].startswith("okgen: error:")
