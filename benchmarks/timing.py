"""Wall-clock timing shared by the benchmarks: the median of repeated runs (the machine is shared)."""

import statistics
import time


def median_seconds(fn, repeats):
    """Median wall time of `repeats` calls of `fn()`."""
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)
