"""Times the BERT encoder's forward pass against keras-hub and HuggingFace.

For each model size the script builds three encoders with the same
dimensions and fresh random weights:

* ours: `bert_tf.modeling.BertEncoder` in a `tf.function`, with and without
  XLA (`jit_compile=True`); without, on a CPU in float32, the element-wise
  work between TensorFlow's matmuls is still XLA-fused
  (`modeling/xla_elementwise.py`), as in every traced inference graph
  (on AMX CPUs: fused oneDNN kernels and oneDNN's LayerNorm,
  `modeling/onednn_layer_norm.py`);
* keras-hub: `keras_hub.models.BertBackbone`, the same two ways;
* HuggingFace `transformers.BertModel` on PyTorch under `torch.no_grad()`.

`--mixed_precision=mixed_bfloat16` builds ours and keras-hub under that
Keras policy (float32 weights, bfloat16 matmuls) and runs HF under
`torch.autocast("cpu", torch.bfloat16)`; "% peak" is then of the best
bfloat16 matmul rate.

All run in inference mode (no dropout) on one batch of random token ids.
After the warm-up calls (tracing, compilation), the timed calls go round
robin over the implementations, so load from other processes on a shared
machine spreads over all of them instead of hitting one. The table
(`timing_table`) gives per row the fastest, median and slowest call,
sequences per second from the median, the matmul GFLOP/s of the forward pass
(`matmul_flops.encoder_forward`), their share of the best float32 matmul
rate any framework reaches in the same process (`matmul_peak`, measured
before and after the timings) and the share of the cores the process really
got. Once per size it also prints how far our XLA output is from our plain
`tf.function` output.

Example (a quick run; the documented table uses the defaults):

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/encoder_forward.py \
        --sizes=mini --iterations=2 --warmup=1 [--mixed_precision=mixed_bfloat16]
"""

import os
import pathlib
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import numpy as np  # noqa: E402
import bert_tf  # noqa: E402,F401  (before TensorFlow: oneDNN on, as for the runners)
import tensorflow as tf  # noqa: E402
import peers  # noqa: E402
with peers.needed():
    import torch
    import transformers

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from bert_tf.modeling import BertEncoder  # noqa: E402
from bert_tf.training import precision  # noqa: E402
import matmul_flops  # noqa: E402
from peer_models import hf_bert_config, keras_hub_backbone  # noqa: E402
from matmul_peak import define_peak_flags  # noqa: E402
from round_robin import (define_choices_flag, define_threads_flag,  # noqa: E402
                         time_round_robin, use_threads)
from step_runners import autocast  # noqa: E402
from timing_table import BenchRun, TimedRow, markdown_table  # noqa: E402

IMPLEMENTATIONS = ("ours", "keras_hub", "hf")

FLAGS = flags.FLAGS
define_choices_flag("sizes", ["mini", "small", "base"], NAMED_SIZES, "Named model sizes to time.")
define_choices_flag("implementations", IMPLEMENTATIONS, IMPLEMENTATIONS, "Which encoders to time.")
peers.check_flag("implementations", {"keras_hub": ("keras_hub",)})
flags.DEFINE_integer("batch_size", 32, "Sequences per forward pass.", lower_bound=1)
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.", lower_bound=1, upper_bound=512)
flags.DEFINE_integer("iterations", 3, "Timed forward passes per implementation.", lower_bound=1)
flags.DEFINE_integer("warmup", 1, "Untimed forward passes first (tracing, XLA).", lower_bound=0)
flags.DEFINE_enum("mixed_precision", "float32", ["float32", "mixed_bfloat16"],
                  "float32, or ours and keras-hub under mixed_bfloat16 and HF under bfloat16 "
                  "autocast.")
define_threads_flag()
define_peak_flags()


