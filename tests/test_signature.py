"""Signatures: round trips (hypothesis), errors, eval signatures, the explain verb."""

from __future__ import annotations

import datetime as dt

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from okgen.errors import SignatureError
from okgen.signature import EvalSignature, Signature, parse_any

hexes = st.text(alphabet="0123456789abcdef", min_size=8, max_size=64)
floats = st.floats(min_value=0, max_value=1e6, allow_nan=False, allow_infinity=False)
ints = st.integers(min_value=0, max_value=2**63)
timestamps = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31), timezones=st.just(dt.timezone.utc))

snapshot_fields = st.fixed_dictionaries({
    "date": st.dates(),
    "window": st.integers(min_value=1, max_value=10_000),
    "generator": st.text(),
    "validator": st.text(),
    "temperature": floats,
    "top_p": floats,
    "max_tokens": ints,
    "seed": st.integers(min_value=-(2**63), max_value=2**63),
    "prompt_hash": hexes,
    "feeds_hash": hexes,
    "timestamp": timestamps,
    "questions": ints,
    "content_hash": st.text(alphabet="0123456789abcdef", min_size=64, max_size=64),
    "version": st.text(),
})

eval_fields = st.fixed_dictionaries({
    "setting": st.sampled_from(["none", "oracle", "retrieval"]),
    "retriever": st.text(),
    "retriever_hash": st.text(),
    "ret_window": st.none() | st.integers(min_value=0, max_value=1000),
    "k": st.none() | st.integers(min_value=0, max_value=1000),
    "template": st.text(),
    "scoring": st.sampled_from(["loglik", "loglik-full", "loglik-norm", "generate"]),
    "answer_format": st.sampled_from(["mc", "open"]),
    "eval_temperature": floats,
    "eval_max_tokens": ints,
    "eval_seed": st.integers(),
    "judge": st.text(),
    "limit": st.none() | st.integers(min_value=0, max_value=10**9),
})


def example() -> Signature:
    return Signature(
        date=dt.date(2026, 11, 21), window=10, generator="openai/gpt-4.1-2025-04-14", validator="none",
        temperature=0.7, top_p=1.0, max_tokens=2048, seed=13, prompt_hash="ab12cd34ef56", feeds_hash="0123456789ab",
        timestamp=dt.datetime(2026, 11, 22, 7, 15, tzinfo=dt.timezone.utc), questions=412, content_hash="e" * 64,
        version="0.1.0",
    )


@settings(max_examples=300, deadline=None)
@given(snapshot_fields)
def test_snapshot_signature_round_trips(fields):
    sig = Signature(**fields)
    for text in (sig.format(), sig.format(short=True)):
        assert Signature.parse(text) == sig
        assert parse_any(text) == sig
        # Values never break the separators.
        assert len(text.split("|")) == len(Signature.FIELDS)
        assert all(part.count(":") == 1 for part in text.split("|"))
        assert text.isascii()


@settings(max_examples=200, deadline=None)
@given(snapshot_fields, eval_fields)
def test_eval_signature_round_trips(sfields, efields):
    if efields["setting"] == "retrieval" and not (efields["k"] and efields["ret_window"]
                                                 and efields["ret_window"] <= sfields["window"]):
        with pytest.raises(ValueError, match="retrieval setting needs|longer than the snapshot's window"):
            EvalSignature.from_snapshot(Signature(**sfields), **efields)
        return
    sig = EvalSignature.from_snapshot(Signature(**sfields), **efields)
    for text in (sig.format(), sig.format(short=True)):
        assert EvalSignature.parse(text) == sig
        assert parse_any(text) == sig
    assert sig.snapshot_signature() == Signature(**sfields)


def test_format_shape():
    sig = example()
    text = sig.format()
    assert text.startswith("date:2026-11-21|window:10|gen:openai/gpt-4.1-2025-04-14|")
    assert "|ts:20261122T071500Z|" in text
    assert text.endswith("|version:0.1.0")
    assert sig.short.startswith("d:2026-11-21|w:10|g:")
    assert sig.short.endswith("|v:0.1.0")


