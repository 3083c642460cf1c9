"""The transition validator against the local OpenAI-compatible test server: a single-outlet
change counts only when the model judges it a real change of the current value; the track says
which rule accepted each transition; a transient failure writes nothing."""

from __future__ import annotations

import json

import pytest

from okgen.errors import OkgenError
from okgen.facts import extract_facts
from okgen.settings import Workspace
from okgen.streams.tracks import build_tracks
from okgen.streams.validator import TransitionValidator
from okgen.testing.evolving import DAYS, story_articles
from okgen.testing.openai_server import OpenAIServer, Reply

pytest.importorskip("spacy")


def verdict(ok: bool, reason: str, **fails) -> str:
    return json.dumps({"reason": reason, "same_subject": fails.get("same_subject", True),
                       "current": fails.get("current", ok), "changed": fails.get("changed", ok)})


def judge(req, endpoint):
    user = req["messages"][-1]["content"]
    if "New value: 112" in user:
        return verdict(True, "The toll rose from 87 to 112.")
    if "Mark Carney" in user:
        return "I think so, yes."  # no JSON at all
    return verdict(False, "Only a passing mention.", same_subject=False)


@pytest.fixture(scope="module")
def facts():
    arts = story_articles()
    got = extract_facts(arts)
    return [[f for f in got if f.reported == d] for d in DAYS]


def spec(srv):
    return f"openai/fake-judge,base_url={srv.base_url},max_retries=0"


def test_single_outlet_change_accepted_by_the_validator(facts, tmp_path):
    ws = Workspace(tmp_path)
    offline = {t.id: t for t in build_tracks(facts, DAYS)}
    with OpenAIServer(responder=judge) as srv:
        v = TransitionValidator.from_spec(spec(srv), ws)
        tracks = {t.id: t for t in build_tracks(facts, DAYS, validator=v)}
        v.close()
        asked = [r["messages"][-1]["content"] for r in srv.requests]
    toll = tracks["death_toll/valparaiso"]
    assert [d.status for d in toll.days] == ["new", "changes", "stays", "changes", "stays"]
    assert [d.rule for d in toll.days] == ["outlets", "outlets", None, "validator", None]
    assert toll.days[3].note == "accepted: The toll rose from 87 to 112."
    # the request showed both dated sentences: the value in force (87, reported on day 2) and the new one
    ask = next(a for a in asked if "New value: 112" in a)
    assert "Value in force: 87" in ask and f"Reported on {DAYS[2]} by alpha" in ask
    assert f"Reported on {DAYS[3]} by gamma: The death toll from the earthquake in Valparaiso rose to 112" in ask
    # offline, the same day is not a transition
    assert [d.status for d in offline["death_toll/valparaiso"].days][3] == "uncorroborated"
    # rejected and unreadable answers leave the value as it was, and say why
    carney = tracks["holds_office/prime minister of canada"]
    assert carney.days[0].status == "uncorroborated" and carney.days[0].note.startswith("validator error (")
    rejected = [d for t in tracks.values() for d in t.days if d.note and d.note.startswith("rejected")]
    assert rejected and all(d.status == "uncorroborated" and d.rule is None for d in rejected)
    assert all("same_subject" in d.note for d in rejected)
    # excluded tracks and values already in force are never sent
    assert not any("price or level" in a for a in asked)
    assert v.asked == len(srv.requests) == v.accepted + v.rejected + v.errors and v.accepted == 1
    # every other track is as offline
    for tid, t in offline.items():
        if tid not in ("death_toll/valparaiso",):
            assert [d.value for d in tracks[tid].days] == [d.value for d in t.days], tid


def test_transient_failure_stops_and_rerun_uses_the_cache(facts, tmp_path):
    ws = Workspace(tmp_path)
    with OpenAIServer(responder=lambda req, ep: Reply(status=503, error="down")) as srv:
        v = TransitionValidator.from_spec(spec(srv), ws)
        with pytest.raises(OkgenError, match="transition validator openai/fake-judge: .*nothing written"):
            build_tracks(facts, DAYS, validator=v)
        v.close()
        srv.responder = judge
        v = TransitionValidator.from_spec(spec(srv), ws)
        first = build_tracks(facts, DAYS, validator=v)
        v.close()
        n = srv.calls["chat"]
        v = TransitionValidator.from_spec(spec(srv), ws)
        again = build_tracks(facts, DAYS, validator=v)
        v.close()
        assert srv.calls["chat"] == n and again == first  # all answers from the cache


