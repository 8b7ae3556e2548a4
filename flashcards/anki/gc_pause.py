"""Python's cyclic garbage collector paused while a package or a collection is built or
taken (an `.apkg` export or import, a device's full upload).

An export of a 10,000-card deck with 100,000 reviews allocates about half a million tuples
and rows, all kept until the package is made; each allocation threshold crossed starts a
collection, and the older generations' collections walk every one of those rows again
(about a quarter of the export's time in `bench_apkg_export`: 1.39 s against 1.05 s, and
an eighth of an import's). Nothing it allocates forms cycles, so collecting during it frees
nothing; reference counting frees the rows as ever.

The collector is process-wide: concurrent exports share one pause, which ends with the last
of them, and a collector someone else switched off stays off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_holders = 0
_resume = False  # whether the collector was on when the first holder paused it


@contextmanager
def gc_paused() -> Iterator[None]:
    global _holders, _resume
    with _lock:
        if _holders == 0:
            _resume = gc.isenabled()
            gc.disable()
        _holders += 1
    try:
        yield
    finally:
        with _lock:
            _holders -= 1
            if _holders == 0 and _resume:
                gc.enable()
