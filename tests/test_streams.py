"""Streams from the hand-written evolving story: tracks, questions, bad input, verify, CLI."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from okgen.errors import ConfigError, IntegrityError
from okgen.streams.build import build_stream
from okgen.streams.questions import make_question, name_pool
from okgen.streams.records import NOT_KNOWN
from okgen.streams.signature import StreamSignature
from okgen.streams.store import (
    list_streams,
    open_stream,
    resolve_stream,
    streams_dir,
    verify_stream,
)
from okgen.testing.evolving import DAYS, EXPECTED, story_series

pytest.importorskip("spacy")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    from okgen.settings import Workspace

    ws = Workspace(tmp_path_factory.mktemp("streams"))
    story_series(ws)
    m = build_stream(ws, "story-facts", "story")
    return ws, m, open_stream(streams_dir(ws) / "story-facts")


def test_tracks_follow_the_story(built):
    ws, m, s = built
    tracks = {t.id: t for t in s.tracks}
    for (rel, subj), gold in EXPECTED.items():
        t = tracks[f"{rel}/{subj}"]
        assert [None if v is None else t.labels[v].lower() for v in t.gold] == gold, t.id
        assert t.excluded is None
    toll = tracks["death_toll/valparaiso"]
    # day 4: 112 from one outlet only -> not a transition; day 5: corroborated -> a change
    assert [d.status for d in toll.days] == ["new", "changes", "stays", "uncorroborated", "changes"]
    tariff = tracks["tariff_rate/brazil"]
    # day 5: gamma's "had initially been set at 10%" is retrospective, not a conflict with 40%
    assert tariff.days[4].reported == {"40%": ["alpha", "beta"]} and tariff.changes == 3
    gold = tracks["price/gold"]
    assert gold.excluded.startswith(f"same-day conflict on {DAYS[2]}: 3,000 (alpha); 3,100 (beta)")
    assert tracks["holds_office/chief executive of apple"].excluded == "0 change(s), fewer than 2"
    assert m.counts["questions"] == 3 and m.counts["excluded_conflict"] == 1
    assert m.counts["transitions"] == sum(1 for t in s.tracks for d in t.days if d.status in ("new", "changes"))


def test_questions_have_one_valid_option_per_day(built):
    ws, m, s = built
    assert len(s.questions) == 3
    for q in s.questions:
        assert len(q.choices) >= 6 and len(set(q.choices)) == len(q.choices)
        assert q.choices[q.not_known_index] == NOT_KNOWN
        assert len(q.answers) == 5 and q.changes >= 2
    tariff = next(q for q in s.questions if q.track == "tariff_rate/brazil")
    assert [tariff.choices[a] for a in tariff.answers] == [NOT_KNOWN, "10%", "10%", "25%", "40%"]
    assert tariff.question == "What is the tariff rate on goods from Brazil?"
    assert "Brazilian goods" in tariff.sources["25%"]["3"][0]
    distractors = set(tariff.choices) - {NOT_KNOWN, "10%", "25%", "40%"}
    assert all(c.endswith("%") for c in distractors)
    masters = next(q for q in s.questions if q.track == "leads/masters")
    names = set(masters.choices) - {NOT_KNOWN, "Justin Rose", "Rory McIlroy"}
    assert names and all(len(n.split()) >= 2 for n in names)  # people, from the other facts


def test_signature_verify_and_tamper(built, tmp_path):
    import shutil

    ws, m, s = built
    sig = StreamSignature.parse(m.signature)
    assert StreamSignature.parse(sig.short) == sig and sig.questions == 3 and sig.intervals == 5
    assert verify_stream(s.path, ws) == []
    assert resolve_stream(sig.short, ws) == s.path and [x.name for x in list_streams(ws)] == ["story-facts"]
    copy = tmp_path / "story-facts"
    shutil.copytree(s.path, copy)
    q = copy / "questions.jsonl"
    q.write_text(q.read_text().replace("Brazil", "Chile", 1))
    assert verify_stream(copy, ws) == ["questions.jsonl: SHA-256 differs from the manifest"]


def test_bad_input_is_refused_and_nothing_written(tmp_path):
    from okgen.settings import Workspace

    ws = Workspace(tmp_path)
    story_series(ws, name="gappy", skip=(2,))
    with pytest.raises(ConfigError, match=rf"series gappy lacks 1 day\(s\): {DAYS[2]}; a stream asks"):
        build_stream(ws, "g", "gappy")
    assert not (streams_dir(ws) / "g").exists()
    from okgen.series.store import build_series

    build_series(ws, "two", DAYS[0], DAYS[1])
    with pytest.raises(ConfigError, match="no track of series two changes 9 time"):
        build_stream(ws, "g", "two", min_changes=9)
    assert not streams_dir(ws).exists() or not any(p.name == "g" for p in streams_dir(ws).iterdir())


def test_conflicting_track_cannot_become_a_question(built):
    ws, m, s = built
    track = next(t for t in s.tracks if t.id == "price/gold")
    with pytest.raises(ConfigError, match=r"^track price/gold cannot be streamed: same-day conflict on 2026-03-04"):
        make_question(track, pool=name_pool([]), seed=0, year=2026)


def test_cli_build_show_verify(tmp_path):
    from okgen.cli.main import cli
    from okgen.settings import Workspace

    ws = Workspace(tmp_path)
    story_series(ws)
    run = CliRunner()
    r = run.invoke(cli, ["--home", str(tmp_path), "stream", "build", "st", "--series", "story"])
    assert r.exit_code == 0, r.output
    assert r.stdout.startswith("stream:st|origin:series|")
    sig = r.stdout.strip()
    r = run.invoke(cli, ["--home", str(tmp_path), "--json", "stream", "ls"])
    row = json.loads(r.stdout)[0]
    assert row["questions"] == 3 and row["signature"] == sig and isinstance(row["tracks"], int)
    r = run.invoke(cli, ["--home", str(tmp_path), "stream", "show", "st", "--tracks"])
    assert r.exit_code == 0 and "not known yet | 10% | 10% | 25% | 40%" in r.stdout
    r = run.invoke(cli, ["--home", str(tmp_path), "stream", "verify", "st"])
    assert r.exit_code == 0 and "ok: stream st" in r.stdout
    r = run.invoke(cli, ["--home", str(tmp_path), "stream", "build", "st", "--series", "story"])
    assert r.exit_code != 0 and "already exists" in str(r.exception)
    (tmp_path / "streams" / "st" / "tracks.jsonl").write_text("{}\n")
    with pytest.raises(IntegrityError, match="tracks.jsonl: SHA-256 differs"):
        run.invoke(cli, ["--home", str(tmp_path), "stream", "verify", "st"], catch_exceptions=False)


def test_archive_publish_pull_signed(built, tmp_path):
    from okgen.settings import Workspace
    from okgen.snapshot.signing import generate_keypair
    from okgen.streams.publish import archive_stream, publish_stream, pull_stream

    ws, m, s = built
    a1 = archive_stream(s.path, tmp_path / "a1")
    a2 = archive_stream(s.path, tmp_path / "a2")
    assert a1.read_bytes() == a2.read_bytes()  # deterministic
    priv, pub = generate_keypair(tmp_path / "k", tmp_path / "k.pub")
    dest = tmp_path / "pub"
    entry = publish_stream(s.path, str(dest), ws, sign_key=priv)
    assert entry["signed"] and entry["archive"] == "streams/story-facts.stream.tar.gz"
    index = json.loads((dest / "index.json").read_text())
    assert [e["name"] for e in index["streams"]] == ["story-facts"] and index["series"][0]["name"] == "story"
    other = Workspace(tmp_path / "other")
    folder = pull_stream("story-facts", str(dest), other, pubkey=pub)
    assert verify_stream(folder, other) == [] and open_stream(folder).questions == s.questions


def test_name_spellings_are_one_value_and_never_distractors():
    import datetime as dt

    from okgen.facts.records import Fact
    from okgen.facts.rules import same_name
    from okgen.generate.distractors import Pool
    from okgen.streams.tracks import build_tracks

    def fact(day, outlet, name, subject="Foreign Minister of Russia"):
        key = name.lower()
        return Fact(id=f"rules-v1:{day}{outlet}{key}", subject=subject, subject_key=subject.lower(),
                    relation="holds_office", object=name, object_key=key, object_kind="person",
                    reported=dt.date(2026, 1, 1 + day), outlet=outlet, article_id=f"{day}{outlet}", evidence="x",
                    extractor="rules-v1+x")

    assert same_name("sergey lavrov", "sergei lavrov") and same_name("volodymyr zelensky", "volodymyr zelenskyy")
    assert not same_name("keir starmer", "rishi sunak")
    days = [[], [fact(1, "a", "Sergey Lavrov"), fact(1, "b", "Sergey Lavrov")],
            [fact(2, "c", "Sergei Lavrov")], [fact(3, "a", "Olga Petrova"), fact(3, "b", "Olga Petrova")]]
    (t,) = build_tracks(days, min_changes=2)
    assert [d.status for d in t.days] == ["none", "new", "stays", "changes"] and t.changes == 2
    pool = Pool()
    for i, n in enumerate(["Sergei Lavrov", "Anna Berg", "Ivan Markov", "Lena Sokol", "Mark Oduya", "Ruth Kane",
                           "Tom Ekwe", "Olga Petrov"]):
        pool.add("person", n, f"art{i}")
    q = make_question(t, pool=pool, seed=1, year=2026)
    assert "Sergei Lavrov" not in q.choices and "Olga Petrov" not in q.choices and len(q.choices) >= 6

    # Options come from the values of the same relation first, and never in alphabetical order:
    # a pool whose first names all start with "A" gave every question the same four A-names.
    a_names = Pool()
    for i in range(30):
        a_names.add("person", f"A{chr(97 + i % 26)}ron Ab{i:02d}", f"a{i}")
    offices = Pool()
    for i, n in enumerate(["Keir Starmer", "Pedro Sanchez", "Benjamin Netanyahu", "Nayib Bukele", "Mark Carney"]):
        offices.add("person", n, f"o{i}")
    q = make_question(t, pool=a_names, relation_pool=offices, seed=1, year=2026)
    others = [c for c in q.choices if c not in ("Sergey Lavrov", "Olga Petrova", "not known yet")]
    assert len(others) >= 3 and all(c in {"Keir Starmer", "Pedro Sanchez", "Benjamin Netanyahu", "Nayib Bukele",
                                           "Mark Carney"} for c in others[:3]), q.choices
    drawn = {tuple(sorted(make_question(t, pool=a_names, seed=s, year=2026).choices)) for s in range(6)}
    assert len(drawn) > 1  # the seed draws among equally plausible names


def test_a_stream_whose_only_changes_are_first_values_says_what_it_measures(tmp_path, caplog, monkeypatch):
    import logging

    import okgen.streams.build as sb
    from okgen.settings import Workspace

    ws = Workspace(tmp_path / "ws")
    story_series(ws, days=2)
    with caplog.at_level(logging.WARNING, logger="okgen.streams.build"):
        m = build_stream(ws, "two-days", "story", min_changes=1)
    # Two days: one question changes value (the death toll), two only get their first value.
    assert (m.counts["questions"], m.counts["questions_changing_value"]) == (3, 1)
    assert not any("first report" in r.getMessage() for r in caplog.records)
    # Keep only the tracks whose one change is a first value: the stream says what it measures.
    real = sb.build_tracks

    def first_values_only(*a, **kw):
        return [t if not any(d.status == "changes" for d in t.days) else t.model_copy(update={"excluded": "held out"})
                for t in real(*a, **kw)]

    monkeypatch.setattr(sb, "build_tracks", first_values_only)
    with caplog.at_level(logging.WARNING, logger="okgen.streams.build"):
        m = build_stream(ws, "first-only", "story", min_changes=1)
    assert m.counts["questions"] == 2 and m.counts["questions_changing_value"] == 0
    assert any("none of the 2 streamed question(s) changes value after its first report" in r.getMessage()
               for r in caplog.records)


def test_a_ranked_context_over_budget_keeps_the_best_ranked_and_shows_them_oldest_first():
    from types import SimpleNamespace

    from okgen.streams.evaluate import _shown
    from okgen.streams.records import StreamDocument

    stream = SimpleNamespace(manifest=SimpleNamespace(intervals=[SimpleNamespace(index=i, label=f"day {i}")
                                                                 for i in range(4)]))
    # Best first: an old document ranked first, then newer ones; room for two.
    docs = [StreamDocument(id=f"d{iv}", interval=iv, title=f"t{iv}", text="x" * 900) for iv in (0, 3, 2, 1)]
    ranked = _shown(stream, docs, 2000, ranked=True)
    assert [d.id for d, _ in ranked] == ["d0", "d3"]  # the two best, oldest first
    chronological = _shown(stream, sorted(docs, key=lambda d: d.interval), 2000)
    assert [d.id for d, _ in chronological] == ["d2", "d3"]  # the newest
