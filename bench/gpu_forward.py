"""Times the encoder's inference forward pass on one GPU: ours (TensorFlow) against HuggingFace.

Ours is `BertEncoder` in a `tf.function`, without and with XLA (`--xla`),
as an exported model or a user's own function runs it; HF is
`transformers.BertModel` in eval mode under `torch.no_grad()`, with its
default attention (PyTorch's scaled-dot-product kernels), in mixed
precision both under autocast (`hf`) and with its weights cast to the
16-bit type (`hf_half`, as half-precision models are usually served). Both read a
fixed batch of real records (token ids, padding mask, segments) at
sequence length 128, without dropout, in the precisions of `gpu_setup`.
Each call returns the sequence and pooled outputs and reads the pooled
one back to the host, which waits for the whole pass on both sides.

Per size and precision the encoders are warmed up (tracing, XLA), then
timed round robin. The table gives per row the fastest, median and
slowest call, sequences per second, the pass's matmul TFLOP/s
(`matmul_flops.encoder_forward`) and their share of the best matmul rate
a timed framework reaches on this GPU in that precision.

Example (on a machine where TensorFlow and PyTorch share a CUDA runtime;
elsewhere one `--implementations` per process, as in docs/PERFORMANCE.md):

    .venv/bin/python bench/gpu_forward.py --sizes=base --precisions=mixed_float16
"""

import os
import pathlib
import statistics
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import bert_tf  # noqa: E402,F401
import tensorflow as tf  # noqa: E402
import peers  # noqa: E402
with peers.needed():
    import torch
    import transformers

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from bert_tf.modeling import BertEncoder  # noqa: E402
from bert_tf.training import precision  # noqa: E402
import gpu_setup  # noqa: E402
from gpu_setup import AUTOCAST  # noqa: E402
import matmul_flops  # noqa: E402
from peer_models import hf_bert_config  # noqa: E402
from round_robin import define_choices_flag, time_round_robin  # noqa: E402
from step_runners import SEQ_LENGTH, autocast, pretraining_batch  # noqa: E402

INPUTS = ("input_ids", "input_mask", "segment_ids")

FLAGS = flags.FLAGS
define_choices_flag("sizes", ["base", "large"], NAMED_SIZES, "Named model sizes to time.")
gpu_setup.define_flags("passes", batch_size=32, iterations=20,
                       implementations=("ours", "hf", "hf_half"))


def our_runners(config, batch, policy):
    """`{("ours", XLA): call}`: one `BertEncoder` built under `policy`, in a `tf.function` each."""
    with precision.dtype_policy(policy):
        encoder = BertEncoder(config)
    inputs = {name: tf.constant(batch[name]) for name in INPUTS}

    def forward(features):
        outputs = encoder(features, training=False)
        return outputs["sequence_output"], outputs["pooled_output"]

    def runner(jit):
        compiled = tf.function(forward, jit_compile=jit == "yes", autograph=False)
        return lambda: compiled(inputs)[1].numpy()

    return {("ours", jit): runner(jit) for jit in FLAGS.xla}


def hf_runner(config, batch, policy, half=False, device="cuda"):
    """A call of HF's `BertModel` on `device` in `policy`'s precision.

    By default under `torch.autocast` to `policy`'s 16-bit type (float32
    weights, each matmul's inputs cast), as the training bench runs it;
    `half`: with the weights themselves in that type and no autocast, the
    way a model is usually served in half precision (no casts per call).
    """
    model = transformers.BertModel(hf_bert_config(config)).to(device).eval()
    if half:
        model.to(AUTOCAST[policy])
    tensors = {"input_ids": batch["input_ids"], "attention_mask": batch["input_mask"],
               "token_type_ids": batch["segment_ids"]}
    tensors = {name: torch.from_numpy(value).long().to(device) for name, value in tensors.items()}

    def run():
        with torch.no_grad(), autocast(None if half else AUTOCAST[policy], device):
            outputs = model(**tensors)
        return outputs.pooler_output.float().cpu().numpy()

    return run


def main(argv):
    del argv
    peaks = gpu_setup.start(FLAGS.implementations, FLAGS.precisions, FLAGS.peak_sizes)
    batch = pretraining_batch(FLAGS.batch_size, FLAGS.records)
    lines = ["| size | precision | implementation | XLA | min ms | median ms | max ms | seq/s | "
             "TFLOP/s | % peak |", "|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for size in FLAGS.sizes:
        config = BertConfig.named(size)
        flops = matmul_flops.encoder_forward(config, FLAGS.batch_size, SEQ_LENGTH)
        for policy in FLAGS.precisions:
            print(f"timing {size} {policy} ...", file=sys.stderr, flush=True)
            runners = {}
            if "ours" in FLAGS.implementations:
                runners.update(our_runners(config, batch, policy))
            if "hf" in FLAGS.implementations:
                runners[("hf", "no")] = hf_runner(config, batch, policy)
            if "hf_half" in FLAGS.implementations and AUTOCAST[policy] is not None:
                runners[("hf_half", "no")] = hf_runner(config, batch, policy, half=True)
            times, _ = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations)
            for (name, jit), samples in times.items():
                walls = [wall for wall, _ in samples]
                median = statistics.median(walls)
                rate = flops / median / 1e12
                lines.append(
                    f"| {size} | {policy} | {name} | {jit} | {min(walls) * 1e3:.2f} | "
                    f"{median * 1e3:.2f} | {max(walls) * 1e3:.2f} | "
                    f"{FLAGS.batch_size / median:.0f} | {rate:.0f} | "
                    f"{100 * rate / (peaks[policy].gflops / 1000):.0f}% |")
                print(lines[-1], flush=True)
    print(f"\nencoder forward pass on one GPU: batch {FLAGS.batch_size} x seq {SEQ_LENGTH} "
          f"of real records, no dropout; {FLAGS.warmup} warm-up + {FLAGS.iterations} timed "
          "passes each, round robin")
    print("\n".join(lines))


if __name__ == "__main__":
    app.run(main)
