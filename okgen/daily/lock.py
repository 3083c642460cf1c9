"""An exclusive, non-blocking workspace lock so two daily runs never overlap.

The lock is an ``flock`` on a file under ``data/locks/``: the kernel releases it when the
process dies, so a killed run never leaves a stale lock behind. The file records the holder's
pid and start time for the message the second run prints.
"""

from __future__ import annotations

import fcntl
import json
import os
from pathlib import Path
from typing import Any

from okgen.errors import LockedError
from okgen.schema import utcnow


class RunLock:
    """Hold ``data/locks/<name>.lock`` for the duration of a ``with`` block.

    Args:
        path: the lock file.
        what: what is running, for the message.
    """

    def __init__(self, path: str | Path, what: str = "okgen daily"):
        self.path = Path(path)
        self.what = what
        self._fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise :class:`LockedError` naming the holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            who = f" (pid {holder.get('pid')}, started {holder.get('started')})" if holder else ""
            raise LockedError(f"another {self.what} is running in this workspace{who}; try again when it has finished") from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "started": utcnow().isoformat()}).encode())
        os.fsync(fd)
        self._fd = fd

    def release(self) -> None:
        """Release the lock."""
        if self._fd is not None:
            fcntl.flock(self._fd, fcntl.LOCK_UN)
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _read_holder(fd: int) -> dict[str, Any]:
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        return json.loads(os.read(fd, 4096).decode() or "{}")
    except (OSError, ValueError):
        return {}
