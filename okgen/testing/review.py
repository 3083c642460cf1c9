"""Review sheets filled by a test, as a reviewer would in a spreadsheet."""

from __future__ import annotations

import csv
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def read_rows(path: Path) -> list[dict[str, Any]]:
    """The rows of a CSV review sheet."""
    with Path(path).open(encoding="utf-8") as f:
        return list(csv.DictReader(f))


def write_rows(path: Path, rows: Sequence[dict[str, Any]], columns: Sequence[str] | None = None) -> None:
    """Write ``rows`` back as the sheet (the okgen columns unless ``columns``)."""
    from okgen.generate.review import COLUMNS

    with Path(path).open("w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(columns or COLUMNS))
        w.writeheader()
        w.writerows(rows)


def fill(path: Path, reviewer: str, publishable: Callable[[int], int] = lambda i: 1) -> None:
    """Rate every criterion 1, ``publishable`` as the function of the row's index says."""
    from okgen.generate.review import CRITERIA

    rows = read_rows(path)
    for i, r in enumerate(rows):
        r.update({c: "1" for c in CRITERIA}, publishable=str(publishable(i)), reviewer=reviewer)
    write_rows(path, rows)
