"""Answer positions: choices shuffled with the snapshot seed so that each position holds the
correct answer equally often (exactly, up to rounding: with 4 positions and n questions each
holds floor(n/4) or ceil(n/4)).

The order of the kept questions is fixed first (article id, question id); the list of target
positions ``[0, 1, 2, 3, 0, 1, ...]`` is then shuffled with the seed and dealt out, and each
question's distractors are shuffled with a seed derived from the snapshot seed and the question
id. Everything is a pure function of the seed and the questions.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from okgen.hashing import sha256_text

LETTERS = "ABCDEFGHIJ"


def _rng(seed: int, *parts: str) -> random.Random:
    return random.Random(int(sha256_text(":".join([str(seed), *parts]))[:16], 16))


def balanced_positions(n: int, seed: int, k: int = 4) -> list[int]:
    """``n`` positions in ``range(k)``, each used floor(n/k) or ceil(n/k) times, seeded order.

    The positions that get the extra ``n % k`` are chosen with the seed too.
    """
    extra = _rng(seed, "extra").sample(range(k), n % k)
    pos = [p for p in range(k) for _ in range(n // k)] + extra
    _rng(seed, "positions", str(n)).shuffle(pos)
    return pos


def place(answer: str, distractors: Sequence[str], position: int, seed: int, key: str) -> tuple[tuple[str, ...], int]:
    """Choices with ``answer`` at ``position`` and the distractors in a seeded order."""
    ds = list(distractors)
    _rng(seed, "distractors", key).shuffle(ds)
    position = min(position, len(ds))
    choices = ds[:position] + [answer] + ds[position:]
    return tuple(choices), position


def display_order(n_choices: int, seed: int, key: str) -> list[int]:
    """A seeded permutation for showing choices to the validator and probes (never the
    generator's order, where the answer often comes first)."""
    order = list(range(n_choices))
    _rng(seed, "display", key).shuffle(order)
    return order
