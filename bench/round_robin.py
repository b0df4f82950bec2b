"""Interleaved timing shared by the benchmarks that compare implementations.

The machines these benchmarks run on are often shared, so each timed call of
one implementation is followed by one of every other (round robin): load
from other processes then spreads over all of them instead of landing on
whichever ran at the wrong moment. Each call also records the process's CPU
time, from which `timing_table.summarize` derives the CPU share: CPU time
over wall time over threads, well under 100% when other processes took the
cores.

The benchmarks also share their run set-up from here: the `--threads` flag,
giving TensorFlow and PyTorch the same thread count, and checked list flags
(`--sizes`, `--implementations`). PyTorch is imported only to set its
threads, so a bench using just the timing or the flags runs without it.
"""

import os
import time
from typing import Callable, Dict, Hashable, Tuple

from absl import flags
import tensorflow as tf

import peers
from timing_table import Samples


def define_threads_flag():
    """Defines `--threads` (default: the cores this process may use)."""
    flags.DEFINE_integer("threads", len(os.sched_getaffinity(0)),
                         "Compute threads for TensorFlow and PyTorch.", lower_bound=1)


def define_choices_flag(name, default, choices, help_text):
    """Defines a comma-separated list flag whose items must be among `choices`."""
    flags.DEFINE_list(name, list(default), help_text)
    flags.register_validator(name, lambda values: set(values) <= set(choices),
                             f"--{name}: each must be one of {', '.join(choices)}")


def use_threads(threads: int) -> None:
    """Gives TensorFlow's intra-op pool and PyTorch the same number of threads."""
    with peers.needed():
        import torch
    tf.config.threading.set_intra_op_parallelism_threads(threads)
    torch.set_num_threads(threads)


def time_round_robin(runners: Dict[Hashable, Callable], warmup: int, iterations: int,
                     rewarm: bool = False
                     ) -> Tuple[Dict[Hashable, Samples], Dict[Hashable, object]]:
    """Warms every runner up, then times `iterations` calls of each, interleaved.

    `rewarm` adds one untimed call of a runner right before each of its
    timed calls. For short calls after peers that leave a core idle: on
    the Intel AMX machine's VM, the first 40-50 ms of work after a core
    idled for a second ran at half speed or less, so a 45 ms tokenizer pass
    timed right after a 1.2 s single-threaded one took 80-160 ms
    (docs/PERFORMANCE.md, "A core that wakes slowly").

    Returns `{key: samples}` and `{key: what its last call returned}`.
    """
    outputs = {}
    for key, run in runners.items():
        for _ in range(warmup):
            outputs[key] = run()
    times = {key: [] for key in runners}
    for _ in range(iterations):
        for key, run in runners.items():
            if rewarm:
                run()
            wall, cpu = time.perf_counter(), time.process_time()
            outputs[key] = run()
            times[key].append((time.perf_counter() - wall, time.process_time() - cpu))
    return times, outputs