def test_values_with_separators_are_escaped():
    sig = example().model_copy(update={"generator": "ollama/llama3:8b|x y%"})
    text = sig.format()
    assert "llama3%3A8b%7Cx%20y%25" in text
    assert Signature.parse(text).generator == "ollama/llama3:8b|x y%"


@pytest.mark.parametrize(
    ("mutate", "message"),
    [
        (lambda s: s.replace("gen:", "gem:"), "unknown key 'gem'"),
        (lambda s: s.replace("seed:13|", ""), "is missing 'seed'"),
        (lambda s: s.replace("date:2026-11-21|window:10", "window:10|date:2026-11-21"), "out of order"),
        (lambda s: s.replace("temp:0.7|top_p:1.0", "top_p:1.0|temp:0.7"), "out of order"),
        (lambda s: s.replace("date:2026-11-21", "date:2026-13-40"), "bad value for 'date'"),
        (lambda s: s.replace("seed:13", "seed:thirteen"), "bad value for 'seed'"),
        (lambda s: s.replace("n:412", "n:0.1.0"), "bad value for 'n'"),
        (lambda s: s.replace("hash:" + "e" * 64, "hash:1234"), "bad value for 'hash'"),
        (lambda s: s.replace("ts:20261122T071500Z", "ts:2026-11-22T07:15:00Z"), "contains ':'"),
        (lambda s: s + "|seed:14", "'seed' appears twice"),
        (lambda s: s.replace("|window:10|", "|w:10|"), "mixes long and short"),
        (lambda s: s.replace("|n:412|", "|n 412|"), "not key:value"),
        (lambda s: "", "empty"),
    ],
)
def test_malformed_signatures_give_one_line_errors(mutate, message):
    text = mutate(example().format())
    with pytest.raises(SignatureError) as info:
        Signature.parse(text)
    assert message in str(info.value)
    assert "\n" not in str(info.value)


def test_repeated_key_is_an_error():
    text = example().format().replace("|n:412|", "|n:412|n:413|")
    with pytest.raises(SignatureError, match="twice|out of order"):
        Signature.parse(text)


def test_swapped_values_are_caught():
    # date and window values swapped: both fields exist, values are of the wrong type.
    text = example().format().replace("date:2026-11-21|window:10", "date:10|window:2026-11-21")
    with pytest.raises(SignatureError, match="bad value for 'date'"):
        Signature.parse(text)


def test_eval_signature_needs_eval_fields():
    with pytest.raises(SignatureError, match="missing"):
        EvalSignature.parse(example().format())
    sig = EvalSignature.from_snapshot(
        example(), setting="oracle", retriever="none", retriever_hash="none", ret_window=None, k=None,
        template="mc-v1", scoring="loglik", answer_format="mc", eval_temperature=0.0, eval_max_tokens=1,
        eval_seed=0, judge="none",
    )
    assert "|setting:oracle|ret:none|rspec:none|rwin:none|k:none|" in sig.format()
    assert sig.format().endswith("|judge:none|limit:none|version:0.1.0")
    assert EvalSignature.parse(sig.format().replace("limit:none", "limit:50")).limit == 50
    with pytest.raises(SignatureError, match="setting"):
        EvalSignature.parse(sig.format().replace("setting:oracle", "setting:bogus"))
    # No run gives a retrieval signature with no passage, or a window the snapshot's news lacks.
    ret = sig.format().replace("setting:oracle|ret:none|rspec:none|rwin:none|k:none",
                               "setting:retrieval|ret:bm25|rspec:1ffebaaeb617|rwin:{w}|k:{k}")
    assert EvalSignature.parse(ret.format(w=10, k=5)).k == 5
    with pytest.raises(SignatureError, match="^invalid eval signature: rwin 99 is longer than the snapshot's window 10$"):
        EvalSignature.parse(ret.format(w=99, k=5))
    with pytest.raises(SignatureError, match="needs k and rwin of at least 1"):
        EvalSignature.parse(ret.format(w=5, k=0))


