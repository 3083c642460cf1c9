"""The ``README.md`` data card written into every snapshot."""

from __future__ import annotations

from okgen.schema import SnapshotManifest
from okgen.signature import Signature
from okgen.snapshot.quality import QualityEvidence, render_quality


def render_datacard(manifest: SnapshotManifest, sig: Signature, quality: QualityEvidence | None = None) -> str:
    """Render the data card: what the snapshot is, its signature, counts, quality evidence and
    how to cite it."""
    c = manifest.counts
    by_window = c.get("articles_by_window", {})
    windows = ", ".join(f"{w}-day: {by_window.get(str(w), '?')}" for w in manifest.windows)
    sources = c.get("questions_by_source", {})
    top_sources = ", ".join(f"{s} ({n})" for s, n in sorted(sources.items(), key=lambda kv: (-kv[1], kv[0]))[:15])
    validator = manifest.validator.model if manifest.validator else "none"
    text_note = (
        "This release includes the extracted article texts."
        if manifest.text_included
        else "This release omits article texts: the corpus holds URLs, titles and text hashes. "
        "Run `okgen hydrate` to fetch the texts again; each is verified against its hash."
    )
    return f"""# okgen snapshot {manifest.date} ({sig.short_hash})

A multiple-choice knowledge benchmark built by [okgen](https://github.com/okgen/okgen)
{manifest.okgen_version} from news articles published on {manifest.date} (UTC day unless the
builder configured another timezone). Questions ask about facts that were new on that day, so
models trained before it cannot have seen them.

## Signature

```
{sig.format()}
```

Short form: `{sig.short}`. Explain any field with `okgen signature explain '<signature>'`;
check this folder with `okgen snapshot verify <folder>`.

## Contents

| file | what |
| --- | --- |
| `questions.jsonl` | {c.get('questions', 0)} questions (question, four shuffled choices, answer, short answer, evidence, verdicts) |
| `corpus.jsonl` | {c.get('articles', 0)} articles of the {max(manifest.windows)}-day window ending {manifest.date} ({windows}) |
| `manifest.json` | parameters, counts, the generation funnel and the SHA-256 of every file |

- Generator: `{manifest.generator.model}`; validator: `{validator}`; seed {manifest.seed}.
- Questions by source: {top_sources or 'none'}.

{_quality_section(quality)}## How to use

```
okgen eval --signature '{sig.short}' --model hf/Qwen/Qwen2.5-1.5B-Instruct --setting none
okgen retrieval-eval --signature '{sig.short}' --retrievers bm25 --windows {",".join(str(w) for w in sorted(manifest.windows))}
```

## How to cite

Cite okgen and report the full signature above next to every number, as with SacreBLEU:
two scores are comparable only when their signatures match.

## Copyright of the news text

The articles belong to their publishers. {text_note} The questions and this data card are
released for research use; redistribute article texts only where the publishers' terms allow.
"""


def _quality_section(q: QualityEvidence | None) -> str:
    if q is None:
        return ""
    lines = "\n".join(f"- {x}" for x in render_quality(q))
    return f"""## Quality evidence

`quality.json` (beside the manifest, outside the content hash) holds the rate of every quality
gate, the stem-article overlap, the distractors' type agreement, the answer-type mix, per-outlet
counts, a seeded sample of {len(q.sample)} questions to read, and human review verdicts once
`okgen review import` has recorded them. At build time:

{lines}

"""
