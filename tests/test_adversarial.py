"""Hostile input: wrong charsets, crafted archives and indexes, bad prefixes, bad config."""

from __future__ import annotations

from okgen.ingest.extract import decode_html, extract_page

LATIN1_PAGE = ("<html><head><title>Café in Zürich</title></head><body><article><h1>Café in Zürich</h1>"
               + "<p>The café in Zürich opened its doors again this week after a long renovation. " * 3
               + "Owners said the crème brûlée was back on the menu and the façade was restored.</p>" * 4
               + "</article></body></html>")


def test_a_wrong_declared_charset_is_overruled_by_the_bytes():
    body = LATIN1_PAGE.encode("latin-1")
    text, enc = decode_html(body, "koi8-r")
    assert "Café in Zürich" in text and enc in ("cp1252", "iso8859-1", "latin_1")
    page = extract_page(body, "http://news.example/cafe", "koi8-r")
    assert "Zürich" in page["title"] + page["text"] and "ZЭrich" not in page["text"]


def test_a_right_declared_charset_is_kept():
    ru = ("<html><body><p>Правительство объявило в среду о снижении налогов для малого бизнеса. "
          "Министр сказал, что изменения коснутся и тех предпринимателей, которые раньше не пользовались "
          "программой поддержки.</p></body></html>")
    assert decode_html(ru.encode("koi8-r"), "koi8-r") == (ru, "koi8-r")
    pl = ("<p>Rząd ogłosił w środę, że od przyszłego roku zmniejszy podatki dla małych firm. Minister powiedział, "
          "że zmiana obejmie również przedsiębiorców, którzy dotąd nie korzystali z programu wsparcia.</p>")
    assert decode_html(pl.encode("cp1250"), "windows-1250") == (pl, "cp1250")
    fr = "<p>Le président a annoncé mercredi une réforme du système de santé.</p>"
    assert decode_html(fr.encode("cp1252"), "latin-1") == (fr, "cp1252")


# ------------------------------------------------------------------------------ archives
def _cli(*args, home):
    import os
    import subprocess
    import sys

    env = dict(os.environ, OKGEN_HOME=str(home), OKGEN_NO_PROGRESS="1")
    return subprocess.run([sys.executable, "-m", "okgen", *args], capture_output=True, text=True, env=env)


def _tampered_copy(snap, tmp_path, change):
    """A copy of a snapshot folder changed by ``change(folder)``, archived deterministically."""
    import shutil

    from okgen.snapshot.archive import make_archive

    folder = tmp_path / "src" / snap.name
    shutil.copytree(snap.path, folder)
    change(folder)
    return make_archive(folder, tmp_path / "evil.tar.gz")


def test_extract_refuses_a_flipped_byte_and_registers_nothing(make_snapshot, tmp_path):
    from okgen.snapshot import layout

    snap = make_snapshot()

    def flip(folder):
        p = folder / layout.QUESTIONS
        data = bytearray(p.read_bytes())
        data[100] ^= 0x01
        p.write_bytes(bytes(data))

    archive = _tampered_copy(snap, tmp_path, flip)
    home = tmp_path / "other"
    out = _cli("snapshot", "extract", str(archive), home=home)
    assert out.returncode == 1 and "does not match its manifest" in out.stderr, out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
    assert not (home / "snapshots" / snap.name).exists()
    assert not (home / "snapshots" / "catalogue.jsonl").exists() or snap.name not in (
        home / "snapshots" / "catalogue.jsonl").read_text()
    assert _cli("snapshot", "ls", "--json", home=home).stdout.strip() in ("[]", "")


def test_extract_refuses_a_member_the_manifest_does_not_list(make_snapshot, tmp_path):
    snap = make_snapshot()
    archive = _tampered_copy(snap, tmp_path, lambda f: (f / "filler.bin").write_bytes(b"\0" * (4 << 20)))
    home = tmp_path / "other"
    out = _cli("snapshot", "extract", str(archive), home=home)
    assert out.returncode == 1 and "not listed in the manifest" in out.stderr
    assert not (home / "snapshots").exists() or not any((home / "snapshots").rglob("filler.bin"))


def test_pull_stays_in_the_publication_folder(make_snapshot, workspace, tmp_path):
    import json

    import pytest

    from okgen.errors import IntegrityError
    from okgen.settings import Workspace
    from okgen.snapshot.publish import publish, pull

    snap = make_snapshot()
    dest = tmp_path / "pub"
    publish(snap, str(dest), workspace)
    secret = tmp_path / "secret.tar.gz"
    secret.write_bytes(b"outside the publication folder")
    index = json.loads((dest / "index.json").read_text())
    for bad in ("../secret.tar.gz", "/etc/passwd", "archives/../../secret.tar.gz"):
        index["snapshots"][0]["archive"] = bad
        (dest / "index.json").write_text(json.dumps(index))
        with pytest.raises(IntegrityError, match="not a file under archives/"):
            pull(snap.signature.short, str(dest), Workspace(tmp_path / "w2"))


