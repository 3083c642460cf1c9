"""The snapshot store: build, open, archive, verify and catalogue snapshots.

Light imports only; see :mod:`okgen.snapshot.build`, :mod:`okgen.snapshot.store`,
:mod:`okgen.snapshot.archive`, :mod:`okgen.snapshot.verify` and
:mod:`okgen.snapshot.catalogue`.
"""

from okgen.snapshot.store import Snapshot, list_snapshots, resolve

__all__ = ["Snapshot", "list_snapshots", "resolve"]
