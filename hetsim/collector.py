"""The cyclic garbage collector paused while a task graph or a run is built.

Building a 10,000-op task graph or stepping a DES allocates hundreds of thousands of objects that
all live until the end (tasks, events, records); each allocation past the collector's threshold
starts a collection that walks every one of them again, ~40 % of such a run. They are freed by
reference counting or by the next collection after the pause.

    >>> with gc_paused():
    ...     tasks = [object() for _ in range(1000)]
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector in the block (nested blocks: the outer one resumes it)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
