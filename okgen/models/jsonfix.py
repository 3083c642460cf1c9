"""Tolerant JSON extraction: the last resort when a model was asked for JSON but wrapped it.

Handles code fences, prose before and after the object, smart quotes and trailing commas.
With ``allow_truncated`` it also recovers the complete part of an output cut by the length
limit: the text is cut back to the last complete element of an array and the open brackets
are closed. It never invents content: what it returns was in the text.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_OPEN_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*)$", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")


class JSONExtractError(ValueError):
    """No JSON value could be recovered from the text."""


def extract_json(text: str | None, *, allow_truncated: bool = False) -> Any:
    """Return the first JSON object or array found in ``text``.

    Args:
        text: model output.
        allow_truncated: when no complete value is found, recover the complete elements of a
            value whose tail is missing (see :func:`salvage_truncated`).

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
    if allow_truncated:
        m = _OPEN_FENCE.search(text)
        for cand in ([m.group(1)] if m else []) + [text]:
            value = salvage_truncated(cand)
            if value is not None:
                return value
    raise JSONExtractError("no valid JSON object in the output")


def salvage_truncated(text: str) -> Any | None:
    """Recover the complete prefix of a JSON value whose end is missing.

    ``{"questions": [{...}, {...}, {"quest`` becomes ``{"questions": [{...}, {...}]}``: the
    text is cut after the last element of an array that closed, and the brackets still open
    there are closed. Returns None when no such point exists.
    """
    start = next((i for i, c in enumerate(text) if c in "{["), None)
    if start is None:
        return None
    cuts: list[tuple[int, str]] = []  # (end index, closing brackets) after each complete array element
    for i, stack in _closings(text, start):
        if stack is None:
            return None
        if not stack:
            break  # a complete value: extract_json would have found it
        if stack[-1] == "]":
            cuts.append((i + 1, "".join(reversed(stack))))
    for end, closing in reversed(cuts):
        try:
            return json.loads(text[start:end] + closing)
        except json.JSONDecodeError:
            continue
    return None


def _unsmart(s: str) -> str:
    return s.replace("\u201c", '"').replace("\u201d", '"').replace("\u2018", "'").replace("\u2019", "'")


def _closings(s: str, start: int) -> Iterator[tuple[int, list[str] | None]]:
    """Walk ``s`` from ``start``; after each closing bracket outside a string, yield
    ``(index, brackets still open)`` — the open list is None (and the walk ends) on a mismatch."""
    stack: list[str] = []
    in_str = esc = False
    for i in range(start, len(s)):
        c = s[i]
        if in_str:
            if esc:
                esc = False
            elif c == "\\":
                esc = True
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c in "{[":
            stack.append("}" if c == "{" else "]")
        elif c in "}]":
            if not stack or stack.pop() != c:
                yield i, None
                return
            yield i, stack


def _balanced_block(s: str) -> str | None:
    """The first balanced {...} or [...] block, respecting strings."""
    start = next((i for i, c in enumerate(s) if c in "{["), None)
    if start is None:
        return None
    for i, stack in _closings(s, start):
        if stack is None:
            return None
        if not stack:
            return s[start : i + 1]
    return None
