"""``okgen export``: a snapshot for other evaluation tools.

* ``lm-eval``: two lm-evaluation-harness tasks over one ``<task>.jsonl`` of rendered prompts:
  ``<task>.yaml`` (``output_type: multiple_choice``, choices ``A``..``D`` after the okgen
  ``mc-v1`` prompt; its ``acc`` is okgen's ``loglik``) and ``<task>_full.yaml`` (the choices'
  texts; its ``acc`` is okgen's ``loglik-full``, ``acc_norm`` its ``loglik-norm``). Run them with
  ``lm_eval --include_path DIR --tasks <task> ...``; with ``--apply_chat_template`` they match
  okgen's default for models with a chat template, without it okgen's ``chat=no``. The YAML
  names the data file by absolute path.
* ``hf``: a Hugging Face datasets folder: ``data/questions-00000-of-00001.parquet``,
  ``data/corpus-00000-of-00001.parquet`` and a ``README.md`` dataset card whose YAML header
  declares both configs (``load_dataset(DIR)`` / ``load_dataset(DIR, "corpus")``).
* ``inspect``: inspect_ai JSONL samples (``id``, ``input``, ``choices``, ``target`` letter,
  ``metadata``), for ``json_dataset(...)`` with the ``multiple_choice()`` solver.

``--setting oracle`` puts the source article in the prompt (lm-eval) or the input (inspect),
untruncated. ``--setting retrieval`` puts the top-k passages of a retriever over a news window
there instead, retrieved as ``okgen eval --setting retrieval`` retrieves them (same index, same
rank order, no article dated after the question), so another tool scores the prompts okgen
scores; the hf export then gives them in ``context`` and their article ids in ``retrieved``.
Every export writes ``okgen_export.json`` with the snapshot signature, the retriever (name,
spec hash, window, k) of a retrieval export, and the SHA-256 of each file; exports into one
folder (the lm-eval tasks of several settings) are all listed under ``exports``, the latest also
at the top level. An export that would overwrite another's file (a second hf dataset, inspect
samples beside the lm-eval task of the same name) is refused before anything is written.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from okgen.errors import ConfigError
from okgen.eval.contexts import article_passage, retrieve
from okgen.eval.templates import LETTERS, get_template
from okgen.files import atomic_write_text, pretty_json, write_jsonl
from okgen.hashing import sha256_file
from okgen.registry import require

FORMATS = ("lm-eval", "hf", "inspect")
SETTINGS = ("none", "oracle", "retrieval")
DEFAULT_RETRIEVER, DEFAULT_K = "bm25", 5


def task_name(snapshot: Any, setting: str = "none", retriever: str | None = None, window: int | None = None,
              k: int | None = None) -> str:
    """The exported task/dataset name: ``okgen_<date>_<hash8>[_oracle]``, or for retrieval
    ``okgen_<date>_<hash8>_retrieval_<retriever>_w<window>_k<k>`` (letters, digits, underscores)."""
    m = snapshot.manifest
    base = f"okgen_{m.date:%Y_%m_%d}_{m.content_hash[:8]}"
    if setting == "retrieval":
        r = re.sub(r"[^A-Za-z0-9]+", "_", retriever or DEFAULT_RETRIEVER).strip("_")
        w = snapshot.signature.window if window is None else window
        return f"{base}_retrieval_{r}_w{w}_k{DEFAULT_K if k is None else k}"
    return base if setting == "none" else f"{base}_{setting}"


def export_snapshot(snapshot: Any, fmt: str, out_dir: str | Path, setting: str = "none", *,
                    retriever: str | None = None, window: int | None = None, k: int | None = None,
                    workspace: Any = None) -> list[Path]:
    """Write ``snapshot`` in format ``fmt`` into ``out_dir``; return the files written.

    Args:
        snapshot: a verified snapshot.
        fmt: ``lm-eval``, ``hf`` or ``inspect``.
        out_dir: the folder to write into.
        setting: ``none``, ``oracle`` (the source article) or ``retrieval`` (the top-``k``
            passages of ``retriever`` over the ``window``-day window, as ``okgen eval`` gives them).
        retriever, window, k: the retrieval setting's retriever (default ``bm25``), window in days
            (default the snapshot's longest) and passages per question (default 5).
        workspace: where the retrieval index lives (built when missing); default from the environment.

    Raises:
        ConfigError: unknown format or setting, retrieval options without the retrieval setting,
            a window longer than the snapshot's corpus, or a context export of a snapshot without texts.
    """
    if fmt not in FORMATS:
        raise ConfigError(f"unknown export format {fmt!r}; known: {', '.join(FORMATS)}")
    if setting not in SETTINGS:
        raise ConfigError(f"unknown export setting {setting!r}; known: {', '.join(SETTINGS)}")
    m = snapshot.manifest
    if setting != "retrieval" and (retriever, window, k) != (None, None, None):
        raise ConfigError("--retriever, --window and --k apply only to --setting retrieval")
    if setting != "none" and not m.text_included:
        raise ConfigError(f"{snapshot.name} has no article texts: the {setting} export needs them (okgen hydrate)")
    ret: dict[str, Any] = {}
    if setting == "retrieval":
        k = DEFAULT_K if k is None else int(k)
        # The default window is okgen eval's (the signature's, the longest); the index checks it.
        window = snapshot.signature.window if window is None else int(window)
        if k < 1:
            raise ConfigError(f"--k must be at least 1, not {k}")
        from okgen.retrieval.index import open_index
        from okgen.settings import Workspace

        idx = open_index(snapshot, retriever or DEFAULT_RETRIEVER, window,
                         workspace if workspace is not None else Workspace.from_env())
        found = retrieve(idx, snapshot.questions, k, snapshot.articles_by_id)
        ret = {"retriever": idx.name, "retriever_hash": str(idx.spec_hash), "window": window, "k": k,
               "gold_retrieved": sum(g is not None for _, g in found)}
        # The task is named by the retriever's spec name; a spec given as a file adds its hash
        # (two files may share a name), never the machine's path.
        from_file = str(retriever or "").endswith(".toml")
        retriever = f"{idx.name}_{str(idx.spec_hash)[:8]}" if from_file else idx.name
        contexts = [list(passages) for passages, _ in found]
    elif setting == "oracle":
        contexts = [[article_passage(snapshot.articles_by_id[q.article_id])] for q in snapshot.questions]
    else:
        contexts = [[] for _ in snapshot.questions]
    name = task_name(snapshot, setting, retriever, window, k)
    out = Path(out_dir)
    earlier = _earlier_exports(out)
    key = f"{fmt}:{name}"
    planned = _planned_files(fmt, name)
    for other, rec in sorted(earlier.items()):
        # Two exports writing one file (two hf datasets; an lm-eval task and inspect samples of
        # one setting, both <task>.jsonl): the second would overwrite the first.
        clash = sorted(planned & set(rec.get("files", {}))) if other != key else []
        if clash:
            raise ConfigError(f"{out} already holds the {other.replace(':', ' export ', 1)}, whose {clash[0]} "
                              f"this export would overwrite: export {fmt} {name} into another --out")
    if (out / "manifest.json").is_file() or (out / "okgen.toml").is_file() or (out / "snapshots").is_dir():
        raise ConfigError(f"{out} is a snapshot folder or a workspace: export into a folder of its own (--out)")
    ours = {f for rec in earlier.values() for f in rec.get("files", {})}
    foreign = sorted(f for f in planned if f not in ours and (out / f).exists())
    if foreign:  # a file no okgen export wrote (a project's README.md, a task of the user's own)
        raise ConfigError(f"{out / foreign[0]} exists and no okgen export wrote it: export into another --out, "
                          "or move it away first")
    out.mkdir(parents=True, exist_ok=True)
    files = {"lm-eval": _lm_eval, "hf": _hf, "inspect": _inspect}[fmt](snapshot, out, setting, name, contexts, ret)
    this = {"format": fmt, "setting": setting, "task": name, **ret, "snapshot": snapshot.name,
            "signature": m.signature, "template": "mc-v1",
            "files": {p.relative_to(out).as_posix(): sha256_file(p) for p in files}}
    # Several exports may share a folder (lm-eval tasks of each setting, side by side): the
    # manifest describes the latest at its top level and every export of the folder under
    # "exports" ("<format>:<task>").
    earlier[key] = this
    manifest = {"kind": "okgen-export", **this, "exports": dict(sorted(earlier.items()))}
    atomic_write_text(out / "okgen_export.json", pretty_json(manifest))
    return files + [out / "okgen_export.json"]


def _planned_files(fmt: str, name: str) -> set[str]:
    """The files (relative to the folder) an export of ``fmt`` and task ``name`` writes."""
    if fmt == "lm-eval":
        return {f"{name}.yaml", f"{name}_full.yaml", f"{name}.jsonl"}
    if fmt == "hf":
        return {"data/questions-00000-of-00001.parquet", "data/corpus-00000-of-00001.parquet", "README.md"}
    return {f"{name}.jsonl"}


def _earlier_exports(out: Path) -> dict[str, dict[str, Any]]:
    """The exports an earlier ``okgen export`` recorded in ``out``, by ``<format>:<task>``
    (none when it holds no okgen export)."""
    try:
        old = read_export_manifest(out)
    except (OSError, ValueError):
        return {}
    if not isinstance(old, dict) or old.get("kind") != "okgen-export":
        return {}
    exports = old.get("exports")
    if isinstance(exports, dict):
        return {str(k): v for k, v in exports.items() if isinstance(v, dict)}
    # A manifest written before "exports" describes its one export at the top level.
    if old.get("task") and old.get("format"):
        return {f"{old['format']}:{old['task']}": {k: v for k, v in old.items() if k != "kind"}}
    return {}


def _lm_eval(snapshot: Any, out: Path, setting: str, name: str, contexts: list[list],
             ret: dict[str, Any]) -> list[Path]:
    yaml = require("yaml", "export", "the lm-eval export")
    tmpl = get_template("mc-v1", "mc")
    rows = []
    for q, passages in zip(snapshot.questions, contexts):
        row = {"id": q.id, "prompt": tmpl.render(q, passages, setting).plain(),
               "choice_labels": list(LETTERS[:len(q.choices)]), "answer_index": q.answer_index,
               "question": q.question, "choices": list(q.choices), "source": q.source,
               "article_id": q.article_id, "date": q.date.isoformat()}
        if setting == "retrieval":
            row["retrieved"] = [p.article_id for p in passages]
        rows.append(row)
    data = out / f"{name}.jsonl"
    write_jsonl(data, rows)
    paths = [_lm_eval_task(yaml, out, name, data, "choice_labels", snapshot, tmpl, setting, ret),
             _lm_eval_task(yaml, out, f"{name}_full", data, "choices", snapshot, tmpl, setting, ret)]
    return [*paths, data]


def _lm_eval_task(yaml: Any, out: Path, name: str, data: Path, choices: str, snapshot: Any, tmpl: Any,
                  setting: str, ret: dict[str, Any]) -> Path:
    """One task YAML: letters as continuations (okgen's ``loglik``) or the choices' texts
    (``_full``: okgen's ``loglik-full`` is its ``acc``, ``loglik-norm`` its ``acc_norm``)."""
    task = {
        "task": name,
        "dataset_path": "json",
        "dataset_kwargs": {"data_files": {"test": str(data.resolve())}},
        "test_split": "test",
        "output_type": "multiple_choice",
        "doc_to_text": "prompt",
        "doc_to_choice": choices,
        "doc_to_target": "answer_index",
        "target_delimiter": " ",
        "metric_list": [{"metric": m, "aggregation": "mean", "higher_is_better": True} for m in ("acc", "acc_norm")],
        "metadata": {"version": 1.0, "okgen_signature": snapshot.manifest.signature, "okgen_template": tmpl.name,
                     "okgen_setting": setting,
                     **{f"okgen_{k}": v for k, v in ret.items() if k != "gold_retrieved"}},
    }
    path = out / f"{name}.yaml"
    atomic_write_text(path, yaml.safe_dump(task, sort_keys=False, allow_unicode=True, width=1000))
    return path


def _hf(snapshot: Any, out: Path, setting: str, name: str, contexts: list[list], ret: dict[str, Any]) -> list[Path]:
    pa = require("pyarrow", "export", "the hf export")
    pq = require("pyarrow.parquet", "export", "the hf export")
    arts = snapshot.articles_by_id
    qs = snapshot.questions
    questions = pa.table({
        "id": [q.id for q in qs],
        "date": pa.array([q.date for q in qs], pa.date32()),
        "source": [q.source for q in qs],
        "question": [q.question for q in qs],
        "choices": pa.array([list(q.choices) for q in qs], pa.list_(pa.string())),
        "answer_index": pa.array([q.answer_index for q in qs], pa.int32()),
        "answer": [q.answer for q in qs],
        "short_answer": [q.short_answer for q in qs],
        "article_id": [q.article_id for q in qs],
        "url": [arts[q.article_id].url for q in qs],
        "title": [arts[q.article_id].title for q in qs],
        "context": pa.array([_hf_context(arts[q.article_id], setting, c) for q, c in zip(qs, contexts)], pa.string()),
        **({"retrieved": pa.array([[p.article_id for p in c] for c in contexts], pa.list_(pa.string()))}
           if setting == "retrieval" else {}),
    })
    corpus = snapshot.corpus
    articles = pa.table({
        "id": [a.id for a in corpus],
        "date": pa.array([a.date for a in corpus], pa.date32()),
        "source": [a.source for a in corpus],
        "url": [a.url for a in corpus],
        "title": [a.title for a in corpus],
        # A release without texts gives null, never "" (an empty body to a retrieval pipeline).
        "text": pa.array([None if a.text_omitted else a.text for a in corpus], pa.string()),
        "text_sha256": [a.text_sha256 for a in corpus],
        "language": [a.language for a in corpus],
    })
    data = out / "data"
    data.mkdir(parents=True, exist_ok=True)
    qp, cp = data / "questions-00000-of-00001.parquet", data / "corpus-00000-of-00001.parquet"
    pq.write_table(questions, qp)
    pq.write_table(articles, cp)
    card = out / "README.md"
    atomic_write_text(card, _card(snapshot, setting))
    return [qp, cp, card]


def _hf_context(article: Any, setting: str, passages: list) -> str | None:
    """The ``context`` column: the source article (oracle), the passages as the prompt gives them
    (retrieval), else nothing."""
    if setting == "oracle":
        return article.text
    if setting == "retrieval":
        return get_template("mc-v1", "mc").context_block(passages, setting).strip()
    return None


def _card(snapshot: Any, setting: str) -> str:
    m = snapshot.manifest
    langs = sorted({a.language for a in snapshot.corpus if a.language}) or ["en"]
    header = {
        "pretty_name": f"okgen news benchmark {m.date}",
        "language": langs,
        "task_categories": ["multiple-choice", "question-answering"],
        "size_categories": [_size_category(int(m.counts.get("questions") or 0))],
        "configs": [
            {"config_name": "default", "data_files": [{"split": "test", "path": "data/questions-*.parquet"}]},
            {"config_name": "corpus", "data_files": [{"split": "test", "path": "data/corpus-*.parquet"}]},
        ],
    }
    yaml = require("yaml", "export", "the hf export")
    texts = "" if m.text_included else (": **this release has no article texts** (`text` is null; `text_sha256` "
                                        "pins each): restore them with `okgen hydrate`, then export again")
    return (f"---\n{yaml.safe_dump(header, sort_keys=False)}---\n\n# {header['pretty_name']}\n\n"
            f"Multiple-choice questions about news published on {m.date}, built by okgen {m.okgen_version} "
            f"({m.counts.get('questions')} questions, {m.counts.get('articles')} corpus articles).\n\n"
            f"- Signature: `{m.signature}`\n- Content hash: `{m.content_hash}`\n"
            f"- Choice order is fixed (shuffled once with seed {m.seed}); `answer_index` is 0-based.\n"
            f"- `context` holds {_CONTEXT_NOTE.get(setting, _CONTEXT_NOTE['none'])}.\n"
            f"- Config `corpus`: every article of the {max(m.windows)}-day window, for retrieval{texts}.\n\n"
            "Generated with `okgen export --format hf`. Article texts remain the property of their publishers.\n")


_CONTEXT_NOTE = {
    "oracle": "the source article",
    "retrieval": "the retrieved passages as okgen's prompt gives them (their article ids in `retrieved`)",
    "none": "the source article only in an oracle export, retrieved passages only in a retrieval export",
}


def _size_category(n: int) -> str:
    """The Hugging Face hub's size bucket for ``n`` rows."""
    for limit, name in ((1_000, "n<1K"), (10_000, "1K<n<10K"), (100_000, "10K<n<100K"), (1_000_000, "100K<n<1M")):
        if n < limit:
            return name
    return "1M<n<10M"


def _inspect(snapshot: Any, out: Path, setting: str, name: str, contexts: list[list],
             ret: dict[str, Any]) -> list[Path]:
    rows = []
    for q, passages in zip(snapshot.questions, contexts):
        text = q.question
        if setting == "oracle":
            a = snapshot.articles_by_id[q.article_id]
            text = f"Article:\n{a.title}\n{a.text}\n\nQuestion: {q.question}"
        elif setting == "retrieval":
            text = get_template("mc-v1", "mc").context_block(passages, setting) + f"Question: {q.question}"
        rows.append({"id": q.id, "input": text, "choices": list(q.choices), "target": LETTERS[q.answer_index],
                     "metadata": {"article_id": q.article_id, "source": q.source, "date": q.date.isoformat(),
                                  "short_answer": q.short_answer}})
    path = out / f"{name}.jsonl"
    write_jsonl(path, rows)
    return [path]


def read_export_manifest(folder: str | Path) -> dict[str, Any]:
    """The ``okgen_export.json`` of an export folder."""
    return json.loads((Path(folder) / "okgen_export.json").read_text(encoding="utf-8"))
