"""The one table every timing benchmark prints, and the header above it.

A row is one implementation (or tool) timed over several calls. It gives
the fastest, median and slowest call, the throughput of the median call
(sequences, lines or instances per second), the CPU share the process got
(CPU time / wall time / threads: well under 100% means other processes
took the cores) and, where the work is a count of matmul FLOPs
(`matmul_flops`), the GFLOP/s of the median call and its share of the
matmul peak of the row's dtype (`matmul_peak`). The header gives the start
time, CPU, threads, library versions, load averages at the start and end,
and the peaks with the framework that reached them.

Nothing here imports TensorFlow or PyTorch (`matmul_peak` is loaded only
when a peak is asked for), so benches that time other processes stay light.

Example (made-up samples: three calls of 2 s, 1 s and 4 s wall time):

>>> from matmul_peak import Peak
>>> row = TimedRow(("mini", "ours"), [(2.0, 3.6), (1.0, 1.8), (4.0, 7.2)], items=32,
...                flops=100e9)
>>> print(markdown_table(("size", "implementation"), [row], threads=2,
...                      peaks={"float32": Peak(100.0, "torch", 4096)}))
| size | implementation | seq/s | min ms | median ms | max ms | GFLOP/s | % peak | CPU share |
|---|---|---:|---:|---:|---:|---:|---:|---:|
| mini | ours | 16.0 | 1000 | 2000 | 4000 | 50.0 | 50% | 90% |
"""

import datetime
import os
import platform
import statistics
import sys
from typing import Dict, List, NamedTuple, Optional, Sequence, Tuple

Samples = List[Tuple[float, float]]  # (wall seconds, process CPU seconds) per call

# Libraries whose versions the header names, when the benchmark imported them.
LIBRARIES = ("tensorflow", "keras", "keras_hub", "tensorflow_text", "torch", "transformers",
             "tokenizers", "numpy")


def load_average() -> str:
    """The 1, 5 and 15-minute load averages, for a table's header."""
    return ", ".join(f"{value:.2f}" for value in os.getloadavg())




class Summary(NamedTuple):
    """Median, fastest and slowest call in seconds, and the CPU share (0..1)."""

    median: float
    fastest: float
    slowest: float
    cpu_share: float


def summarize(samples: Samples, threads: int) -> Summary:
    """The median, fastest and slowest wall time of `samples` and their CPU share.

    >>> summarize([(1.0, 2.0), (3.0, 2.0), (2.0, 2.0)], threads=2)
    Summary(median=2.0, fastest=1.0, slowest=3.0, cpu_share=0.5)
    """
    walls = [wall for wall, _ in samples]
    return Summary(statistics.median(walls), min(walls), max(walls),
                   sum(cpu for _, cpu in samples) / sum(walls) / threads)


class TimedRow(NamedTuple):
    """One timed implementation.

    Attributes:
        labels: the row's leading cells (size, implementation, ...).
        samples: `(wall seconds, CPU seconds)` per call.
        items: sequences (lines, instances) one call handles.
        flops: matmul FLOPs of one call; None where the work is not matmuls.
        dtype: the matmul dtype, whose peak the GFLOP/s are divided by.
        extra: trailing cells of the bench's own (`markdown_table`'s `extra_names`).
    """

    labels: Tuple[str, ...]
    samples: Samples
    items: int
    flops: Optional[float] = None
    dtype: str = "float32"
    extra: Tuple[str, ...] = ()


def _cpu_model():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown CPU"


