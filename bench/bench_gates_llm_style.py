"""What the checks and quality gates keep of questions as a careful LLM writes them.

The gates were tuned on the offline generator's questions; an LLM generator writes others.
``bench/data/llm_style_questions.jsonl`` holds questions written by hand for 40 news-dev
articles under okgen's own generator prompt (``agents/generator/system.md``): per article two
good ones and one with a named defect (a pronoun, a definite description, a giveaway word, a
wrong question word, a caption, no date, "the article", a long answer, a run-together or
shouted option). Each goes the way of an LLM generator's answer (``parse_outcome``, the
checks, the gates), and the bench prints what is kept:

* **good kept**: the share of good questions no check or gate drops (a drop is a false alarm);
* **flawed caught**: the share of flawed ones dropped, and by which check or gate.

The data file holds no news text beyond the answers and short anchors: an evidence sentence
is stored as its first and last characters and found again in the article (news-dev is read
from ``../shared/data/news-dev/``, the article by its okgen id).

    python bench/bench_gates_llm_style.py [--questions FILE] [--news DIR] [--show] [--json]

``--json`` prints the counts as one JSON object instead (the slow test tier reads it).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from okgen.generate.checks import check_candidate  # noqa: E402
from okgen.generate.gates import apply_gates_many  # noqa: E402
from okgen.generate.llm_generator import GeneratedQuestions, parse_outcome  # noqa: E402
from okgen.generate.nlp import load_pipeline  # noqa: E402
from okgen.generate.text import normalize  # noqa: E402
from okgen.llm import ChatResult  # noqa: E402
from okgen.schema import Article  # noqa: E402
from okgen.testing.real_news import news_dev_dir  # noqa: E402


def load_articles(news: Path, days: set[str], home: Path) -> dict[str, Article]:
    """The days' news-dev articles as ``okgen ingest --import`` stores them, by okgen id."""
    import datetime as dt
    import os
    import subprocess

    from okgen.ingest.store import ArticleStore

    env = {**os.environ, "OKGEN_HOME": str(home), "OKGEN_NO_PROGRESS": "1"}
    out: dict[str, Article] = {}
    for day in sorted(days):
        subprocess.run([sys.executable, "-m", "okgen", "-q", "ingest", "--date", day, "--import",
                        str(news / f"news_{day}.json")], check=True, env=env, cwd=ROOT, stdout=subprocess.DEVNULL)
    with ArticleStore(home / "data" / "okgen.sqlite") as st:
        for day in sorted(days):
            out.update((a.id, a) for a in st.articles_for_date(dt.date.fromisoformat(day)))
    return out


def evidence_of(item: dict, text: str) -> str:
    """The evidence sentence: from its stored start to its stored end, in the article."""
    start = text.find(item["evidence_start"])
    if start < 0:
        raise ValueError(f"evidence start {item['evidence_start']!r} not in article {item['article_id']}")
    end = text.find(item["evidence_end"], start)
    if end < 0:
        raise ValueError(f"evidence end {item['evidence_end']!r} not in article {item['article_id']}")
    return text[start:end + len(item["evidence_end"])]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--questions", type=Path, default=ROOT / "bench" / "data" / "llm_style_questions.jsonl")
    ap.add_argument("--news", type=Path, default=news_dev_dir())
    ap.add_argument("--show", action="store_true", help="print every dropped good and kept flawed question")
    ap.add_argument("--json", action="store_true", help="print the counts as one JSON object")
    args = ap.parse_args()
    if not args.news.is_dir():
        print(f"skipped: {args.news} is absent (the shared news sample sits beside the repository)")
        return 0
    try:
        items = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines() if line.strip()]
    except (OSError, ValueError) as e:
        raise SystemExit(f"bench_gates_llm_style: cannot read {args.questions}: {e}") from None
    import tempfile

    with tempfile.TemporaryDirectory(prefix="okgen-bench-gates-") as home:
        articles = load_articles(args.news, {it["date"] for it in items}, Path(home))
    nlp = load_pipeline()
    by_article: dict[str, list[tuple[dict, object]]] = {}
    for it in items:
        a = articles.get(it["article_id"])
        if a is None:
            raise SystemExit(f"article {it['article_id']} is not in {args.news}")
        try:
            q = {k: it[k] for k in ("question", "choices", "answer", "short_answer")}
            q["rationale"], q["evidence"] = it.get("rationale", ""), evidence_of(it, a.text)
        except (KeyError, ValueError) as e:
            raise SystemExit(f"bench_gates_llm_style: question {it.get('n')} of {args.questions}: {e}") from None
        res = ChatResult(text="", parsed=GeneratedQuestions.model_validate({"questions": [q]}))
        cand = parse_outcome(res, a.id, 1).candidates[0]
        check_candidate(cand, normalize(f"{a.title}\n{a.text}"))
        by_article.setdefault(a.id, []).append((it, cand))
    t0 = time.process_time()
    apply_gates_many([(articles[aid], [c for _, c in pairs]) for aid, pairs in by_article.items()], nlp=nlp)
    cpu = time.process_time() - t0
    good = Counter()
    flawed: dict[str, Counter] = {}
    for pairs in by_article.values():
        for it, c in pairs:
            dropped = c.rejected_by
            if it["kind"] == "good":
                good["dropped" if dropped else "kept"] += 1
                if dropped:
                    good[f"by {dropped}"] += 1
                    if args.show:
                        reason = next((v.reason for v in c.verdicts if v.name == dropped), "")
                        print(f"good, dropped by {dropped}: {c.question} [{c.answer}] ({reason})")
            else:
                flawed.setdefault(it["defect"], Counter())[dropped or "kept"] += 1
                if args.show and not dropped:
                    print(f"flawed ({it['defect']}), kept: {c.question} {c.choices} [{c.answer}]")
    if args.json:
        print(json.dumps(summary(good, flawed, cpu)))
        return 0
    n_good = good["kept"] + good["dropped"]
    print(f"good questions: {n_good}, kept {good['kept']} ({good['kept'] / max(1, n_good):.0%}); dropped by: "
          + (", ".join(f"{k[3:]} {v}" for k, v in sorted(good.items()) if k.startswith("by ")) or "none"))
    n_flawed = sum(sum(c.values()) for c in flawed.values())
    caught = sum(v for c in flawed.values() for k, v in c.items() if k != "kept")
    print(f"flawed questions: {n_flawed}, caught {caught} ({caught / max(1, n_flawed):.0%})")
    for defect, c in sorted(flawed.items()):
        print(f"  {defect:20s} " + ", ".join(f"{k} {v}" for k, v in c.most_common()))
    print(f"gates' CPU: {cpu:.2f} s for {len(items)} questions")
    return 0


def summary(good: Counter, flawed: dict[str, Counter], cpu: float) -> dict:
    """The counts as JSON: good kept/dropped (by gate), flawed caught/kept (by defect)."""
    return {"good": {"n": good["kept"] + good["dropped"], "kept": good["kept"],
                     "dropped_by": {k[3:]: v for k, v in sorted(good.items()) if k.startswith("by ")}},
            "flawed": {"n": sum(sum(c.values()) for c in flawed.values()),
                       "caught": sum(v for c in flawed.values() for k, v in c.items() if k != "kept"),
                       "by_defect": {d: dict(c.most_common()) for d, c in sorted(flawed.items())}},
            "gates_cpu_s": round(cpu, 3)}


if __name__ == "__main__":
    raise SystemExit(main())
