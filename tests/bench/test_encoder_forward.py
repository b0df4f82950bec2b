"""Checks of bench/encoder_forward.py: its FLOP count and one tiny end-to-end timing.

The benchmark is not a test, but its numbers are only as good as its FLOP
count and its peers' set-up, and peers' APIs drift; these tests catch both.
"""

import importlib.util
import pathlib

import numpy as np
import pytest
import transformers

from bert_tf.config import BertConfig

BENCH = pathlib.Path(__file__).resolve().parents[2] / "bench" / "encoder_forward.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("encoder_forward_bench", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("size", ["tiny", "base"])
def test_flops_match_hf_linear_weights(bench, size):
    # Dense FLOPs are 2 per weight of every Linear in HF's encoder layers, per token;
    # attention adds Q.K^T and P.V: 2 * T * H multiply-adds per token each.
    config = BertConfig.named(size)
    hf = transformers.BertModel(transformers.BertConfig(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size), add_pooling_layer=False)
    weights = sum(module.weight.numel() for module in hf.encoder.modules()
                  if module.__class__.__name__ == "Linear")
    batch, length = 3, 7
    expected = (2 * batch * length * weights
                + config.num_hidden_layers * 2 * 2 * batch * length * length * config.hidden_size)
    assert bench.forward_matmul_flops(config, batch, length) == expected


def test_tiny_run_times_every_implementation(bench):
    rows, diffs = bench.time_sizes(["tiny"], bench.IMPLEMENTATIONS, batch=2, length=16,
                                   warmup=1, iterations=2)
    timed = {(name, jit) for _, name, jit, _ in rows}
    assert timed == {("ours", False), ("ours", True), ("keras_hub", False),
                     ("keras_hub", True), ("hf", False)}
    for _, _, _, samples in rows:
        assert len(samples) == 2 and all(wall > 0 and cpu >= 0 for wall, cpu in samples)
    assert diffs["tiny"] < 1e-4
    table = bench.markdown_table(rows, 2, 16, peak=100.0, threads=1)
    assert len(table.splitlines()) == 2 + len(rows)


def test_random_batch_masks_padding(bench):
    inputs = bench.random_batch(BertConfig.named("tiny"), batch=4, length=10)
    mask = inputs["input_mask"]
    assert np.all(mask.sum(axis=1) > 5)
    assert np.all(inputs["input_ids"][mask == 0] == 0)
    assert np.all(inputs["segment_ids"][mask == 0] == 0)
