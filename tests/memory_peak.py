"""The peak of Python's own allocations while a block runs (tracemalloc), for tests that bound
what a hostile input makes the kit hold."""

from __future__ import annotations

import tracemalloc
from contextlib import contextmanager


@contextmanager
def traced_peak():
    """`with traced_peak() as peak:` ... then `peak.bytes` is the block's peak, in bytes."""
    class Peak:
        bytes = 0

    tracemalloc.start()
    try:
        yield Peak
        Peak.bytes = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
