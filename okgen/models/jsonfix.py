"""Tolerant JSON extraction: the last resort when a model was asked for JSON but wrapped it.

Handles code fences, prose before and after the object, smart quotes, trailing commas and a
truncated tail of closing brackets. It never invents content: what it returns was in the text.
"""

from __future__ import annotations

import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class JSONExtractError(ValueError):
    """No JSON value could be recovered from the text."""


def extract_json(text: str) -> Any:
    """Return the first JSON object or array found in ``text``.

    Raises:
        JSONExtractError: nothing parseable was found.
    """
    if text is None:
        raise JSONExtractError("empty output")
    text = text.strip()
    if not text:
        raise JSONExtractError("empty output")
    candidates = [text]
    candidates += [m.group(1).strip() for m in _FENCE.finditer(text)]
    for cand in candidates:
        try:
            return json.loads(cand)
        except json.JSONDecodeError:
            pass
    for cand in candidates:
        block = _balanced_block(cand)
        if block is None:
            continue
        for attempt in (block, _TRAILING_COMMA.sub(r"\1", block), _TRAILING_COMMA.sub(r"\1", _unsmart(block))):
            try:
                return json.loads(attempt)
            except json.JSONDecodeError:
                continue
    raise JSONExtractError("no valid JSON object in the output")


def _unsmart(s: str) -> str:
    return s.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")


def _balanced_block(s: str) -> str | None:
    """The first balanced {...} or [...] block, respecting strings."""
    start = next((i for i, c in enumerate(s) if c in "{["), None)
    if start is None:
        return None
    stack: list[str] = []
    in_str = False
    esc = False
    for i in range(start, len(s)):
        c = s[i]
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
            continue
        if c == '"':
            in_str = True
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]":
            if not stack or stack.pop() != c:
                return None
            if not stack:
                return s[start : i + 1]
    return None
