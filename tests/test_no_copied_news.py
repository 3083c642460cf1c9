"""No text of the news-dev articles in the repository (their README: read them from
``../shared/data/news-dev/``, never copy their text into the repository).

Every string literal and comment of the Python files under tests/, bench/ and okgen/, every
text fixture under tests/, the question files of bench/data/, and the Markdown of docs/, README.md
and bench/README.md is checked for a run of
:data:`RUN` characters (whitespace squeezed) found verbatim in an article's title or text.
Skipped where the news sample is absent.
"""

from __future__ import annotations

import ast
import io
import json
import re
import tokenize
from pathlib import Path

import pytest

from okgen.testing.real_news import news_dev_dir

RUN = 40  # the longest run of an article's characters the repository may share with it, minus one
SEED = 30  # the indexed window: every run of RUN characters holds one that starts at a multiple of STEP
STEP = RUN - SEED
ROOT = Path(__file__).resolve().parents[1]


def _squeeze(text: str) -> str:
    return re.sub(r"\s+", " ", text)


@pytest.fixture(scope="module")
def news() -> tuple[str, set[str]]:
    """The articles' joined text and its SEED-character windows at every STEP-th offset."""
    files = sorted(news_dev_dir().glob("news_*.json"))
    if not files:
        pytest.skip(f"{news_dev_dir()} is absent (the shared news sample sits beside the repository)")
    parts = []
    for f in files:
        for art in json.loads(f.read_text(encoding="utf-8")):
            parts.append(f"{art.get('title') or ''}\n{art.get('article_text') or ''}")
    big = _squeeze("\n".join(parts))
    return big, {big[i:i + SEED] for i in range(0, len(big) - SEED + 1, STEP)}


def _python_texts(path: Path) -> list[str]:
    """String constants (implicitly joined literals count as one) and comments of a Python file."""
    src = path.read_text(encoding="utf-8")
    texts = [n.value for n in ast.walk(ast.parse(src, str(path)))
             if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    # A comment's sentence runs on over its following lines: a block of comments is one text.
    blocks: list[list[str]] = []
    last = -1
    for tok in tokenize.generate_tokens(io.StringIO(src).readline):
        if tok.type == tokenize.COMMENT:
            if tok.start[0] != last + 1:
                blocks.append([])
            blocks[-1].append(tok.string.lstrip("#").strip())
            last = tok.start[0]
    return texts + [" ".join(b) for b in blocks]


def _checked_files() -> list[Path]:
    files = [p for d in ("tests", "bench", "okgen") for p in sorted((ROOT / d).rglob("*.py"))]
    files += [p for p in sorted((ROOT / "tests").rglob("*")) if p.suffix in (".json", ".txt", ".html", ".xml", ".md")]
    files += sorted((ROOT / "docs").glob("*.md")) + [ROOT / "README.md", ROOT / "bench" / "README.md"]
    files += sorted((ROOT / "bench" / "data").glob("*.jsonl"))  # questions written for news-dev: anchors only
    return [p for p in files if p.is_file() and "__pycache__" not in p.parts]


def copied_run(text: str, big: str, seeds: set[str]) -> str | None:
    """The first run of RUN characters of ``text`` found verbatim in ``big`` (with what follows
    it, to find it by), or None."""
    text = _squeeze(text)
    for i in range(len(text) - SEED + 1):
        if text[i:i + SEED] in seeds:  # rare: check the runs of RUN characters around it
            for j in range(max(0, i - STEP), i + 1):
                if j + RUN <= len(text) and text[j:j + RUN] in big:
                    return text[j:j + RUN + 20]
    return None


def test_the_finder_sees_a_copied_run_and_nothing_shorter():
    big = _squeeze("Nothing here. The harbour authority of Vlissingen closed the northern quay for repairs on "
                   "a windy morning, officials said. More follows.")
    seeds = {big[i:i + SEED] for i in range(0, len(big) - SEED + 1, STEP)}
    copied = "Quoting: closed the northern quay\n  for repairs on a windy morning, and that was all."
    assert "the northern quay for repairs on a windy" in copied_run(copied, big, seeds)
    # A copied run is seen at every offset in the article, not only the indexed ones.
    for cut in range(STEP + 1):
        run = big[20 + cut:20 + cut + RUN]
        assert copied_run(f"<{run}>", big, seeds).startswith(run), cut
        assert copied_run(f"<{run[:-1]}>", big, seeds) is None, cut  # 39 characters
    assert copied_run("The harbour authority of Vlissingen shut its southern quay", big, seeds) is None


def test_the_repository_copies_no_news_article_text(news):
    big, seeds = news
    found = []
    for path in _checked_files():
        rel = path.relative_to(ROOT)
        texts = _python_texts(path) if path.suffix == ".py" else [path.read_text(encoding="utf-8")]
        for text in texts:
            run = copied_run(text, big, seeds)
            if run is not None:
                found.append(f"{rel}: {run!r}")
    assert not found, ("text copied from news-dev articles (paraphrase it: other wording, names and numbers):\n"
                       + "\n".join(found))
