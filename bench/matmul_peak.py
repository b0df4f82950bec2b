"""The matmul peak a benchmark's "% peak" divides by, measured in its own process.

A share of peak only means something against a rate this process can
really reach, with these threads, on this machine, at this moment (the
machines are often shared). So the peak is measured rather than taken from
a data sheet: the best GFLOP/s of a square matmul that any framework the
benches compare reaches in the same process, i.e. TensorFlow (`tf.matmul`
in a `tf.function`: oneDNN), PyTorch (`torch.mm`) and numpy (its BLAS, held
to the same thread count with threadpoolctl), at a few sizes, best of a few
calls each. bfloat16 rows get a bfloat16 peak from TensorFlow and PyTorch
(numpy has no bfloat16). A matmul of two `n x n` matrices counts `2 n^3`
FLOPs. `timing_table.BenchRun` measures it before and after the timings and
uses the larger. On a CUDA GPU (`gpu_frameworks`, for
`gpu_training_step.py`) the frameworks are TensorFlow and/or PyTorch,
in float32 (with whatever matmul precision each is set to: TF32 by
default in TensorFlow), bfloat16 or float16, each call read back so that
it has finished.

Example (tiny sizes; a real peak wants 2048 and 4096):

>>> peak = measure("float32", sizes=(64,), repeats=1, threads=1)
>>> peak.framework in FRAMEWORKS["float32"], peak.size, peak.gflops > 0
(True, 64, True)
"""

import contextlib
import time
from typing import NamedTuple, Sequence

from absl import flags
import numpy as np
import tensorflow as tf

import peers

with peers.needed():
    import torch

# The frameworks of a CPU peak, by dtype; on a GPU: GPU_FRAMEWORKS in GPU_DTYPES.
FRAMEWORKS = {"float32": ("tensorflow", "torch", "numpy"), "bfloat16": ("tensorflow", "torch")}
GPU_FRAMEWORKS = ("tensorflow", "torch")
GPU_DTYPES = ("float32", "bfloat16", "float16")


class Peak(NamedTuple):
    """The best rate: GFLOP/s first, so `max` of peaks picks the fastest."""

    gflops: float
    framework: str
    size: int


def define_peak_flags(default=("2048", "4096")):
    """Defines `--peak_sizes`: the sides of the square matmuls that measure the peak."""
    flags.DEFINE_list("peak_sizes", list(default),
                      "Sides of the square matmuls that measure the matmul peak.")
    flags.register_validator("peak_sizes", lambda sizes: all(s.isdigit() and int(s) for s in sizes),
                             "--peak_sizes: each must be a positive whole number")


def _matmul(framework, size, dtype, gpu):
    """A call multiplying two fixed random `size` x `size` matrices of `dtype`, to its end."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((size, size), dtype=np.float32) for _ in range(2))
    if framework == "numpy":
        return lambda: a @ b
    if framework == "torch":
        x, y = (torch.from_numpy(m).to("cuda" if gpu else "cpu", getattr(torch, dtype))
                for m in (a, b))
        return lambda: torch.mm(x, y)[0, 0].item()
    device = tf.device("/GPU:0" if gpu else "/CPU:0")
    with device:
        x, y = (tf.cast(m, dtype) for m in (a, b))
    product = tf.function(tf.matmul, autograph=False)

    def run():
        with device:
            return product(x, y)[0, 0].numpy()  # the element read waits for the result
    return run


def _gflops(run, size, repeats):
    run()  # warm-up: tracing, buffers, thread start-up
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best / 1e9


def measure(dtype: str, sizes: Sequence[int] = (2048, 4096), repeats: int = 3,
            threads: int = None, gpu_frameworks: Sequence[str] = ()) -> Peak:
    """The best GFLOP/s of any framework's `dtype` matmul at any of `sizes`.

    Args:
        dtype: "float32" or "bfloat16" (on a GPU also "float16").
        sizes: sides of the square matrices.
        repeats: timed calls per framework and size (after one untimed call).
        threads: numpy's BLAS threads (None: as it is); TensorFlow and PyTorch
            use what `round_robin.use_threads` gave them.
        gpu_frameworks: measure on the CUDA GPU instead, with these of
            `GPU_FRAMEWORKS` (a process may have only one of them on the GPU).
    """
    choices = GPU_DTYPES if gpu_frameworks else FRAMEWORKS
    if dtype not in choices:
        raise ValueError(f"no {'GPU' if gpu_frameworks else 'CPU'} matmul peak for {dtype!r}; "
                         f"choose one of {', '.join(choices)}")
    unknown = set(gpu_frameworks) - set(GPU_FRAMEWORKS)
    if unknown:
        raise ValueError(f"no GPU matmul peak from {sorted(unknown)}; choose from "
                         f"{', '.join(GPU_FRAMEWORKS)}")
    frameworks = tuple(gpu_frameworks) or FRAMEWORKS[dtype]
    if "numpy" in frameworks:
        with peers.needed():
            import threadpoolctl  # here: GPU machines may lack it
        limits = threadpoolctl.threadpool_limits(limits=threads, user_api="blas")
    else:
        limits = contextlib.nullcontext()
    with limits:
        return max(Peak(_gflops(_matmul(framework, size, dtype, bool(gpu_frameworks)), size,
                                repeats), framework, size)
                   for framework in frameworks for size in sizes)
