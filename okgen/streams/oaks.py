"""OAKS's public JSON format, read and written.

OAKS (Kim et al., 2026, "Can Large Language Models Keep Up? Benchmarking Online Adaptation to
Continual Knowledge Streams") publishes each dataset as a JSON array of documents::

    {"meta": {"bid": "P31", "num_chunks": 78, "num_qas": 40, ...},
     "data": {"chunks": {"0": "text", "1": "text", ...},
              "facts": {"0": ["fact sentence", ...]},                # OAKS-B only
              "qas": {"<question text>": {
                  "question_id": "P31_q0",
                  "chunk_to_answer": {"0": "option", "1": "option", ...},  # the answer after chunk t
                  "options": ["option", ...],                        # OAKS-N (multiple choice)
                  "option_sources": {"option": {"3": ["sentence"]}},  # OAKS-N
                  "question_type": "counting"}}}}                     # OAKS-B

An okgen stream maps onto one document: intervals are chunks, an interval's documents joined
are its chunk, each streamed question is a ``qas`` entry whose ``chunk_to_answer`` names the
valid option at every interval. OAKS-B answers are lists of strings (open-ended): on import the
first string is the answer, and the options are the question's distinct answers. ``facts`` are
not kept.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError, SchemaError
from okgen.settings import Workspace
from okgen.streams.metrics import changes
from okgen.streams.records import (
    NOT_KNOWN,
    StreamDocument,
    StreamInterval,
    StreamManifest,
    StreamQuestion,
    Track,
)
from okgen.streams.store import Stream, check_name, streams_dir, write_stream


def export_oaks(stream: Stream) -> dict[str, Any]:
    """One OAKS document for a stream."""
    m = stream.manifest
    chunks: dict[str, list[str]] = {str(iv.index): [] for iv in m.intervals}
    for d in stream.documents:
        chunks[str(d.interval)].append(d.text if d.title is None else f"{d.title}\n\n{d.text}")
    qas: dict[str, Any] = {}
    for i, q in enumerate(stream.questions):
        key = q.question if q.question not in qas else f"{q.question} [{q.id}]"
        entry: dict[str, Any] = {"question_id": q.id if m.origin == "oaks" else f"{m.name}_q{i}",
                                 "chunk_to_answer": {str(t): q.choices[a] for t, a in enumerate(q.answers)},
                                 "options": list(q.choices), "option_sources": q.sources}
        if q.track.startswith("oaks/"):
            entry["question_type"] = q.track.split("/", 1)[1]
        qas[key] = entry
    meta = dict(m.oaks_meta or {})
    meta.update({"bid": meta.get("bid", m.name), "num_chunks": len(m.intervals), "num_qas": len(qas)})
    if m.origin != "oaks":
        meta["okgen_signature"] = m.signature
    elif meta.get("okgen_signature") not in (None, m.signature):
        # An okgen export imported again: the file names this stream, and the one it came from.
        meta["okgen_source_signature"] = meta["okgen_signature"]
        meta["okgen_signature"] = m.signature
    return {"meta": meta, "data": {"chunks": {k: "\n\n".join(v) for k, v in chunks.items()}, "qas": qas}}


def parse_document(doc: Any, where: str) -> tuple[dict[str, Any], list[str], list[StreamQuestion]]:
    """Check one OAKS document and turn it into (meta, chunk texts, questions).

    Raises:
        SchemaError: a missing field, chunks that are not 0..N-1, or a question without an
            answer for some chunk or with an answer that is not among its options (one line).
    """
    if not isinstance(doc, dict) or not isinstance(doc.get("meta"), dict) or not isinstance(doc.get("data"), dict):
        raise SchemaError(f"{where}: not an OAKS document (needs 'meta' and 'data' objects)")
    meta, data = doc["meta"], doc["data"]
    bid = str(meta.get("bid", "")).strip()
    chunks = data.get("chunks")
    if not bid or not isinstance(chunks, dict) or not isinstance(data.get("qas"), dict):
        raise SchemaError(f"{where}: an OAKS document needs meta.bid, data.chunks and data.qas")
    n = len(chunks)
    if sorted(chunks, key=lambda k: int(k) if str(k).isdigit() else -1) != [str(i) for i in range(n)]:
        raise SchemaError(f"{where} ({bid}): chunk keys must be 0..{n - 1}")
    if meta.get("num_chunks") not in (None, n):
        raise SchemaError(f"{where} ({bid}): meta.num_chunks is {meta['num_chunks']} but there are {n} chunks")
    questions = []
    for text, qa in data["qas"].items():
        qid = str(qa.get("question_id", "")) if isinstance(qa, dict) else ""
        c2a = qa.get("chunk_to_answer") if isinstance(qa, dict) else None
        if not qid or not isinstance(c2a, dict):
            raise SchemaError(f"{where} ({bid}): question {text!r} needs question_id and chunk_to_answer")
        missing = [str(t) for t in range(n) if str(t) not in c2a]
        if missing:
            raise SchemaError(f"{where} ({bid}): question {qid} has no answer for chunk {missing[0]}"
                              + (f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""))
        gold = [_answer(c2a[str(t)]) for t in range(n)]
        options = [str(o) for o in qa["options"]] if isinstance(qa.get("options"), list) else list(dict.fromkeys(gold))
        bad = next((g for g in gold if g not in options), None)
        if bad is not None:
            raise SchemaError(f"{where} ({bid}): question {qid}: answer {bad!r} is not one of its options")
        if len(set(options)) != len(options):
            raise SchemaError(f"{where} ({bid}): question {qid}: options repeat")
        sources = qa.get("option_sources") if isinstance(qa.get("option_sources"), dict) else {}
        track = "oaks/" + str(qa["question_type"]) if qa.get("question_type") else "oaks"
        questions.append(StreamQuestion(id=qid, track=track, question=text, choices=tuple(options),
                                        answers=tuple(options.index(g) for g in gold), changes=changes(gold),
                                        not_known_index=options.index(NOT_KNOWN) if NOT_KNOWN in options else None,
                                        sources={str(k): {str(c): list(s) for c, s in v.items()} for k, v in sources.items()}))
    return meta, [str(chunks[str(i)]) for i in range(n)], questions


def _answer(value: Any) -> str:
    if isinstance(value, list):  # OAKS-B: accepted strings, the first is the answer
        if not value:
            raise SchemaError("an OAKS-B answer list is empty")
        return str(value[0])
    return str(value)


def import_oaks(ws: Workspace, path: Path, name: str, *, overwrite: bool = False) -> list[StreamManifest]:
    """Import an OAKS JSON file: one stream per document (``NAME``, or ``NAME-<bid>`` when the
    file holds several). Every document is checked before anything is written.

    Raises:
        SchemaError: unreadable JSON or a malformed document (nothing is written).
        ConfigError: a bad name, or a stream that exists (without ``overwrite``).
    """
    check_name(name)
    try:
        raw = json.loads(Path(path).read_bytes().decode("utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such file") from None
    except json.JSONDecodeError as e:
        raise SchemaError(f"{path}:{e.lineno}:{e.colno}: not JSON ({e.msg})") from None
    except UnicodeDecodeError as e:
        raise SchemaError(f"{path}: not UTF-8 text (byte {e.start})") from None
    docs = raw if isinstance(raw, list) else [raw]
    if not docs:
        raise SchemaError(f"{path}: no documents")
    parsed = [parse_document(d, f"{Path(path).name}[{i}]") for i, d in enumerate(docs)]
    names = [name if len(parsed) == 1 else f"{name}-{p[0]['bid']}" for p in parsed]
    for nm in names:
        check_name(nm)
        if (streams_dir(ws) / nm / "manifest.json").exists() and not overwrite:
            raise ConfigError(f"stream {nm!r} already exists; use --overwrite to replace it")
    out = []
    for nm, (meta, chunks, questions) in zip(names, parsed):
        documents = [StreamDocument(id=f"{meta['bid']}/{i}", interval=i, text=t) for i, t in enumerate(chunks)]
        intervals = tuple(StreamInterval(index=i, label=f"chunk {i}") for i in range(len(chunks)))
        tracks: list[Track] = []
        out.append(write_stream(ws, nm, tracks=tracks, questions=questions, documents=documents, overwrite=overwrite,
                                origin="oaks", series=None, series_hash=None, intervals=intervals, extractor="oaks",
                                min_changes=0, min_outlets=0, seed=0, oaks_meta=meta,
                                counts={"questions": len(questions), "chunks": len(chunks)}))
    return out
