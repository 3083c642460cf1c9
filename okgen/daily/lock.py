"""An exclusive, non-blocking lock so two runs of the same work never overlap.

``filelock`` holds an OS lock on a file under ``data/locks/`` (``flock`` on POSIX, released by
the kernel when the process dies, so a killed run never leaves a stale lock). A side file
records the holder's pid and start time for the message a second run prints.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from filelock import FileLock, Timeout

from okgen.errors import LockedError
from okgen.schema import utcnow


class RunLock:
    """Hold ``path`` for the duration of a ``with`` block, or raise :class:`LockedError`.

    Args:
        path: the lock file.
        what: what is running, for the message ("okgen daily").
        message: the whole message instead (``{holder}`` is replaced by the holder's pid and start).
    """

    def __init__(self, path: str | Path, what: str = "okgen daily", message: str | None = None):
        self.path = Path(path)
        self.holder_path = self.path.with_name(self.path.name + ".holder")
        self.message = message or f"another {what} is running in this workspace{{holder}}; try again when it has finished"
        self._lock = FileLock(self.path, timeout=0)

    def acquire(self) -> None:
        """Take the lock or raise :class:`LockedError` naming the holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            self._lock.acquire()
        except Timeout:
            holder = _read_holder(self.holder_path)
            who = f" (pid {holder.get('pid')}, started {holder.get('started')})" if holder else ""
            raise LockedError(self.message.format(holder=who)) from None
        self.holder_path.write_text(json.dumps({"pid": os.getpid(), "started": utcnow().isoformat()}))

    def release(self) -> None:
        """Release the lock."""
        if self._lock.is_locked:
            self.holder_path.unlink(missing_ok=True)
            self._lock.release()

    def held_by_live_process(self) -> bool:
        """Whether the holder the side file records is a live process, read without taking the
        lock (a check never makes a starting run refuse itself; a killed holder leaves its file)."""
        try:
            pid = int(_read_holder(self.holder_path).get("pid", 0))
        except (TypeError, ValueError, AttributeError):
            return False
        if pid <= 0:
            return False
        try:
            os.kill(pid, 0)  # signal 0: is it alive
        except ProcessLookupError:
            return False
        except PermissionError:
            return True  # alive, another user's
        return True

    def __enter__(self) -> RunLock:
        self.acquire()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release()


def _read_holder(path: Path) -> dict[str, Any]:
    try:
        return json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
