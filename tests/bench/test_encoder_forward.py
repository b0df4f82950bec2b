"""Checks of bench/encoder_forward.py: one tiny end-to-end run and its random batch.

The benchmark is not a test, but its numbers are only as good as its peers'
set-up, and peers' APIs drift; these tests catch that (its FLOP count is
checked in test_matmul_flops.py).
"""

import numpy as np
import pytest

from bert_tf.config import BertConfig
from matmul_peak import Peak
from tests_shared import load_bench


@pytest.fixture(scope="module")
def bench():
    return load_bench("encoder_forward")


@pytest.mark.parametrize("mixed_precision, dtype, tolerance", [
    ("float32", "float32", 1e-4), ("mixed_bfloat16", "bfloat16", 0.1)])
def test_tiny_run_times_every_implementation(bench, mixed_precision, dtype, tolerance):
    rows, diffs = bench.time_sizes(["tiny"], bench.IMPLEMENTATIONS, batch=2, length=16,
                                   warmup=1, iterations=2, mixed_precision=mixed_precision)
    assert {row.labels for row in rows} == {
        ("tiny", "ours", "no"), ("tiny", "ours", "yes"), ("tiny", "keras_hub", "no"),
        ("tiny", "keras_hub", "yes"), ("tiny", "hf", "no")}
    for row in rows:
        assert len(row.samples) == 2 and all(wall > 0 and cpu >= 0 for wall, cpu in row.samples)
        assert row.items == 2 and row.flops > 0 and row.dtype == dtype
    assert diffs["tiny"] < tolerance
    table = bench.markdown_table(("size", "implementation", "XLA"), rows, threads=1,
                                 peaks={dtype: Peak(100.0, "numpy", 64)})
    assert len(table.splitlines()) == 2 + len(rows)


def test_random_batch_masks_padding(bench):
    inputs = bench.random_batch(BertConfig.named("tiny"), batch=4, length=10)
    mask = inputs["input_mask"]
    assert np.all(mask.sum(axis=1) > 5)
    assert np.all(inputs["input_ids"][mask == 0] == 0)
    assert np.all(inputs["segment_ids"][mask == 0] == 0)
