"""Interleaved timing shared by the benchmarks that compare implementations.

The machines these benchmarks run on are often shared, so each timed call of
one implementation is followed by one of every other (round robin): load
from other processes then spreads over all of them instead of landing on
whichever ran at the wrong moment. Each call also records the process's CPU
time, from which `summarize` derives the CPU share: CPU time over wall time
over threads, well under 100% when other processes took the cores.

The benchmarks also share their run set-up from here: the `--threads` flag,
giving TensorFlow and PyTorch the same thread count, and the load average
printed above each table.
"""

import os
import statistics
import time
from typing import Callable, Dict, Hashable, List, NamedTuple, Tuple

from absl import flags
import tensorflow as tf
import torch

Samples = List[Tuple[float, float]]  # (wall seconds, process CPU seconds) per call


def define_threads_flag():
    """Defines `--threads` (default: the cores this process may use)."""
    flags.DEFINE_integer("threads", len(os.sched_getaffinity(0)),
                         "Compute threads for TensorFlow and PyTorch.", lower_bound=1)


def use_threads(threads: int) -> None:
    """Gives TensorFlow's intra-op pool and PyTorch the same number of threads."""
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    torch.set_num_threads(threads)


def load_average() -> str:
    """The 1, 5 and 15-minute load averages, for a table's header."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())


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
