"""bench/gpu_forward.py's runners, run on the CPU before a GPU lease spends time on them.

Ours must build, run without and with XLA on one set of weights, and agree;
HF's must run under autocast and with its weights cast to bfloat16.
"""

import numpy as np
import pytest
from absl import flags

from bert_tf.config import BertConfig
from tests_shared import load_bench, shared_path


@pytest.fixture(scope="module")
def bench():
    return load_bench("gpu_forward")


@pytest.fixture(scope="module")
def batch(bench):
    records = shared_path("golden", "sample_text_seed12345_dupe10.tfrecord")
    return bench.pretraining_batch(4, records)


def test_our_runners_without_and_with_xla_give_the_same_pooled_output(bench, batch):
    flags.FLAGS(["gpu_forward.py"])
    try:
        runners = bench.our_runners(BertConfig.named("tiny"), batch, "float32")
    finally:
        flags.FLAGS.unparse_flags()
    assert sorted(runners) == [("ours", "no"), ("ours", "yes")]
    plain, compiled = (runners[key]() for key in sorted(runners))
    assert plain.shape == (4, BertConfig.named("tiny").hidden_size)
    assert not np.allclose(plain[0], plain[1])  # real, differing sequences
    np.testing.assert_allclose(compiled, plain, atol=1e-5)


@pytest.mark.parametrize("half", [False, True])
def test_hf_runs_under_autocast_or_with_bfloat16_weights(bench, batch, half):
    pooled = bench.hf_runner(BertConfig.named("tiny"), batch, "mixed_bfloat16", half=half,
                             device="cpu")()
    assert pooled.shape == (4, BertConfig.named("tiny").hidden_size)
    assert pooled.dtype == np.float32 and np.all(np.isfinite(pooled))
    assert not np.allclose(pooled[0], pooled[1])