def test_explain_cli(tmp_path):
    import json
    import subprocess
    import sys

    text = example().short
    out = subprocess.run([sys.executable, "-m", "okgen", "--json", "signature", "explain", text], capture_output=True, text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    rows = {r["key"]: r["value"] for r in data["fields"]}
    assert rows["gen"] == "openai/gpt-4.1-2025-04-14" and rows["n"] == "412"
    table = subprocess.run([sys.executable, "-m", "okgen", "signature", "explain", text], capture_output=True, text=True, cwd=tmp_path)
    assert table.returncode == 0 and "max_tokens" in table.stdout and "2048" in table.stdout
    assert "``" not in table.stdout
    # Piped, a table folds no cell: each field stays on one line (to grep or diff).
    gen_line = next(ln for ln in table.stdout.splitlines() if ln.startswith("gen "))
    assert "openai/gpt-4.1-2025-04-14" in gen_line and gen_line.rstrip().endswith("openai/gpt-4.1-2025-04-14)."), gen_line
    assert not any("``" in r["meaning"] for r in data["fields"])  # the docs' reST literals read as plain text
    bad = subprocess.run([sys.executable, "-m", "okgen", "signature", "explain", text.replace("s:13", "s:x")], capture_output=True, text=True, cwd=tmp_path)
    assert bad.returncode == 1
    # As results and reports print it: "MODEL | SIGNATURE".
    beside = subprocess.run([sys.executable, "-m", "okgen", "--json", "signature", "explain", f"hf/Norvik/m-1B | {text}"],
                            capture_output=True, text=True, cwd=tmp_path)
    assert beside.returncode == 0 and json.loads(beside.stdout)["short"] == text, beside.stderr
    assert json.loads(beside.stdout)["model"] == "hf/Norvik/m-1B"
    assert {r["key"]: r["value"] for r in json.loads(beside.stdout)["fields"]}["model"] == "hf/Norvik/m-1B"
    assert bad.stderr.strip().count("\n") == 0 and "bad value for 's'" in bad.stderr
    assert "Traceback" not in bad.stderr
    for edit, says in ((lambda t: t.replace("w:10", "w:0"), "bad value for 'w' in signature: must be at least 1"),
                       (lambda t: t.replace(example().content_hash, "b7c7"), "must be 64 lowercase hex digits")):
        out = subprocess.run([sys.executable, "-m", "okgen", "signature", "check", edit(text)], capture_output=True,
                             text=True, cwd=tmp_path)
        assert out.returncode == 1 and says in out.stderr and "Value error" not in out.stderr, out.stderr


def test_explain_and_check_read_a_stream_signature(tmp_path):
    import json
    import subprocess
    import sys

    from okgen.streams.signature import StreamSignature

    sig = StreamSignature(name="rivertown-offices", origin="series", series_hash="0123456789ab", intervals=5,
                          extractor="extractive-facts-v1", min_changes=1, min_outlets=2, seed=7, questions=31,
                          content_hash="ab" * 32, version="0.1.0")
    for text in (sig.format(), sig.short):
        out = subprocess.run([sys.executable, "-m", "okgen", "--json", "signature", "explain", text],
                             capture_output=True, text=True, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        data = json.loads(out.stdout)
        assert data["kind"] == "stream signature" and data["long"] == sig.format()
        assert {r["key"]: r["value"] for r in data["fields"]}["stream"] == "rivertown-offices"
    check = subprocess.run([sys.executable, "-m", "okgen", "signature", "check", "--short", sig.format()],
                           capture_output=True, text=True, cwd=tmp_path)
    assert check.returncode == 0 and check.stdout.strip() == sig.short
