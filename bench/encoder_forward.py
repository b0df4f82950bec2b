"""Times the BERT encoder's forward pass against keras-hub and HuggingFace.

For each model size the script builds three encoders with the same
dimensions and fresh random weights:

* ours: `bert_tf.modeling.BertEncoder` in a `tf.function`, with and without
  XLA (`jit_compile=True`);
* keras-hub: `keras_hub.models.BertBackbone`, the same two ways;
* HuggingFace `transformers.BertModel` on PyTorch under `torch.no_grad()`.

All run in inference mode (no dropout) on one batch of random token ids.
After the warm-up calls (tracing, compilation), the timed calls go round
robin over the implementations, so load from other processes on a shared
machine spreads over all of them instead of hitting one. A large numpy
float32 matmul measured in the same run gives the machine's practical peak;
each row reports the matmul GFLOP/s the forward pass achieves, its share of
that peak, and the share of the cores the process really got (CPU time over
wall time), which tells a quiet run from a crowded one. Once per size it
also prints how far our XLA output is from our plain `tf.function` output.

Example (a quick run; the documented table uses the defaults):

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/encoder_forward.py \
        --sizes=mini --iterations=2 --warmup=1
"""

import datetime
import os
import pathlib
import platform
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import keras_hub  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from round_robin import (define_threads_flag, load_average, summarize,  # noqa: E402
                         time_round_robin, use_threads)
from bert_tf.modeling import BertEncoder  # noqa: E402

IMPLEMENTATIONS = ("ours", "keras_hub", "hf")

FLAGS = flags.FLAGS
flags.DEFINE_list("sizes", ["mini", "small", "base"], "Named model sizes to time.")
flags.DEFINE_list("implementations", list(IMPLEMENTATIONS), "Which encoders to time.")
flags.DEFINE_integer("batch_size", 32, "Sequences per forward pass.", lower_bound=1)
flags.DEFINE_integer("seq_length", 128, "Tokens per sequence.", lower_bound=1, upper_bound=512)
flags.DEFINE_integer("iterations", 3, "Timed forward passes per implementation.", lower_bound=1)
flags.DEFINE_integer("warmup", 1, "Untimed forward passes first (tracing, XLA).", lower_bound=0)
define_threads_flag()
flags.DEFINE_integer("peak_matmul_size", 4096, "Side of the numpy peak matmul.", lower_bound=256)
flags.register_validator("sizes", lambda v: set(v) <= set(NAMED_SIZES),
                         f"--sizes: each must be one of {', '.join(NAMED_SIZES)}")
flags.register_validator("implementations", lambda v: set(v) <= set(IMPLEMENTATIONS),
                         f"--implementations: each must be one of {', '.join(IMPLEMENTATIONS)}")


def forward_matmul_flops(config, batch, length):
    """Multiply-add FLOPs of the encoder's matmuls (embedding look-ups and pooler excluded)."""
    hidden, inner = config.hidden_size, config.intermediate_size
    dense = 2 * batch * length * (4 * hidden * hidden + 2 * hidden * inner)
    attention = 2 * 2 * batch * length * length * hidden
    return config.num_hidden_layers * (dense + attention)


def numpy_matmul_peak(size, repeats=3):
    """Best float32 GFLOP/s of a `size` x `size` numpy matmul on this machine."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((size, size), dtype=np.float32) for _ in range(2))
    a @ b
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        a @ b
        best = min(best, time.perf_counter() - start)
    return 2 * size ** 3 / best / 1e9


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
        return outputs["sequence_output"], outputs["pooled_output"]

    def runner(jit):
        compiled = tf.function(forward, jit_compile=jit, autograph=False)
        return lambda: [t.numpy() for t in compiled(tensors)]

    return {(name, False): runner(False), (name, True): runner(True)}


def our_runners(config, inputs):
    """Our `BertEncoder`; both runners share one set of weights."""
    return keras_runners("ours", BertEncoder(config), inputs)


def keras_hub_runners(config, inputs):
    """keras-hub's `BertBackbone` with the same dimensions."""
    backbone = keras_hub.models.BertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size,
        max_sequence_length=config.max_position_embeddings,
        num_segments=config.type_vocab_size)
    features = {"token_ids": inputs["input_ids"], "segment_ids": inputs["segment_ids"],
                "padding_mask": inputs["input_mask"]}
    return keras_runners("keras_hub", backbone, features)


