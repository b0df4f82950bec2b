"""bench/timing_table.py, matmul_peak.py and the docstring examples of the bench helpers.

Nothing here is timed: the samples are made up, and the peak helpers run on
64 x 64 matrices only to check what they return, not how fast.
"""

import doctest

import numpy as np
import pytest

import matmul_flops
import matmul_peak
import step_pieces
import timing_table
from matmul_peak import Peak
from timing_table import BenchRun, TimedRow, markdown_table

PEAKS = {"float32": Peak(200.0, "tensorflow", 4096), "bfloat16": Peak(800.0, "torch", 4096)}


def cells(table):
    """The body rows of a Markdown table, as lists of cells."""
    return [[cell.strip() for cell in line.strip("|").split("|")]
            for line in table.splitlines()[2:]]


@pytest.mark.parametrize("module", [timing_table, matmul_peak, matmul_flops, step_pieces])
def test_docstring_examples_run(module):
    assert doctest.testmod(module, optionflags=doctest.ELLIPSIS).failed == 0


def test_rates_and_shares_come_from_the_median_call():
    # Calls of 0.5, 2 and 1 s: the median is 1 s; CPU 7 s over 3.5 s wall on 2 threads.
    row = TimedRow(("small", "ours"), [(0.5, 1.0), (2.0, 4.0), (1.0, 2.0)], items=32,
                   flops=150e9)
    bf16 = row._replace(labels=("small", "ours bf16"), dtype="bfloat16")
    table = markdown_table(("size", "implementation"), [row, bf16], threads=2, peaks=PEAKS)
    assert table.splitlines()[0] == ("| size | implementation | seq/s | min ms | median ms "
                                     "| max ms | GFLOP/s | % peak | CPU share |")
    assert cells(table) == [
        ["small", "ours", "32.0", "500", "1000", "2000", "150.0", "75%", "100%"],
        ["small", "ours bf16", "32.0", "500", "1000", "2000", "150.0", "19%", "100%"]]


def test_rows_without_flops_and_extra_cells():
    tool = TimedRow(("fast",), [(10.0, 5.0), (12.0, 6.0), (30.0, 15.0)], items=60_000,
                    extra=("4.6", "977 MB"))
    other = TimedRow(("encoder",), [(2.0, 2.0)], items=8, flops=1e9)
    with_seconds = markdown_table(("tool",), [tool], threads=1, unit="inst", time_unit="s",
                                  extra_names=("work s", "memory"))
    assert with_seconds.splitlines()[0] == (
        "| tool | inst/s | min s | median s | max s | CPU share | work s | memory |")
    assert cells(with_seconds) == [["fast", "5,000", "10.0", "12.0", "30.0", "50%", "4.6",
                                    "977 MB"]]
    mixed = markdown_table(("what",), [tool, other], threads=1, peaks=PEAKS)
    assert [row[5:7] for row in cells(mixed)] == [["-", "-"], ["0.5", "0%"]]


def test_bench_run_uses_the_larger_peak_and_names_it():
    with BenchRun(threads=1, peak_dtypes=["float32", "bfloat16"], peak_sizes=[64]) as run:
        pass
    for dtype, frameworks in matmul_peak.FRAMEWORKS.items():
        assert run.peaks[dtype] == max(run.peaks_before[dtype], run.peaks_after[dtype])
        assert run.peaks[dtype].framework in frameworks and run.peaks[dtype].size == 64
    header = run.header("batch 2").splitlines()
    assert header[0].startswith("# started ") and "1 threads" in header[0]
    assert "numpy " + np.__version__ in header[0]
    assert header[2].startswith("# float32 matmul peak: ")
    assert f"({run.peaks['float32'].framework}, 64x64;" in header[2]
    assert header[3].startswith("# bfloat16 matmul peak: ") and header[-1] == "# batch 2"


def test_bench_run_without_peaks_measures_none():
    with BenchRun() as run:
        pass
    assert run.peaks == {} and "matmul peak" not in run.header()


def test_peak_of_an_unknown_dtype_is_refused():
    with pytest.raises(ValueError, match="no CPU matmul peak for 'float16'"):
        matmul_peak.measure("float16", sizes=(64,))
    with pytest.raises(ValueError, match="no GPU matmul peak for 'float64'"):
        matmul_peak.measure("float64", sizes=(64,), gpu_frameworks=["torch"])
    with pytest.raises(ValueError, match=r"no GPU matmul peak from \['numpy'\]"):
        matmul_peak.measure("float16", sizes=(64,), gpu_frameworks=["numpy"])