# ------------------------------------------------------------------------------ references, disks
def test_a_long_reference_and_a_short_prefix_get_clear_messages(make_snapshot, workspace):
    snap = make_snapshot()
    long = "ab" * 150
    for verb in ("show", "verify"):
        out = _cli("snapshot", verb, long, home=workspace.home)
        assert out.returncode == 1 and out.stderr.startswith("okgen: error: no snapshot matches"), out.stderr
        assert "(300 characters)" in out.stderr and "internal error" not in out.stderr
    prefix = snap.manifest.content_hash[:4]
    for record in workspace.signatures_dir.glob("*.json"):  # the folder-only fallback too
        record.unlink()
    out = _cli("snapshot", "show", prefix, home=workspace.home)
    assert out.returncode == 1 and "6 or more hex digits" in out.stderr
    assert _cli("snapshot", "show", snap.manifest.content_hash[:6], home=workspace.home).returncode == 0


def _mount_tmpfs(path, *options):
    import subprocess

    import pytest

    path.mkdir(parents=True, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", ",".join(options), "tmpfs", str(path)], capture_output=True)
    if r.returncode != 0:
        pytest.skip("mounting a small tmpfs needs root (CAP_SYS_ADMIN)")
    return path


def test_full_disk_and_read_only_folder_are_clear_one_line_errors(make_snapshot, workspace, tmp_path):
    import subprocess

    snap = make_snapshot()
    full = _mount_tmpfs(tmp_path / "full", "size=64k")
    try:  # fill it up
        with open(full / "filler", "wb") as f:
            while True:
                f.write(b"\0" * 4096)
                f.flush()
    except OSError:
        pass
    ro = _mount_tmpfs(tmp_path / "ro", "ro", "size=64k")
    try:
        out = _cli("snapshot", "archive", snap.name, "--out", str(full / "a.tar.gz"), home=workspace.home)
        assert out.returncode == 1, out.stderr
        assert out.stderr.startswith("okgen: error: no space left on the device") and "rerun" in out.stderr
        assert len(out.stderr.strip().splitlines()) == 1
        out = _cli("snapshot", "archive", snap.name, "--out", str(ro / "a.tar.gz"), home=workspace.home)
        assert out.returncode == 1 and out.stderr.startswith("okgen: error: read-only file system"), out.stderr
        out = _cli("snapshot", "ls", home=ro)  # a read-only workspace
        assert "internal error" not in out.stderr
    finally:
        for m in (full, ro):
            subprocess.run(["umount", str(m)], capture_output=True)
    assert snap.path.is_dir() and (snap.path / "manifest.json").is_file()  # nothing lost


# ------------------------------------------------------------------------------ configuration
def test_unknown_section_of_okgen_toml_is_refused(tmp_path):
    import pytest

    from okgen.errors import ConfigError
    from okgen.settings import Workspace

    ws = Workspace(tmp_path)
    (tmp_path / "okgen.toml").write_text('[dialy]\nfeeds = "x.toml"\n')
    with pytest.raises(ConfigError, match=r"unknown section \[dialy\].*did you mean \[daily\]"):
        ws.config()
    out = _cli("daily", "--date", "2026-11-21", home=tmp_path)
    assert out.returncode == 1 and "unknown section [dialy]" in out.stderr
    (tmp_path / "okgen.toml").write_text('[ingest]\ntimezone = "UTC"\n[daily]\nwindows = [1]\n')
    assert set(ws.config()) == {"ingest", "daily"}


def test_every_model_spec_is_checked_before_any_work(tmp_path):
    cases = [
        (["--generator", "openai/x,base_url=ftp://x"], "base_url must start with http"),
        (["--generator", "openai/x,bogus=1"], "unknown option 'bogus'"),
        (["--validator", "openai/v,colour=red"], "unknown option 'colour'"),
        (["--probe", "random/x"], "the 'random' backend is for okgen eval"),
        (["--probe", "hf/Qwen/x,base_url=http://127.0.0.1:9/v1"], "unknown option 'base_url'"),  # hf is an agent backend
        (["--generator", "openai/x,temperature"], "expected key=value"),
    ]
    for args, message in cases:
        out = _cli("daily", "--date", "2026-11-21", *args, home=tmp_path)
        assert out.returncode == 1 and message in out.stderr, (args, out.stderr)
        assert "no API key" not in out.stderr
        assert not (tmp_path / "data").exists()  # refused before the ingest (nothing fetched or stored)
    from okgen.daily.pipeline import DailyOptions

    spec = "openai/x,base_url=http://127.0.0.1:9/v1,temperature=0.2,max_retries=1"
    from okgen.settings import Workspace

    ws = Workspace(tmp_path / "clean")
    assert DailyOptions.resolve(ws, generator=spec, validator=spec, probes=(spec,)).generator == spec


# ------------------------------------------------------------------------------ robots.txt
def test_robots_rules_follow_rfc_9309():
    """Longest match wins and wildcards work (protego); urllib.robotparser gets both wrong."""
    import asyncio

    from okgen.ingest.robots import RobotsCache

    text = b"User-agent: *\nDisallow: /*.pdf$\nAllow: /news/\nDisallow: /news/drafts\nCrawl-delay: 2\n"

    async def fetch(url):
        return 200, text, None

    async def check():
        cache = RobotsCache(fetch, "okgen/0.1")
        got = {u: await cache.allowed(f"http://site.example{u}") for u in
               ("/news/drafts/a", "/files/a.pdf", "/news/a", "/files/a.pdf?page=2")}
        return got, (await cache.rules("http://site.example/")).crawl_delay

    got, delay = asyncio.run(check())
    assert got == {"/news/drafts/a": False, "/files/a.pdf": False, "/news/a": True, "/files/a.pdf?page=2": True}
    assert delay == 2.0