class BenchRun:
    """A benchmark's run: start time, load and matmul peaks taken around its timings.

    Use as `with BenchRun(...) as run:` around the timings, then print
    `run.header()` and the table (with `peaks=run.peaks`).

    Args:
        threads: compute threads of the run (None: not set by the bench, which
            then gets the cores this process may use).
        peak_dtypes: the dtypes whose matmul peak to measure ("float32", "bfloat16").
        peak_sizes: sides of the peak matmuls.
    """

    def __init__(self, threads=None, peak_dtypes: Sequence[str] = (),
                 peak_sizes: Sequence[int] = (2048, 4096)):
        self._threads_set = threads is not None
        self.threads = threads or len(os.sched_getaffinity(0))
        self._peak_dtypes = tuple(peak_dtypes)
        self._peak_sizes = [int(size) for size in peak_sizes]
        self.peaks_before, self.peaks_after, self.peaks = {}, {}, {}

    def _measure_peaks(self):
        if not self._peak_dtypes:
            return {}
        from matmul_peak import measure  # TensorFlow and PyTorch: only when asked for
        return {dtype: measure(dtype, self._peak_sizes, threads=self.threads)
                for dtype in self._peak_dtypes}

    def __enter__(self):
        self.started = datetime.datetime.now().isoformat(timespec="seconds")
        self.load_before = load_average()
        self.peaks_before = self._measure_peaks()
        return self

    def __exit__(self, error_type, error, traceback):
        self.load_after = load_average()
        if error_type is None:
            self.peaks_after = self._measure_peaks()
            self.peaks = {dtype: max(self.peaks_before[dtype], self.peaks_after[dtype])
                          for dtype in self._peak_dtypes}

    def header(self, *lines: str) -> str:
        """`#` lines: machine, versions, load, peaks, then the bench's own `lines`."""
        machine = [f"started {self.started}", f"{_cpu_model()}, {self.threads} "
                   f"{'threads' if self._threads_set else 'cores'}"]
        machine += [f"{name} {sys.modules[name].__version__}" for name in LIBRARIES
                    if name in sys.modules]
        text = ["; ".join(machine),
                f"load average (1, 5, 15 min) at start: {self.load_before}; "
                f"at end: {self.load_after}"]
        for dtype, peak in self.peaks.items():
            before, after = self.peaks_before[dtype], self.peaks_after[dtype]
            text.append(f"{dtype} matmul peak: {peak.gflops:.1f} GFLOP/s ({peak.framework}, "
                        f"{peak.size}x{peak.size}; before {before.gflops:.1f} {before.framework}"
                        f", after {after.gflops:.1f} {after.framework})")
        return "\n".join(f"# {line}" for line in (*text, *lines))


def markdown_table(label_names: Sequence[str], rows: Sequence[TimedRow], threads: int,
                   peaks: Dict[str, NamedTuple] = None, unit: str = "seq",
                   time_unit: str = "ms", extra_names: Sequence[str] = ()) -> str:
    """The rows as a Markdown table; rates come from each row's median call.

    The GFLOP/s and % peak columns appear when some row has `flops`.

    Args:
        label_names: headers of the rows' `labels`.
        rows: the `TimedRow`s.
        threads: threads (or cores) the CPU share is a share of.
        peaks: `{dtype: matmul_peak.Peak}` (`BenchRun.peaks`), needed for rows
            with `flops`.
        unit: what `items` counts ("seq" gives "seq/s").
        time_unit: "ms" or "s" for the min, median and max columns.
        extra_names: headers of the rows' `extra` cells, last.
    """
    scale, digits = {"ms": (1e3, 0), "s": (1.0, 1)}[time_unit]
    with_flops = any(row.flops for row in rows)
    names = [*label_names, f"{unit}/s", f"min {time_unit}", f"median {time_unit}",
             f"max {time_unit}", *(("GFLOP/s", "% peak") if with_flops else ()), "CPU share",
             *extra_names]
    lines = ["| " + " | ".join(names) + " |",
             "|" + "---|" * len(label_names) + "---:|" * (len(names) - len(label_names))]
    for row in rows:
        timing = summarize(row.samples, threads)
        rate = row.items / timing.median
        cells = [*row.labels, f"{rate:,.0f}" if rate >= 1000 else f"{rate:.1f}",
                 *(f"{seconds * scale:.{digits}f}"
                   for seconds in (timing.fastest, timing.median, timing.slowest))]
        if with_flops and row.flops:
            gflops = row.flops / timing.median / 1e9
            cells += [f"{gflops:.1f}", f"{100 * gflops / peaks[row.dtype].gflops:.0f}%"]
        elif with_flops:
            cells += ["-", "-"]
        cells += [f"{100 * timing.cpu_share:.0f}%", *row.extra]
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)