def test_stream_build_records_the_validator(tmp_path):
    from click.testing import CliRunner

    from okgen.cli.main import cli
    from okgen.streams.store import open_stream, streams_dir
    from okgen.testing.evolving import story_series

    ws = Workspace(tmp_path)
    story_series(ws)
    with OpenAIServer(responder=judge) as srv:
        r = CliRunner().invoke(cli, ["--home", str(tmp_path), "--json", "stream", "build", "sv", "--series", "story",
                                     "--validator", spec(srv)])
        assert r.exit_code == 0, r.output
        m = json.loads(r.stdout)
        assert m["validator"].startswith("openai/fake-judge+") and m["counts"]["transitions_by_validator"] == 1
        assert m["counts"]["validator_accepted"] == 1 and m["counts"]["validator_asked"] >= 3
        s = open_stream(streams_dir(ws) / "sv")
        toll = next(t for t in s.tracks if t.id == "death_toll/valparaiso")
        assert toll.days[3].rule == "validator"
        with OpenAIServer(responder=lambda req, ep: Reply(status=500, error="down")) as bad:
            r = CliRunner().invoke(cli, ["--home", str(tmp_path), "stream", "build", "sv2", "--series", "story",
                                         "--validator", spec(bad), "--no-cache"])
        assert r.exit_code != 0 and "nothing written" in str(r.exception)
        assert not (streams_dir(ws) / "sv2").exists()


def story_reader(req, endpoint):
    """A scripted 'LLM' that lists the story's facts the way a good model would, quoting each sentence."""
    import re

    text = req["messages"][-1]["content"].split("\n\n", 2)[-1]
    facts = []
    for sent in re.split(r"(?<=\.)\s+", text):
        if m := re.search(r"tariffs on Brazilian goods to (\d+%)", sent):
            facts.append(["Brazil", "tariff_rate", m.group(1)])
        elif m := re.search(r"initially been set at (\d+%)", sent):
            facts.append(["Brazil", "tariff_rate", m.group(1), True])
        elif m := re.search(r"in Valparaiso rose to (\d+)", sent):
            facts.append(["Valparaiso", "death_toll", m.group(1)])
        elif m := re.search(r"^(.+) leads the Masters", sent):
            facts.append(["Masters", "leads", m.group(1)])
        elif m := re.search(r"(\w+) (chief executive|Prime Minister|Chancellor) ([A-Z]\w+ [A-Z]\w+)", sent):
            facts.append([f"{m.group(2)} of {m.group(1)}", "holds_office", m.group(3)])
        else:
            continue
        facts[-1] = {"subject": facts[-1][0], "relation": facts[-1][1], "object": facts[-1][2], "valid_from": None,
                     "past": len(facts[-1]) > 3, "evidence": sent}
    return json.dumps({"facts": facts})


def test_stream_build_with_the_llm_extractor(tmp_path):
    from okgen.facts import read_facts
    from okgen.streams.build import build_stream
    from okgen.streams.store import open_stream, streams_dir
    from okgen.testing.evolving import EXPECTED, story_series

    ws = Workspace(tmp_path)
    story_series(ws)
    with OpenAIServer(responder=story_reader) as srv:
        m = build_stream(ws, "llm", "story", extractor=f"openai/reader,base_url={srv.base_url}")
        calls = srv.calls["chat"]
        again = build_stream(ws, "llm", "story", extractor=f"openai/reader,base_url={srv.base_url}", overwrite=True)
        assert srv.calls["chat"] == calls and again.content_hash == m.content_hash  # the facts files are reused
    assert m.extractor.startswith("llm-v1+openai/reader+") and m.counts["questions"] == 3
    s = open_stream(streams_dir(ws) / "llm")
    tracks = {t.id: t for t in s.tracks}
    for (rel, subj), gold in EXPECTED.items():
        t = tracks[f"{rel}/{subj}"]
        assert [None if v is None else t.labels[v].lower() for v in t.gold] == gold, t.id
    assert tracks["tariff_rate/brazil"].days[4].status == "changes"  # gamma's "initially ... 10%" is past
    ff = read_facts(ws, DAYS[4])
    assert ff.extractor == m.extractor and ff.funnel["proposed"] == ff.funnel["kept"] == len(ff.facts)