def hf_runners(config, inputs):
    """HuggingFace `BertModel` on PyTorch (eval mode, no autograd)."""
    hf_config = transformers.BertConfig(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size, hidden_act="gelu_new",
        max_position_embeddings=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size)
    model = transformers.BertModel(hf_config).eval()
    tensors = {"input_ids": torch.from_numpy(inputs["input_ids"]).long(),
               "attention_mask": torch.from_numpy(inputs["input_mask"]).long(),
               "token_type_ids": torch.from_numpy(inputs["segment_ids"]).long()}

    def run():
        with torch.no_grad():
            outputs = model(**tensors)
        return [outputs.last_hidden_state.numpy(), outputs.pooler_output.numpy()]

    return {("hf", False): run}


BUILDERS = {"ours": our_runners, "keras_hub": keras_hub_runners, "hf": hf_runners}


def max_abs_diff(first, second):
    return max(float(np.max(np.abs(a - b))) for a, b in zip(first, second))


def cpu_model():
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def time_sizes(sizes, implementations, batch, length, warmup, iterations):
    """Times every implementation on every size.

    Returns rows `(size, implementation, jit, [(wall, cpu seconds), ...])` and, per
    size, the max abs difference between our XLA and non-XLA outputs.
    """
    rows, diffs = [], {}
    for size in sizes:
        print(f"timing {size} ...", file=sys.stderr, flush=True)
        config = BertConfig.named(size)
        inputs = random_batch(config, batch, length)
        runners = {}
        for name in implementations:
            runners.update(BUILDERS[name](config, inputs))
        times, outputs = time_round_robin(runners, warmup, iterations)
        rows += [(size, name, jit, samples) for (name, jit), samples in times.items()]
        if ("ours", True) in outputs:
            diffs[size] = max_abs_diff(outputs[("ours", False)], outputs[("ours", True)])
    return rows, diffs


def markdown_table(rows, batch, length, peak, threads):
    """The results as a Markdown table; rates come from the median call.

    "CPU share" is the process's CPU time over wall time times `threads`: well
    under 100% means other processes took the cores away during the calls.
    """
    lines = ["| size | implementation | jit | seq/s | ms/batch | range ms | GFLOP/s | % peak "
             "| CPU share |",
             "|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for size, name, jit, samples in rows:
        timing = summarize(samples, threads)
        gflops = forward_matmul_flops(BertConfig.named(size), batch, length) / timing.median / 1e9
        lines.append(
            f"| {size} | {name} | {'yes' if jit else 'no'} | {batch / timing.median:.2f} | "
            f"{timing.median * 1e3:.0f} | {timing.fastest * 1e3:.0f}-{timing.slowest * 1e3:.0f} | "
            f"{gflops:.1f} | {100 * gflops / peak:.0f}% | {100 * timing.cpu_share:.0f}% |")
    return "\n".join(lines)


def main(argv):
    del argv
    use_threads(FLAGS.threads)
    batch, length = FLAGS.batch_size, FLAGS.seq_length
    started = datetime.datetime.now().isoformat(timespec="seconds")
    load = load_average()
    peak_before = numpy_matmul_peak(FLAGS.peak_matmul_size)
    rows, diffs = time_sizes(FLAGS.sizes, FLAGS.implementations, batch, length,
                             FLAGS.warmup, FLAGS.iterations)
    peak_after = numpy_matmul_peak(FLAGS.peak_matmul_size)
    peak = max(peak_before, peak_after)
    print(f"# started {started}; {cpu_model()}, "
          f"{FLAGS.threads} threads; tensorflow {tf.__version__}, keras-hub "
          f"{keras_hub.__version__}, transformers {transformers.__version__}, "
          f"torch {torch.__version__}")
    print(f"# load average at start (1, 5, 15 min): {load}")
    print(f"# numpy float32 matmul peak ({FLAGS.peak_matmul_size}^2), before / after: "
          f"{peak_before:.1f} / {peak_after:.1f} GFLOP/s; % peak uses the larger")
    print(f"# batch {batch}, seq {length}, {FLAGS.warmup} warm-up + {FLAGS.iterations} "
          "timed calls each, round robin; ms/batch is the median, range is min-max")
    print(markdown_table(rows, batch, length, peak, FLAGS.threads))
    for size, diff in diffs.items():
        print(f"# {size}: ours with vs without jit, max abs diff of sequence and pooled "
              f"outputs: {diff:.2e}")


if __name__ == "__main__":
    app.run(main)
