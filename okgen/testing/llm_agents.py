"""Deterministic stand-ins for LLM agents, served by :class:`OpenAIServer`, for tests and benches.

:class:`AgentResponder` answers the three kinds of requests ``okgen generate`` sends:

* generator requests (``response_format`` named ``GeneratedQuestions``): it finds the article
  by its title in the prompt and writes questions with okgen's own extractive generator, as
  JSON in the generator's schema, so the answers are realistic and pass the checks;
* validator requests (``ValidatorVerdicts``): every criterion named in the schema passes;
* probe requests (no schema): the letter chosen by ``probe_answer`` (default: ``"A"``).

``overrides`` map an article title to a :class:`Reply` (or a callable) to script failures for
one article, e.g. a refusal or invalid JSON. ``questions`` map an article title to hand-written
questions served instead of the extractive generator's (e.g.
:func:`okgen.testing.fixture_questions.fixture_questions`), for tests that need several
questions per article.

Example::

    with OpenAIServer(responder=AgentResponder(articles), latency=0.2) as srv:
        run_generate(date, ws, articles, generator=f"openai/fake,base_url={srv.base_url}")
"""

from __future__ import annotations

import datetime as dt
import json
import re
import threading
from collections.abc import Callable, Sequence
from typing import Any

from okgen.schema import Article
from okgen.testing.openai_server import Reply


class AgentResponder:
    """Responder for :class:`OpenAIServer` that plays generator, validator and probe.

    Args:
        articles: the articles the generator may be asked about (and its distractor pool).
        seed: seed of the extractive generator used to write the questions.
        probe_answer: ``f(request_json) -> str`` giving the probe's reply.
        overrides: article title -> Reply (or ``f(request_json) -> Reply | str``) for generator calls.
        validator: ``f(request_json, criteria) -> dict`` giving the validator's verdicts.
        questions: article title -> questions in the generator's schema, ``{date}`` standing for
            the article's date; the first ``n`` asked are served for those articles.
    """

    def __init__(self, articles: Sequence[Article], seed: int = 0, probe_answer: Callable[[dict], str] | None = None,
                 overrides: dict[str, Any] | None = None, validator: Callable[[dict, list[str]], dict] | None = None,
                 questions: dict[str, list[dict[str, Any]]] | None = None):
        from okgen.generate.agents import load_agent, packaged_agents_dir
        from okgen.generate.extractive import ExtractiveGenerator

        self.articles = list(articles)
        self.by_title: dict[str, list[Article]] = {}
        for a in self.articles:
            self.by_title.setdefault(a.title, []).append(a)
        self.gen = ExtractiveGenerator(load_agent("extractive", packaged_agents_dir()), seed)
        dates = sorted({a.date for a in self.articles})
        self.pool = self.gen.build_pool(self.articles, dates[-1] if dates else dt.date.today())
        self.probe_answer = probe_answer or (lambda req: "A")
        self.overrides = dict(overrides or {})
        self.validator = validator
        self.questions = dict(questions or {})
        self.calls: dict[str, int] = {"generator": 0, "validator": 0, "probe": 0}
        self.answers: dict[str, str] = {}  # question -> answer, for every question written
        self._lock = threading.Lock()
        self._memo: dict[tuple[str, int], str] = {}

    def kind(self, req: dict[str, Any]) -> str:
        """``generator``, ``validator`` or ``probe``."""
        fmt = req.get("response_format") or {}
        name = (fmt.get("json_schema") or {}).get("name", "")
        text = json.dumps(req.get("messages", []))
        if name == "GeneratedQuestions" or "You write questions" in text:
            return "generator"
        if name == "ValidatorVerdicts" or "You review multiple-choice questions" in text:
            return "validator"
        return "probe"

    def __call__(self, req: dict[str, Any], endpoint: str) -> Reply | str:
        kind = self.kind(req)
        with self._lock:
            self.calls[kind] += 1
        if kind == "generator":
            return self.generate(req)
        if kind == "validator":
            return self.validate(req)
        return self.probe_answer(req)

    def article_of(self, req: dict[str, Any]) -> Article | None:
        """The article a generator or validator request is about (by its title)."""
        user = req["messages"][-1]["content"]
        m = re.search(r"^Title: (.*)$", user, re.M)
        if not m:
            return None
        same = self.by_title.get(m.group(1).strip(), [])
        # Titles can repeat (the synthetic corpus); the text decides.
        return next((a for a in same if a.text[:200] in user), same[0] if same else None)

    def generate(self, req: dict[str, Any]) -> Reply | str:
        """Questions for the article in the prompt, in the generator's JSON schema."""
        a = self.article_of(req)
        if a is None:
            return Reply(content='{"questions": []}')
        if a.title in self.overrides:
            o = self.overrides[a.title]
            return o(req) if callable(o) else o
        return self.default_questions(req)

    def default_questions(self, req: dict[str, Any]) -> str:
        """The questions the generator writes when no override applies (JSON text)."""
        a = self.article_of(req)
        if a is None:
            return '{"questions": []}'
        m = re.search(r"Write (\d+) questions", req["messages"][-1]["content"])
        return self._questions(a, int(m.group(1)) if m else 5)

    def _questions(self, a: Article, n: int) -> str:
        key = (a.id, n)
        with self._lock:
            if key in self._memo:
                return self._memo[key]
        if a.title in self.questions:
            from okgen.generate.text import format_date

            date_s = format_date(a.date)
            items = [dict(q, question=q["question"].format(date=date_s),
                          rationale=f"{a.source_name or a.source} reported on {date_s}: {q['rationale']}")
                     for q in self.questions[a.title][:n]]
        else:
            items = [{"question": c.question, "choices": c.choices, "answer": c.answer, "short_answer": c.short_answer,
                      "rationale": c.rationale, "evidence": c.evidence} for c in self.gen.generate(a, n, self.pool)]
        text = json.dumps({"questions": items})
        with self._lock:
            self.answers.update({q["question"]: q["answer"] for q in items})
            self._memo[key] = text
        return text

    def warm(self, n: int = 5) -> AgentResponder:
        """Write every article's questions now, so that serving them costs no CPU (benches)."""
        for a in self.articles:
            self._questions(a, n)
        return self

    def validate(self, req: dict[str, Any]) -> str:
        """Every criterion passes (or what ``validator`` says)."""
        schema = ((req.get("response_format") or {}).get("json_schema") or {}).get("schema") or {}
        criteria = list(schema.get("properties", {}))
        if self.validator is not None:
            return json.dumps(self.validator(req, criteria))
        return json.dumps({c: {"reason": "The question meets this criterion.", "passed": True} for c in criteria})


    def letter(self, req: dict[str, Any], correct: bool = True) -> str:
        """For a probe request: the letter of the right choice, or of the first wrong one."""
        question = question_text(req)
        answer = self.answers.get(question)
        choices = re.findall(r"^([A-J])\) (.*)$", req["messages"][-1]["content"], re.M)
        for letter, text in choices:
            if (text == answer) == correct:
                return letter
        return "Z"


def question_text(req: dict[str, Any]) -> str:
    """The question a validator or probe request asks about."""
    user = req["messages"][-1]["content"]
    m = re.search(r"^Question: (.*)$", user, re.M)
    return m.group(1) if m else user.strip().split("\n\n", 1)[0]
