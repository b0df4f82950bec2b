"""Interleaved timing shared by the benchmarks that compare implementations.

The machines these benchmarks run on are often shared, so each timed call of
one implementation is followed by one of every other (round robin): load
from other processes then spreads over all of them instead of landing on
whichever ran at the wrong moment. Each call also records the process's CPU
time, from which `summarize` derives the CPU share: CPU time over wall time
over threads, well under 100% when other processes took the cores.
"""

import statistics
import time
from typing import Callable, Dict, Hashable, List, NamedTuple, Tuple

Samples = List[Tuple[float, float]]  # (wall seconds, process CPU seconds) per call


def time_round_robin(runners: Dict[Hashable, Callable], warmup: int,
                     iterations: int) -> Tuple[Dict[Hashable, Samples], Dict[Hashable, object]]:
    """Warms every runner up, then times `iterations` calls of each, interleaved.

    Returns `{key: samples}` and `{key: what its last call returned}`.
    """
    outputs = {}
    for key, run in runners.items():
        for _ in range(warmup):
            outputs[key] = run()
    times = {key: [] for key in runners}
    for _ in range(iterations):
        for key, run in runners.items():
            wall, cpu = time.perf_counter(), time.process_time()
            outputs[key] = run()
            times[key].append((time.perf_counter() - wall, time.process_time() - cpu))
    return times, outputs


class Summary(NamedTuple):
    """Median, fastest and slowest call in seconds, and the CPU share (0..1)."""

    median: float
    fastest: float
    slowest: float
    cpu_share: float


def summarize(samples: Samples, threads: int) -> Summary:
    walls = [wall for wall, _ in samples]
    return Summary(statistics.median(walls), min(walls), max(walls),
                   sum(cpu for _, cpu in samples) / sum(walls) / threads)