def random_batch(config, batch, length, seed=0):
    """Token ids, a padding mask (every row at least half full) and two segments."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, config.vocab_size, (batch, length), dtype=np.int32)
    lengths = rng.integers(length // 2 + 1, length + 1, batch)
    positions = np.arange(length)[None, :]
    mask = (positions < lengths[:, None]).astype(np.int32)
    segments = (positions >= (lengths // 2)[:, None]).astype(np.int32) * mask
    return {"input_ids": ids * mask, "input_mask": mask, "segment_ids": segments}


def keras_runners(name, model, features):
    """A Keras model in a `tf.function`, without and with XLA, on fixed inputs."""
    tensors = {key: tf.constant(value) for key, value in features.items()}

    def forward(inputs):
        outputs = model(inputs, training=False)
        return [tf.cast(outputs[name], tf.float32) for name in ("sequence_output", "pooled_output")]

    def runner(jit):
        compiled = tf.function(forward, jit_compile=jit, autograph=False)
        return lambda: [t.numpy() for t in compiled(tensors)]

    return {(name, False): runner(False), (name, True): runner(True)}


def our_runners(config, inputs, mixed_precision):
    """Our `BertEncoder`; both runners share one set of weights."""
    with precision.dtype_policy(mixed_precision):
        return keras_runners("ours", BertEncoder(config), inputs)


def keras_hub_runners(config, inputs, mixed_precision):
    """keras-hub's `BertBackbone` with the same dimensions."""
    backbone = keras_hub_backbone(config, dtype=mixed_precision)
    features = {"token_ids": inputs["input_ids"], "segment_ids": inputs["segment_ids"],
                "padding_mask": inputs["input_mask"]}
    return keras_runners("keras_hub", backbone, features)


def hf_runners(config, inputs, mixed_precision):
    """HuggingFace `BertModel` on PyTorch (eval mode, no autograd; bfloat16: autocast)."""
    model = transformers.BertModel(hf_bert_config(config)).eval()
    tensors = {"input_ids": torch.from_numpy(inputs["input_ids"]).long(),
               "attention_mask": torch.from_numpy(inputs["input_mask"]).long(),
               "token_type_ids": torch.from_numpy(inputs["segment_ids"]).long()}

    autocast_dtype = torch.bfloat16 if mixed_precision == "mixed_bfloat16" else None

    def run():
        with torch.no_grad(), autocast(autocast_dtype):
            outputs = model(**tensors)
        return [outputs.last_hidden_state.float().numpy(), outputs.pooler_output.float().numpy()]

    return {("hf", False): run}


BUILDERS = {"ours": our_runners, "keras_hub": keras_hub_runners, "hf": hf_runners}


def max_abs_diff(first, second):
    return max(float(np.max(np.abs(a - b))) for a, b in zip(first, second))


def matmul_dtype(mixed_precision):
    """The dtype the matmuls of `mixed_precision` run in, whose peak "% peak" is of."""
    return "bfloat16" if mixed_precision == "mixed_bfloat16" else "float32"


def time_sizes(sizes, implementations, batch, length, warmup, iterations,
               mixed_precision="float32"):
    """Times every implementation on every size, in `mixed_precision`.

    Returns `TimedRow`s labelled (size, implementation, jit) and, per size,
    the max abs difference between our XLA and non-XLA outputs.
    """
    rows, diffs = [], {}
    for size in sizes:
        print(f"timing {size} ...", file=sys.stderr, flush=True)
        config = BertConfig.named(size)
        inputs = random_batch(config, batch, length)
        runners = {}
        for name in implementations:
            runners.update(BUILDERS[name](config, inputs, mixed_precision))
        times, outputs = time_round_robin(runners, warmup, iterations)
        flops = matmul_flops.encoder_forward(config, batch, length)
        rows += [TimedRow((size, name, "yes" if jit else "no"), samples, batch, flops,
                          matmul_dtype(mixed_precision))
                 for (name, jit), samples in times.items()]
        if ("ours", True) in outputs:
            diffs[size] = max_abs_diff(outputs[("ours", False)], outputs[("ours", True)])
    return rows, diffs


def main(argv):
    del argv
    use_threads(FLAGS.threads)
    batch, length = FLAGS.batch_size, FLAGS.seq_length
    with BenchRun(FLAGS.threads, [matmul_dtype(FLAGS.mixed_precision)], FLAGS.peak_sizes) as run:
        rows, diffs = time_sizes(FLAGS.sizes, FLAGS.implementations, batch, length,
                                 FLAGS.warmup, FLAGS.iterations, FLAGS.mixed_precision)
    print(run.header(f"encoder forward pass in {FLAGS.mixed_precision}, batch {batch} x seq "
                     f"{length}, no dropout; "
                     f"{FLAGS.warmup} warm-up + {FLAGS.iterations} timed calls each, "
                     "round robin"))
    print(markdown_table(("size", "implementation", "XLA"), rows, FLAGS.threads, run.peaks))
    for size, diff in diffs.items():
        print(f"# {size}: ours with vs without jit, max abs diff of sequence and pooled "
              f"outputs: {diff:.2e}")


if __name__ == "__main__":
    app.run(main)
