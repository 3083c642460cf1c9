"""Series: build, signature, gaps, mixed generators, tampering, publish/pull round trips."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys

import pytest

from okgen.errors import ConfigError, IntegrityError
from okgen.series.publish import archive_series, publish_series, pull_series
from okgen.series.store import build_series, list_series, resolve_series, series_dir, verify_series
from okgen.settings import Workspace
from okgen.signature import SeriesSignature
from okgen.testing.series import day_snapshot

D0 = dt.date(2026, 3, 1)


def cli(*args, home):
    return subprocess.run([sys.executable, "-m", "okgen", "--home", str(home), *args], capture_output=True, text=True)


@pytest.fixture
def four_days(workspace):
    return [day_snapshot(workspace, D0 + dt.timedelta(days=i)) for i in range(4)]


def test_build_pins_members_and_signature_round_trips(workspace, four_days):
    m = build_series(workspace, "march", D0, D0 + dt.timedelta(days=3))
    assert [x.date for x in m.members] == [s.manifest.date for s in four_days]
    assert [x.content_hash for x in m.members] == [s.manifest.content_hash for s in four_days]
    sig = SeriesSignature.parse(m.signature)
    assert SeriesSignature.parse(sig.short) == sig
    assert sig.days == 4 and sig.generator == "synthetic-v1" and sig.content_hash == m.content_hash
    assert sig.questions == sum(len(s.questions) for s in four_days)
    assert verify_series(series_dir(workspace) / "march", workspace).ok
    assert resolve_series(sig.short, workspace)[0] == m
    assert resolve_series(m.content_hash[:8], workspace)[0] == m
    assert [x.name for x in list_series(workspace)] == ["march"]
    with pytest.raises(ConfigError, match="already exists"):
        build_series(workspace, "march", D0, D0 + dt.timedelta(days=3))
    # Deterministic: the same members give the same combined hash.
    again = build_series(workspace, "march", D0, D0 + dt.timedelta(days=3), overwrite=True)
    assert again.content_hash == m.content_hash


def test_gap_is_named_and_can_be_allowed(workspace):
    for i in (0, 1, 3):
        day_snapshot(workspace, D0 + dt.timedelta(days=i))
    with pytest.raises(ConfigError, match=r"1 day\(s\) .* no snapshot: 2026-03-03"):
        build_series(workspace, "gappy", D0, D0 + dt.timedelta(days=3))
    assert not (series_dir(workspace) / "gappy").exists()
    m = build_series(workspace, "gappy", D0, D0 + dt.timedelta(days=3), allow_gaps=True)
    assert m.missing_days == (D0 + dt.timedelta(days=2),)
    assert SeriesSignature.parse(m.signature).missing == 1
    # eval --series says which day it could not score (it is not silently absent)
    r = cli("eval", "--series", "gappy", "-m", "random/seed0", home=workspace.home)
    assert r.returncode == 0 and "no snapshot in the series for 2026-03-03" in r.stderr, r.stderr
    r = cli("series", "build", "g2", "--from", str(D0), "--to", str(D0 + dt.timedelta(days=3)), home=workspace.home)
    assert r.returncode == 1 and "2026-03-03" in r.stderr and r.stderr.count("\n") == 1


def test_mixed_generators_refused_unless_allowed(workspace):
    day_snapshot(workspace, D0)
    day_snapshot(workspace, D0 + dt.timedelta(days=1), generator="openai/gpt-4.1-mini")
    with pytest.raises(ConfigError, match="differ in generator: synthetic-v1 .*openai/gpt-4.1-mini"):
        build_series(workspace, "mix", D0, D0 + dt.timedelta(days=1))
    with pytest.raises(ConfigError, match="unknown field 'model'"):
        build_series(workspace, "mix", D0, D0 + dt.timedelta(days=1), allow_differ=["model"])
    m = build_series(workspace, "mix", D0, D0 + dt.timedelta(days=1), allow_differ=["generator"])
    assert SeriesSignature.parse(m.signature).generator == "mixed"
    assert m.values["generator"] == ["synthetic-v1", "openai/gpt-4.1-mini"]
    # Two fields differ: both named in one message, with the one option that allows them.
    day_snapshot(workspace, D0 + dt.timedelta(days=2), generator="openai/gpt-4.1-mini", feeds_hash="2" * 12)
    with pytest.raises(ConfigError, match=r"differ in generator: .* and in feeds: .*--allow-differ generator,feeds "):
        build_series(workspace, "mix2", D0, D0 + dt.timedelta(days=2))


def test_tampered_member_fails_verify(workspace, four_days):
    build_series(workspace, "march", D0, D0 + dt.timedelta(days=3))
    qfile = four_days[2].path / "questions.jsonl"
    qfile.write_text(qfile.read_text().replace('"question":"', '"question":"So, ', 1))
    rep = verify_series(series_dir(workspace) / "march", workspace)
    assert not rep.ok and "2026-03-03" in rep.problems[0] and "SHA-256 mismatch" in rep.problems[0]
    r = cli("series", "verify", "march", home=workspace.home)
    assert r.returncode == 1 and "2026-03-03" in r.stderr
    # A tampered series manifest is caught too.
    mf = series_dir(workspace) / "march" / "manifest.json"
    mf.write_text(mf.read_text().replace('"questions": ', '"questions": 1', 1))
    assert "content changed" in verify_series(mf.parent, workspace, members=False).problems[0]


def test_publish_pull_round_trip_signed(workspace, four_days, tmp_path):
    from okgen.snapshot.signing import generate_keypair

    m = build_series(workspace, "march", D0, D0 + dt.timedelta(days=3))
    priv, pub = generate_keypair(tmp_path / "k" / "okgen.key")
    dest = tmp_path / "pub"
    entry = publish_series(series_dir(workspace) / "march", str(dest), workspace, sign_key=priv)
    assert entry["members_uploaded"] == 4 and entry["signed"]
    assert publish_series(series_dir(workspace) / "march", str(dest), workspace)["members_uploaded"] == 0
    other = Workspace(tmp_path / "other")
    folder = pull_series("march", str(dest), other, pubkey=pub)
    rep = verify_series(folder, other)
    assert rep.ok and rep.checked == [str(x.date) for x in m.members]
    # Deterministic archives: the same series gives the same bytes.
    a1 = archive_series(series_dir(workspace) / "march", tmp_path / "a1")
    a2 = archive_series(series_dir(workspace) / "march", tmp_path / "a2")
    assert a1.read_bytes() == a2.read_bytes()
    # A corrupted published series archive is refused and nothing is installed.
    arch = dest / entry["archive"]
    arch.write_bytes(arch.read_bytes()[:-10] + b"0123456789")
    third = Workspace(tmp_path / "third")
    with pytest.raises(IntegrityError, match="SHA-256"):
        pull_series("march", str(dest), third)
    assert not (series_dir(third) / "march").exists()
    # An index entry pointing outside the publication's series/ folder is refused before reading it.
    index = json.loads((dest / "index.json").read_text())
    for bad in ("../secret.series.tar.gz", "archives/../../x.tar.gz", "/etc/passwd"):
        index["series"][0]["archive"] = bad
        (dest / "index.json").write_text(json.dumps(index))
        with pytest.raises(IntegrityError, match="not a file under series/"):
            pull_series("march", str(dest), third)


def test_cli_ls_show_and_archive(workspace, four_days, tmp_path):
    import json

    r = cli("--json", "series", "build", "march", "--from", str(D0), "--to", str(D0 + dt.timedelta(days=3)),
            home=workspace.home)
    assert r.returncode == 0, r.stderr
    built = json.loads(r.stdout)
    r = cli("--json", "series", "ls", home=workspace.home)
    assert json.loads(r.stdout) == [{"name": "march", "from": str(D0), "to": str(D0 + dt.timedelta(days=3)), "days": 4,
                                     "missing": 0, "questions": sum(x["questions"] for x in built["members"]),
                                     "hash": built["content_hash"][:12]}]
    short = SeriesSignature.parse(built["signature"]).short
    r = cli("series", "show", short, home=workspace.home)
    assert r.returncode == 0 and built["signature"] in r.stdout and str(D0 + dt.timedelta(days=2)) in r.stdout
    r = cli("signature", "check", "--short", built["signature"], home=workspace.home)
    assert r.returncode == 0 and r.stdout.strip() == short
    r = cli("signature", "explain", short, home=workspace.home)
    assert r.returncode == 0 and "series signature" in r.stdout and "combined" not in r.stderr
    r = cli("series", "show", "nosuch", home=workspace.home)
    assert r.returncode == 1 and "no series matches 'nosuch'" in r.stderr and "march" in r.stderr
    r = cli("series", "archive", "march", "--out", str(tmp_path / "arch"), home=workspace.home)
    assert r.returncode == 0 and (tmp_path / "arch" / "march.series.tar.gz").is_file()
    r = cli("series", "build", "bad name", "--from", str(D0), "--to", str(D0), home=workspace.home)
    assert r.returncode == 1 and "bad series name" in r.stderr
