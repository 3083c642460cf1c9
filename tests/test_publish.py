"""publish -> pull -> verify round trips, signing, tampering, no-text releases."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from okgen.errors import IntegrityError
from okgen.settings import Workspace
from okgen.snapshot import layout
from okgen.snapshot.publish import publish, pull, read_index
from okgen.snapshot.signing import generate_keypair, sign_manifest, verify_manifest_signature
from okgen.snapshot.verify import verify_folder


def cli(*args, home):
    return subprocess.run([sys.executable, "-m", "okgen", "--home", str(home), *args], capture_output=True, text=True)


def test_publish_pull_verify_unsigned(make_snapshot, workspace, tmp_path):
    snap = make_snapshot()
    dest = tmp_path / "pub"
    entry = publish(snap, str(dest), workspace)
    assert (dest / entry["archive"]).is_file()
    index = json.loads((dest / "index.json").read_text())
    assert index["snapshots"][0]["signature"] == snap.manifest.signature
    other = Workspace(tmp_path / "other")
    got = pull(snap.signature.short, str(dest), other)
    assert verify_folder(got.path).ok
    assert got.manifest == snap.manifest
    assert (got.path / layout.QUESTIONS).read_bytes() == (snap.path / layout.QUESTIONS).read_bytes()
    # Registered locally with its source; resolvable by hash.
    from okgen.snapshot.store import catalogue, resolve

    assert resolve(snap.manifest.content_hash[:10], other).path == got.path
    assert catalogue(other).get_by_name(got.name).sources == (str(dest),)


def test_signed_round_trip_and_wrong_key(make_snapshot, workspace, tmp_path):
    snap = make_snapshot()
    priv, pub = generate_keypair(tmp_path / "k" / "okgen.key")
    _, other_pub = generate_keypair(tmp_path / "k2" / "other.key")
    dest = tmp_path / "pub"
    entry = publish(snap, str(dest), workspace, sign_key=priv)
    assert entry["signed"] and len(entry["key_id"]) == 16
    assert (snap.path / layout.MANIFEST_SIG).is_file()  # local copy signed too
    ws2 = Workspace(tmp_path / "w2")
    got = pull(snap.signature.format(), str(dest), ws2, pubkey=pub)
    assert verify_manifest_signature(got.path, pub) == entry["key_id"]
    with pytest.raises(IntegrityError, match="made with key"):
        pull(snap.signature.format(), str(dest), Workspace(tmp_path / "w3"), pubkey=other_pub)
    assert not (tmp_path / "w3" / "snapshots").exists()  # a failed first pull leaves no empty folder behind
    ws2_before = sorted(p.name for p in ws2.snapshots_dir.iterdir())
    with pytest.raises(IntegrityError, match="made with key"):  # nor removes a workspace's own snapshots
        pull(snap.signature.format(), str(dest), Workspace(tmp_path / "w2"), pubkey=other_pub)
    assert sorted(p.name for p in ws2.snapshots_dir.iterdir()) == ws2_before != []
    # CLI verify with the right and the wrong key.
    ok = cli("snapshot", "verify", str(got.path), "--pubkey", str(pub), home=ws2.home)
    assert ok.returncode == 0 and "manifest signature verified" in ok.stdout
    bad = cli("snapshot", "verify", str(got.path), "--pubkey", str(other_pub), home=ws2.home)
    assert bad.returncode == 1 and "manifest.sig" in bad.stderr


def test_signature_detects_a_manifest_edit(make_snapshot, tmp_path):
    snap = make_snapshot()
    priv, pub = generate_keypair(tmp_path / "okgen.key")
    sign_manifest(snap.path, priv)
    verify_manifest_signature(snap.path, pub)
    p = snap.path / layout.MANIFEST
    p.write_text(p.read_text().replace('"seed": 13', '"seed": 14'))
    with pytest.raises(IntegrityError, match="does not match"):
        verify_manifest_signature(snap.path, pub)


def test_tampered_archive_is_refused(make_snapshot, workspace, tmp_path):
    snap = make_snapshot()
    dest = tmp_path / "pub"
    entry = publish(snap, str(dest), workspace)
    arch = dest / entry["archive"]
    data = bytearray(arch.read_bytes())
    data[len(data) // 2] ^= 0xFF
    arch.write_bytes(bytes(data))
    ws2 = Workspace(tmp_path / "w2")
    with pytest.raises(IntegrityError, match="differs from the index"):
        pull(snap.signature.short, str(dest), ws2)
    assert not ws2.snapshots_dir.exists() or not [p for p in ws2.snapshots_dir.iterdir() if not p.name.startswith(".")]
    out = cli("pull", snap.signature.short, "--from", str(dest), home=ws2.home)
    assert out.returncode == 1 and "refusing it" in out.stderr and "Traceback" not in out.stderr


def test_consistent_but_tampered_index_is_caught_by_verify(make_snapshot, workspace, tmp_path):
    # Someone rewrites a question inside the archive and updates the index checksum:
    # the content hash in the signature still catches it.
    import tarfile

    from okgen.hashing import sha256_file
    from okgen.snapshot.archive import make_archive, safe_extract

    snap = make_snapshot()
    dest = tmp_path / "pub"
    entry = publish(snap, str(dest), workspace)
    folder = safe_extract(dest / entry["archive"], tmp_path / "x")
    q = folder / layout.QUESTIONS
    q.write_text(q.read_text().replace('"answer_index":0', '"answer_index":0 ', 1))
    make_archive(folder, dest / entry["archive"])
    index = read_index(str(dest))
    index["snapshots"][0]["sha256"] = sha256_file(dest / entry["archive"])
    (dest / "index.json").write_text(json.dumps(index))
    with pytest.raises(IntegrityError, match="questions.jsonl"):
        pull(snap.signature.short, str(dest), Workspace(tmp_path / "w2"))
    assert tarfile.is_tarfile(dest / entry["archive"])


def test_no_text_release_and_fsspec_memory(make_snapshot, workspace, tmp_path, caplog):
    snap = make_snapshot()
    entry = publish(snap, "memory://okgen-test-pub", workspace, no_text=True)
    assert entry["text_included"] is False and entry["archive"].endswith(".notext.tar.gz")
    full = publish(snap, "memory://okgen-test-pub", workspace)
    index = read_index("memory://okgen-test-pub")
    assert len(index["snapshots"]) == 2
    ws2 = Workspace(tmp_path / "w2")
    bare = pull(snap.signature.short, "memory://okgen-test-pub", ws2, prefer_text=False)
    assert not bare.manifest.text_included
    assert all(a.text == "" and a.text_sha256 for a in bare.corpus)
    assert bare.signature == snap.signature
    assert verify_folder(bare.path).ok
    # Scoring with the article on a no-text release fails in one line before any run, with no
    # warning about empty articles first; the no-context setting still runs.
    import logging

    from okgen.errors import ConfigError
    from okgen.eval.runner import EvalOptions, plan_runs, run_eval

    with caplog.at_level(logging.WARNING, logger="okgen.eval.runner"):
        with pytest.raises(ConfigError, match="released without article texts: the oracle setting needs them"):
            run_eval(snap.signature.short, "random/seed0", plan_runs(["none", "oracle"]), EvalOptions(), workspace=ws2,
                     out=tmp_path / "bare-runs")
    assert not any("empty article" in r.getMessage() for r in caplog.records)
    assert not (tmp_path / "bare-runs").exists()  # nothing scored before the refusal
    none = run_eval(snap.signature.short, "random/seed0", plan_runs(["none"]), EvalOptions(), workspace=ws2,
                    out=tmp_path / "bare-none")
    assert none[0].record.n == len(bare.questions)
    # Its hf export says the texts are missing: null, not "", and the card tells how to restore them.
    import pyarrow.parquet as pq

    from okgen.eval.export import export_snapshot

    export_snapshot(bare, "hf", tmp_path / "bare-hf")
    texts = pq.read_table(tmp_path / "bare-hf" / "data" / "corpus-00000-of-00001.parquet").column("text").to_pylist()
    assert texts and all(t is None for t in texts)
    assert "this release has no article texts" in (tmp_path / "bare-hf" / "README.md").read_text()
    ws3 = Workspace(tmp_path / "w3")
    rich = pull(snap.signature.short, "memory://okgen-test-pub", ws3)
    assert rich.manifest.text_included and rich.corpus == snap.corpus
    assert full["sha256"] != entry["sha256"]


def test_keygen_cli(tmp_path):
    out = cli("keygen", "--out", str(tmp_path / "k.key"), home=tmp_path)
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "k.key").stat().st_mode & 0o777 == 0o600
    again = cli("keygen", "--out", str(tmp_path / "k.key"), home=tmp_path)
    assert again.returncode == 1 and "already exists" in again.stderr


def test_pull_by_date_and_a_source_with_nothing_published(make_snapshot, workspace, tmp_path):
    from okgen.errors import NotFoundError

    snap = make_snapshot()
    dest = tmp_path / "pub"
    publish(snap, str(dest), workspace)
    got = pull(str(snap.manifest.date), str(dest), Workspace(tmp_path / "by-date"))  # the day's newest
    assert got.manifest == snap.manifest
    with pytest.raises(NotFoundError, match="no published snapshot matches '1999-01-01'"):
        pull("1999-01-01", str(dest), Workspace(tmp_path / "none"))
    with pytest.raises(NotFoundError, match="nowhere: no such folder; check --from"):
        pull(snap.signature.short, str(tmp_path / "nowhere"), Workspace(tmp_path / "w"))
    assert not (tmp_path / "nowhere").exists()
    (tmp_path / "empty").mkdir()
    with pytest.raises(NotFoundError, match="no snapshot is published there"):
        pull(snap.signature.short, str(tmp_path / "empty"), Workspace(tmp_path / "w"))


def test_an_unreachable_server_or_destination_is_said_so(make_snapshot, workspace, tmp_path):
    # fsspec's exists() is False for a server it cannot reach: that read as "nothing published".
    import socket

    from okgen.errors import ConfigError, OkgenError

    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(OkgenError, match=rf"cannot read http://127.0.0.1:{port}/index.json: Cannot connect"):
        read_index(f"http://127.0.0.1:{port}")
    snap = make_snapshot()
    with pytest.raises(ConfigError, match="an http\\(s\\) URL is read-only here"):
        publish(snap, f"http://127.0.0.1:{port}", workspace)
    a_file = tmp_path / "archive.tar.gz"
    a_file.write_bytes(b"x")
    with pytest.raises(OkgenError, match=rf"cannot write archives/.*\.tar\.gz to {a_file}: Not a directory"):
        publish(snap, str(a_file), workspace)
    out = cli("publish", snap.name, "--to", str(a_file), home=workspace.home)
    assert out.returncode == 1 and out.stderr.startswith("okgen: error: cannot write") and "internal" not in out.stderr


def test_the_signature_covers_the_quality_evidence(make_snapshot, workspace, tmp_path):
    # quality.json is outside the manifest (reviews arrive later), so it was signed by nothing:
    # a server could rewrite the evidence of a signed release unnoticed.
    from okgen.snapshot.signing import quality_signed

    snap = make_snapshot()
    priv, pub = generate_keypair(tmp_path / "k" / "okgen.key")
    dest = tmp_path / "pub"
    publish(snap, str(dest), workspace, sign_key=priv)
    ws2 = Workspace(tmp_path / "w2")
    got = pull(snap.signature.short, str(dest), ws2, pubkey=pub)
    assert quality_signed(got.path)
    ok = cli("snapshot", "verify", str(got.path), "--pubkey", str(pub), home=ws2.home)
    assert ok.returncode == 0 and "quality.json signed too" in ok.stdout, ok.stdout
    q = got.path / layout.QUALITY
    honest = q.read_bytes()
    q.write_bytes(honest.replace(b'"outlets"', b'"outlets" ', 1))  # any changed byte
    bad = cli("snapshot", "verify", str(got.path), "--pubkey", str(pub), home=ws2.home)
    assert bad.returncode == 1 and "quality.json changed since it was signed" in bad.stderr, bad.stderr
    with pytest.raises(IntegrityError, match="quality.json changed since it was signed"):
        verify_manifest_signature(got.path, pub)
    q.write_bytes(honest)
    # A review recorded after the release is the reviewers' word: the signature stops covering it.
    sheet_dir = tmp_path / "rev"
    assert cli("review", got.name, "--sample", "3", "--out", str(sheet_dir), home=ws2.home).returncode == 0
    from okgen.testing.review import fill

    fill(next(sheet_dir.glob("*.csv")), "ana")
    assert cli("review", "import", str(next(sheet_dir.glob("*.csv"))), home=ws2.home).returncode == 0
    assert not quality_signed(got.path) and verify_manifest_signature(got.path, pub)
    ok = cli("snapshot", "verify", str(got.path), "--pubkey", str(pub), home=ws2.home)
    assert ok.returncode == 0 and "quality.json not covered by it" in ok.stdout, ok.stdout


def test_hydrate_offline_says_no_network(make_snapshot, workspace, tmp_path, monkeypatch):
    # Every fetch failing at DNS (a machine offline): the articles are unreachable, not vanished,
    # and the one-line error asks whether there is a network.
    from click.testing import CliRunner

    import okgen.snapshot.hydrate as hydrate_mod
    from okgen.cli.main import cli

    snap = make_snapshot()
    publish(snap, "memory://okgen-test-offline", workspace, no_text=True)
    ws2 = Workspace(tmp_path / "w2")
    pull(snap.signature.short, "memory://okgen-test-offline", ws2, prefer_text=False)

    async def offline(todo, cfg, progress):
        return {a.id: {"error": "dns_error"} for a in todo}

    monkeypatch.setattr(hydrate_mod, "_fetch_all", offline)
    r = CliRunner().invoke(cli, ["--home", str(ws2.home), "hydrate", snap.signature.short])
    n = len(snap.corpus)
    assert f"0 vanished, {n} unreachable" in r.output, r.output
    assert r.exception is not None and "no network?" in str(r.exception) and "\n" not in str(r.exception)


def test_hydrate_offline_stops_asking_once_no_host_resolves(make_snapshot, workspace, tmp_path, monkeypatch):
    # 570 pages at ~5/s took two minutes to say "no network?": one page of each host is asked
    # first, and when every host failed at DNS the rest are not asked for. A dead host among
    # live ones stops nothing.
    from urllib.parse import urlsplit

    import okgen.snapshot.hydrate as hydrate_mod
    from okgen.errors import OkgenError
    from okgen.ingest.fetch import Fetcher, FetchResult
    from okgen.snapshot.hydrate import hydrate

    snap = make_snapshot()
    publish(snap, "memory://okgen-test-dns", workspace, no_text=True)
    ws2 = Workspace(tmp_path / "w2")
    notext = pull(snap.signature.short, "memory://okgen-test-dns", ws2, prefer_text=False)
    hosts = {urlsplit(a.url).hostname for a in snap.corpus}
    assert len(snap.corpus) > len(hosts)
    monkeypatch.setattr(hydrate_mod, "OFFLINE_HOSTS", 1)  # the fixture's news is of one host
    asked: list[str] = []
    dead: set[str] = set(hosts)

    async def fetch(self, url, kind="article", **kw):
        asked.append(url)
        if urlsplit(url).hostname in dead:
            return FetchResult(url, kind, error="dns_error")
        return FetchResult(url, kind, status=404, error="http_404")

    monkeypatch.setattr(Fetcher, "fetch", fetch)
    _, report = hydrate(notext, ws2)
    assert len(asked) == len(hosts) and len(report.unreachable) == len(snap.corpus)  # the rest "not fetched"
    from click.testing import CliRunner

    from okgen.cli.main import cli

    r = CliRunner().invoke(cli, ["--home", str(ws2.home), "hydrate", snap.signature.short])
    assert isinstance(r.exception, OkgenError) and "no host name resolved: no network?" in str(r.exception)
    # One host dead, the others answering (later, as a live host does): every page is asked for.
    import asyncio

    from okgen.ingest.config import config_for

    pages = [(a, h) for a in snap.corpus for h in ("rivertown", "lakeport", "orbis")]
    many = [a.model_copy(update={"id": f"{n:016x}", "url": f"https://{h}.example/{n}"}) for n, (a, h) in enumerate(pages)]
    asked.clear()
    dead = {"rivertown.example"}
    asyncio.run(hydrate_mod._fetch_all(many, config_for(ws2), False))
    assert len(asked) == len(many)
    asked.clear()
    dead = {"rivertown.example", "lakeport.example", "orbis.example"}  # offline: each host fails
    monkeypatch.setattr(hydrate_mod, "OFFLINE_HOSTS", 3)
    got = asyncio.run(hydrate_mod._fetch_all(many, config_for(ws2), False))
    assert len(asked) == 3 and sum(v["error"] == "not fetched" for v in got.values()) == len(many) - 3


def test_the_catalogue_records_a_folder_as_an_absolute_path(make_snapshot, workspace, tmp_path, monkeypatch, caplog):
    from okgen.snapshot.store import catalogue

    snap = make_snapshot()
    monkeypatch.chdir(tmp_path)
    publish(snap, "pub", workspace)
    publish(snap, str(tmp_path / "pub"), workspace)  # the same folder: one source, not two
    assert catalogue(workspace).get_by_name(snap.name).sources == (str((tmp_path / "pub").resolve()),)
    # A local copy that fails verification is replaced by the published one, and said so.
    other = Workspace(tmp_path / "other")
    got = pull(snap.name, "pub", other)
    (got.path / layout.QUESTIONS).write_text("broken\n")
    with caplog.at_level("WARNING", logger="okgen.snapshot.publish"):
        again = pull(snap.name, "pub", other)
    assert verify_folder(again.path).ok
    assert any("replacing the local copy" in r.getMessage() and "fails verification" in r.getMessage()
               for r in caplog.records)


def test_an_archive_the_server_refuses_is_one_line(make_snapshot, workspace, tmp_path):
    # The index is readable, the archive is not (403): a one-line error, nothing left behind.
    import http.server
    import threading
    from functools import partial

    from okgen.errors import OkgenError

    snap = make_snapshot()
    dest = tmp_path / "pub"
    publish(snap, str(dest), workspace)

    class Refusing(http.server.SimpleHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 - http.server's name
            if "/archives/" in self.path:
                self.send_error(403)
            else:
                super().do_GET()

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), partial(Refusing, directory=str(dest)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        other = Workspace(tmp_path / "other")
        url = f"http://127.0.0.1:{server.server_address[1]}"
        with pytest.raises(OkgenError, match=rf"^cannot download {url}/archives/.*\.tar\.gz: .*403"):
            pull(snap.name, url, other)
        assert not any((other.snapshots_dir).glob("2*"))
    finally:
        server.shutdown()


def test_signatures_are_recorded_only_when_verified(make_snapshot, workspace, tmp_path):
    """The catalogue's `signed` means verified here; a pull with --pubkey of a snapshot held
    unsigned adds the signature; an unsigned publish after a signed one publishes none."""
    import shutil

    from okgen.snapshot.store import catalogue

    snap = make_snapshot()
    priv, pub = generate_keypair(tmp_path / "k" / "okgen.key")
    unsigned_dest, signed_dest = tmp_path / "plain", tmp_path / "signed"
    publish(snap, str(unsigned_dest), workspace)  # before any signing: the folder has no manifest.sig
    ws2 = Workspace(tmp_path / "w2")
    got = pull(snap.signature.short, str(unsigned_dest), ws2)
    assert not (got.path / layout.MANIFEST_SIG).exists() and not catalogue(ws2).get_by_name(got.name).signed
    publish(snap, str(signed_dest), workspace, sign_key=priv)
    # Held unsigned, pulled again with --pubkey: the verified signature joins the local copy.
    got = pull(snap.signature.short, str(signed_dest), ws2, pubkey=pub)
    assert verify_manifest_signature(got.path, pub) and catalogue(ws2).get_by_name(got.name).signed
    r = cli("--json", "pull", snap.signature.short, "--from", str(signed_dest), "--pubkey", str(pub), home=ws2.home)
    out = json.loads(r.stdout)
    assert r.returncode == 0 and out["signed"] and len(out["key_id"]) == 16 and not out["unchecked_signature"]
    # A signature nobody checked: kept, but not recorded as signed, and verify says so.
    ws3 = Workspace(tmp_path / "w3")
    got3 = pull(snap.signature.short, str(signed_dest), ws3)
    assert (got3.path / layout.MANIFEST_SIG).is_file() and not catalogue(ws3).get_by_name(got3.name).signed
    r = cli("snapshot", "verify", snap.signature.short, home=ws3.home)
    assert r.returncode == 0 and "manifest.sig, not checked: give --pubkey" in r.stdout, r.stdout + r.stderr
    # An unsigned publish of the (now locally signed) snapshot publishes no signature.
    assert (snap.path / layout.MANIFEST_SIG).is_file()
    again = publish(snap, str(tmp_path / "plain2"), workspace)
    assert not again["signed"]
    with pytest.raises(IntegrityError, match="not signed"):
        pull(snap.signature.short, str(tmp_path / "plain2"), Workspace(tmp_path / "w4"), pubkey=pub)
    shutil.rmtree(tmp_path / "w4", ignore_errors=True)


def test_a_failed_upload_changes_nothing_locally(make_snapshot, workspace, tmp_path):
    snap = make_snapshot()
    priv, _ = generate_keypair(tmp_path / "k" / "okgen.key")
    (tmp_path / "afile").write_text("not a folder")
    before = {p.name: p.read_bytes() for p in snap.path.parent.glob(f"{snap.name}*") if p.is_file()}
    with pytest.raises(Exception, match="afile"):
        publish(snap, str(tmp_path / "afile" / "sub"), workspace, sign_key=priv)
    assert not (snap.path / layout.MANIFEST_SIG).exists()
    assert {p.name: p.read_bytes() for p in snap.path.parent.glob(f"{snap.name}*") if p.is_file()} == before
    r = cli("snapshot", "verify", snap.signature.short, home=workspace.home)
    assert r.returncode == 0, r.stderr


def test_a_hydration_that_restores_nothing_keeps_the_release_as_it_came(make_snapshot, workspace, tmp_path, monkeypatch):
    import okgen.snapshot.hydrate as hydrate_mod
    from okgen.snapshot.hydrate import hydrate

    snap = make_snapshot()
    priv, pub = generate_keypair(tmp_path / "k" / "okgen.key")
    publish(snap, str(tmp_path / "pub"), workspace, no_text=True, sign_key=priv)
    ws2 = Workspace(tmp_path / "w2")
    bare = pull(snap.signature.short, str(tmp_path / "pub"), ws2, prefer_text=False, pubkey=pub)
    before = {p.name: p.read_bytes() for p in bare.path.iterdir()}

    async def offline(todo, cfg, progress):
        return {a.id: {"error": "dns_error"} for a in todo}

    monkeypatch.setattr(hydrate_mod, "_fetch_all", offline)
    _, report = hydrate(bare, ws2)
    assert not report.matched and report.unreachable
    assert {p.name: p.read_bytes() for p in bare.path.iterdir()} == before  # manifest.sig included
    assert verify_manifest_signature(bare.path, pub)


def test_an_index_or_archive_name_that_lies_about_its_snapshot_is_refused(make_snapshot, workspace, tmp_path):
    """A ref by date, hash or name is matched against the index's fields: an index that gives
    one snapshot another's date, or an archive whose folder carries another snapshot's name, is
    refused (before, the wrong snapshot was registered with exit 0, under --pubkey too)."""
    import datetime as dt
    import shutil

    from okgen.hashing import sha256_file
    from okgen.snapshot.archive import make_archive, safe_extract

    snap = make_snapshot()
    dest = tmp_path / "pub"
    entry = publish(snap, str(dest), workspace)
    index = read_index(str(dest))
    index["snapshots"][0]["date"] = "2026-11-19"
    (dest / "index.json").write_text(json.dumps(index))
    ws2 = Workspace(tmp_path / "w2")
    with pytest.raises(IntegrityError, match="index.json gives date '2026-11-19'"):
        pull("2026-11-19", str(dest), ws2)
    assert not ws2.snapshots_dir.exists() or not [p for p in ws2.snapshots_dir.iterdir() if not p.name.startswith(".")]
    # The same archive under another snapshot's folder name.
    folder = safe_extract(dest / entry["archive"], tmp_path / "x")
    other = tmp_path / "x" / f"{dt.date(2026, 11, 19)}_20261119T060000Z_{'0' * 12}"
    shutil.move(str(folder), other)
    make_archive(other, dest / entry["archive"])
    index["snapshots"][0].update(date=entry["date"], sha256=sha256_file(dest / entry["archive"]))
    (dest / "index.json").write_text(json.dumps(index))
    with pytest.raises(IntegrityError, match=f"its folder is named {other.name}, but its manifest makes it {snap.name}"):
        pull(snap.signature.format(), str(dest), ws2)


def test_hydrate_does_not_fetch_texts_that_came_from_a_news_dump(make_snapshot, synthetic_records, workspace,
                                                                 tmp_path, monkeypatch):
    """An imported article's text came from a dump, not a page okgen extracted: hydrate reports
    it as imported (with what to do) instead of fetching it and calling the page changed."""
    from click.testing import CliRunner

    import okgen.snapshot.hydrate as hydrate_mod
    from okgen.cli.main import cli as okgen_cli

    articles, _ = synthetic_records
    dumped = {a.id for a in articles[::2]}
    corpus = [a.model_copy(update={"extractor": "okgen-import==0.1.0"}) if a.id in dumped else a for a in articles]
    snap = make_snapshot(corpus=corpus)
    publish(snap, str(tmp_path / "pub"), workspace, no_text=True)
    ws2 = Workspace(tmp_path / "w2")
    bare = pull(snap.signature.short, str(tmp_path / "pub"), ws2, prefer_text=False)
    asked: list[str] = []

    async def fetch(todo, cfg, progress):
        asked.extend(a.id for a in todo)
        return {a.id: {"text": a.text} for a in snap.corpus if a.id in {t.id for t in todo}}

    monkeypatch.setattr(hydrate_mod, "_fetch_all", fetch)
    r = CliRunner().invoke(okgen_cli, ["--home", str(ws2.home), "hydrate", snap.signature.short])
    in_corpus = {a.id for a in bare.corpus}
    assert asked and not set(asked) & dumped
    assert f"{len(dumped & in_corpus)} imported" in r.output, r.output
    assert r.exception is not None and "came from a news dump" in str(r.exception)
    # With the dump's articles in this workspace's store, their texts come back from there.
    from okgen.ingest.store import ArticleStore

    with ArticleStore(ws2.db_path) as store:
        for a in snap.corpus:
            if a.id in dumped:
                store.upsert(a)
    asked.clear()
    r = CliRunner().invoke(okgen_cli, ["--home", str(ws2.home), "hydrate", snap.signature.short])
    assert r.exit_code == 0, r.output
    assert not asked and "the snapshot is complete again" in r.output  # the rest were restored the first time


def test_a_no_text_releases_signature_never_lands_on_a_full_copy(make_snapshot, workspace, tmp_path):
    """It signs the no-text manifest: copied onto the full copy held locally, the catalogue said
    "signed" of a signature that does not verify there."""
    from okgen.snapshot.store import catalogue

    snap = make_snapshot()
    priv, pub = generate_keypair(tmp_path / "k" / "okgen.key")
    publish(snap, str(tmp_path / "plain"), workspace)
    publish(snap, str(tmp_path / "signed"), workspace, no_text=True, sign_key=priv)
    ws2 = Workspace(tmp_path / "w2")
    pull(snap.signature.short, str(tmp_path / "plain"), ws2)
    got = pull(snap.signature.short, str(tmp_path / "signed"), ws2, pubkey=pub)
    assert got.manifest.text_included and not (got.path / layout.MANIFEST_SIG).exists()
    assert not catalogue(ws2).get_by_name(got.name).signed


def test_the_data_card_tells_the_snapshots_own_windows(make_snapshot):
    snap = make_snapshot()
    card = (snap.path / layout.README).read_text(encoding="utf-8")
    windows = ",".join(str(w) for w in sorted(snap.manifest.windows))
    assert f"--retrievers bm25 --windows {windows}\n" in card


def test_gc_keeps_the_indexes_of_a_snapshot_held_as_an_archive(make_snapshot, workspace, tmp_path):
    """A snapshot whose folder is gone but whose archive is catalogued is in the workspace
    (`snapshot show` restores it): gc called it "no such snapshot" and deleted its indexes."""
    import datetime as dt
    import shutil

    from okgen.daily.gc import collect_garbage

    snap = make_snapshot()
    index = workspace.index_dir / snap.manifest.content_hash[:12]
    index.mkdir(parents=True)
    (index / "keep.txt").write_text("x")
    shutil.move(str(snap.path), str(tmp_path / "aside"))
    assert (snap.path.parent / f"{snap.name}.tar.gz").is_file()
    rep = collect_garbage(workspace, 1, today=snap.manifest.date + dt.timedelta(days=1))
    assert index.is_dir() and not rep.indexes
