"""Tolerant JSON extraction: the last resort when a model was asked for JSON but wrapped it.

Handles code fences, prose before and after the object (including a reasoning model's
``<think>...</think>`` block and bracketed asides such as ``[1]``), smart quotes, trailing
commas and Python-style single-quoted dicts.
With ``allow_truncated`` it also recovers the complete part of an output cut by the length
limit: the text is cut back to the last complete element of an array and the open brackets
are closed. It never invents content: what it returns was in the text.
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Iterator
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)
_OPEN_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*)$", re.S)
_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_THINK = re.compile(r"<think(?:ing)?>.*?(?:</think(?:ing)?>|$)", re.S | re.I)
_MAX_SALVAGE = 8  # cut points salvage_truncated tries, from the end
_MAX_STARTS = 64
_OPENING = re.compile(r"[{\[]")  # bracket positions tried before giving up on a long, messy output


class JSONExtractError(ValueError):
    """No JSON value could be recovered from the text."""


def extract_json(text: str | None, *, allow_truncated: bool = False) -> Any:
    """Return the JSON value in ``text``: the whole text, a fenced block, or else the first
    parseable top-level ``{...}`` block (an object is preferred to an array found before it,
    so ``see [1]: {...}`` gives the object).

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
    unthought = _THINK.sub("", text).strip()  # braces inside a reasoning block are not the answer
    candidates = [unthought] + [m.group(1).strip() for m in _FENCE.finditer(unthought)]
    for cand in dict.fromkeys([text, *candidates]):
        try:
            return json.loads(cand)
        except json.JSONDecodeError:
            pass
    for cand in candidates:
        found = _first_value(cand)
        if found is not None:
            return found[0]
    if allow_truncated:
        m = _OPEN_FENCE.search(unthought)
        for cand in ([m.group(1)] if m else []) + [unthought]:
            value = salvage_truncated(cand)
            if value is not None:
                return value
    raise JSONExtractError("no valid JSON object in the output")


def _first_value(s: str) -> tuple[Any] | None:
    """The first top-level block of ``s`` that parses (objects before arrays), in a 1-tuple."""
    first_list: tuple[Any] | None = None
    i, tried = 0, 0
    while tried < _MAX_STARTS:
        m = _OPENING.search(s, i)
        if m is None:
            break
        start = m.start()
        tried += 1
        block = _balanced_block(s, start)
        if block is None:
            break  # never closes: what follows is inside it (a cut output is salvage's job)
        value = _parse_block(block)
        if value is not None and isinstance(value[0], dict):
            return value
        if value is not None:
            first_list = first_list or value
        i = start + len(block)  # past it: the blocks inside a value, or inside "{x}" prose, are not top-level
    return first_list


def _parse_block(block: str) -> tuple[Any] | None:
    for attempt in (block, _TRAILING_COMMA.sub(r"\1", block), _TRAILING_COMMA.sub(r"\1", _unsmart(block))):
        try:
            return (json.loads(attempt),)
        except json.JSONDecodeError:
            continue
    if "'" in block:  # a Python-style dict ({'a': 'b', 'ok': True}): literals only, nothing runs
        try:
            value = ast.literal_eval(_unsmart(block))
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return None
        if isinstance(value, dict | list):
            return (value,)
    return None


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
    # The last complete points first, and only a few: each attempt parses the whole prefix, so
    # trying every element of a long output would take quadratic time.
    for end, closing in reversed(cuts[-_MAX_SALVAGE:]):
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


def _balanced_block(s: str, start: int) -> str | None:
    """The balanced {...} or [...] block that opens at ``start``, respecting strings."""
    for i, stack in _closings(s, start):
        if stack is None:
            return None
        if not stack:
            return s[start : i + 1]
    return None
