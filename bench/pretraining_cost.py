"""What the paper's pretraining recipe costs on 8 GPUs and on a TPU v3-8, worked out on paper.

No timing happens here: the script counts the matmul FLOPs of one training
sequence and divides by a sustained rate, so every number in the table can
be checked by hand. The recipe (paper, appendix A.2): 1,000,000 steps of
256 sequences, the first 90% of the steps at length 128 with 20 masked
positions, the last 10% at length 512 with 80.

FLOPs of one sequence of length T, forward (a multiply-add counts 2):

* per layer, the dense layers `2*T*(4*H^2 + 2*H*I)` (Q, K, V, attention
  output; intermediate and output) plus attention `4*T^2*H` (scores and
  context);
* the masked-LM head on P positions `2*P*(H^2 + H*V)` and NSP `2*H^2 + 4*H`
  (pooler and classifier);
* training = 3 x forward (the backward pass is two matmuls per forward one).

Anchor: NVIDIA's published BERT-Large pretraining throughput with TensorFlow
2 on 8 A100 GPUs, mixed precision and XLA, is 3,799 sequences/s at length
128. Times `--anchor_sequences_per_second` x FLOPs per sequence gives the
sustained FLOP/s that 8 A100s reach on this model; the other rows assume the
same sustained rate (`--tpu_utilisation` for the TPU: its sustained share of
the 420 bf16 TFLOP/s peak of a v3-8).

    .venv/bin/python bench/pretraining_cost.py
"""

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402

from bert_tf.config import BertConfig  # noqa: E402

FLAGS = flags.FLAGS
flags.DEFINE_float("anchor_sequences_per_second", 3799.0,
                   "Measured BERT-Large length-128 training sequences/s on 8 A100s (NVIDIA).")
flags.DEFINE_float("tpu_utilisation", 0.35, "Sustained share of a TPU v3-8's bf16 peak.")

STEPS, BATCH = 1_000_000, 256
PHASES = ((0.9, 128, 20), (0.1, 512, 80))  # (share of steps, length, masked positions)
TPU_V3_8_PEAK = 420e12  # bf16 FLOP/s: 4 chips x 2 cores x 52.5 TFLOP/s


def training_flops(config, length, predictions):
    """Matmul FLOPs of one training sequence (forward + backward = 3 x forward).

    >>> round(training_flops(BertConfig.named("base"), 128, 20) / 1e9, 1)
    69.9
    """
    h, i, v = config.hidden_size, config.intermediate_size, config.vocab_size
    per_layer = 2 * length * (4 * h * h + 2 * h * i) + 4 * length * length * h
    heads = 2 * predictions * (h * h + h * v) + 2 * h * h + 4 * h
    return 3 * (config.num_hidden_layers * per_layer + heads)


def phase_rows(config, sustained_flops):
    """(length, sequences, seq/s, hours) for each phase at `sustained_flops` FLOP/s."""
    rows = []
    for share, length, predictions in PHASES:
        sequences = share * STEPS * BATCH
        per_second = sustained_flops / training_flops(config, length, predictions)
        rows.append((length, sequences, per_second, sequences / per_second / 3600))
    return rows


def main(argv):
    del argv
    large = BertConfig.named("large")
    gpu_rate = FLAGS.anchor_sequences_per_second * training_flops(large, 128, 20)
    tpu_rate = FLAGS.tpu_utilisation * TPU_V3_8_PEAK
    print(f"8 x A100 sustained (from the anchor): {gpu_rate / 1e12:.0f} TFLOP/s, "
          f"{gpu_rate / 8 / 312e12:.0%} of the A100's 312 TFLOP/s fp16/bf16 peak each")
    print(f"TPU v3-8 sustained: {tpu_rate / 1e12:.0f} TFLOP/s "
          f"({FLAGS.tpu_utilisation:.0%} of {TPU_V3_8_PEAK / 1e12:.0f})\n")
    print("| model | machine | length | GFLOP/seq | sequences | seq/s | hours | total days |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for name in ("base", "large"):
        config = BertConfig.named(name)
        for machine, rate in (("8 x A100", gpu_rate), ("TPU v3-8", tpu_rate)):
            rows = phase_rows(config, rate)
            days = sum(hours for *_, hours in rows) / 24
            for (length, sequences, per_second, hours), (_, _, predictions) in zip(rows, PHASES):
                gflop = training_flops(config, length, predictions) / 1e9
                total = f"{days:.1f}" if length == PHASES[-1][1] else ""
                print(f"| BERT-{name.capitalize()} | {machine} | {length} | {gflop:.0f} | "
                      f"{sequences / 1e6:.1f}M | {per_second:,.0f} | {hours:.1f} | {total} |")


if __name__ == "__main__":
    app.run(main)
