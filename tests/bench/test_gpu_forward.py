"""bench/gpu_forward.py's side of ours, run on the CPU before a GPU lease spends time on it.

Its runners are plain TensorFlow: here they must build, run without and with
XLA on one set of weights, and agree.
"""

import numpy as np
from absl import flags

from bert_tf.config import BertConfig
from tests_shared import load_bench, shared_path


def test_our_runners_without_and_with_xla_give_the_same_pooled_output():
    bench = load_bench("gpu_forward")
    flags.FLAGS(["gpu_forward.py"])
    try:
        batch = bench.pretraining_batch(
            4, shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))
        runners = bench.our_runners(BertConfig.named("tiny"), batch, "float32")
    finally:
        flags.FLAGS.unparse_flags()
    assert sorted(runners) == [("ours", "no"), ("ours", "yes")]
    plain, compiled = (runners[key]() for key in sorted(runners))
    assert plain.shape == (4, BertConfig.named("tiny").hidden_size)
    assert not np.allclose(plain[0], plain[1])  # real, differing sequences
    np.testing.assert_allclose(compiled, plain, atol=1e-5)
