"""Times training steps on one GPU: ours (TensorFlow) against HuggingFace (PyTorch).

Two steps (`--steps`), each on a fixed batch of real records at sequence
length 128:

* `pretraining`: `pretraining_speed`'s step, masked LM on 20 gathered
  positions + next sentence. Ours is `BertPretrainer`; HF is
  `BertForPreTraining` with its masked-LM head on the same gathered
  positions.
* `classification`: a fine-tuning step of a 2-label sentence-pair
  classifier (pooled output, dropout, dense, cross-entropy), the records'
  next-sentence labels as its labels. Ours is the model the classification
  task builds (`build_classifier`); HF is `BertForSequenceClassification`.

Both with AdamW, clipping to 1.0 and dropout on, in each precision:

* `float32`: both sides with TF32 matmuls (TensorFlow's default on Ampere
  and later GPUs; PyTorch is set to match, since its default is strict
  float32 matmuls);
* `mixed_bfloat16`: ours under that Keras policy, HF under
  `torch.autocast("cuda", torch.bfloat16)`;
* `mixed_float16`: ours under that policy with Keras' dynamic loss scaling,
  HF under float16 autocast with `torch.amp.GradScaler`.

Ours is `Trainer.train_steps` without and with XLA
(`--jit_compile`; with XLA its optimizer update is compiled too, as
`compilation.update_use_xla` chooses on a GPU); HF runs eagerly with
PyTorch's fused AdamW, each step ending in `loss.item()`, as ours
ends in reading the loss. Per step, model size and
precision the trainers are warmed up (tracing, XLA compilation), then
timed round robin; the time that took is printed, so a run with
TensorFlow's persistent XLA cache
(`TF_XLA_FLAGS=--tf_xla_persistent_cache_directory=DIR`) shows what a
warm cache saves. The peak (`matmul_peak`) is the best rate of a square
8192 matmul (`--peak_sizes`) that TensorFlow or PyTorch reaches on the GPU
in this process in that precision (TF32 for float32), and "% peak" divides
the step's matmul FLOPs per second by it, counted as each implementation
computes them (`matmul_flops`; `our_pretraining_step`: ours runs its last
pretraining block at the 20 positions and [CLS] only).

Needs a CUDA GPU that the timed implementations' frameworks see.
`--implementations` times ours or HF alone, for a machine where TensorFlow
and PyTorch cannot share one process (their CUDA runtimes differ); "% peak"
then divides by that process's own peak. The default records live in
`../shared/data`; `--records` points elsewhere.

Example:

    .venv/bin/python bench/gpu_training_step.py --sizes=base,large --batch_size=64
"""

import os
import pathlib
import statistics
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402
import bert_tf  # noqa: E402,F401
import numpy as np  # noqa: E402
import peers  # noqa: E402
with peers.needed():
    import transformers

from bert_tf.config import NAMED_SIZES, BertConfig  # noqa: E402
from bert_tf.modeling.classifier import build_classifier  # noqa: E402
from bert_tf.modeling.pretrainer import BertPretrainer  # noqa: E402
from bert_tf.training import precision  # noqa: E402
from bert_tf.training.optimization import create_optimizer  # noqa: E402
import matmul_flops  # noqa: E402
import gpu_setup  # noqa: E402
from gpu_setup import AUTOCAST  # noqa: E402
from peer_models import hf_bert_config  # noqa: E402
from round_robin import define_choices_flag, time_round_robin  # noqa: E402
from step_runners import (PREDICTIONS, SEQ_LENGTH,  # noqa: E402
                          classification_batch, classification_step, hf_classification_loss,
                          hf_pretraining_loss, pretraining_batch, pretraining_step,
                          torch_step)

STEPS = ("pretraining", "classification")

FLAGS = flags.FLAGS
define_choices_flag("steps", list(STEPS), list(STEPS), "Training steps to time.")
define_choices_flag("sizes", ["large"], NAMED_SIZES, "Named model sizes to time.")
gpu_setup.define_flags("steps", batch_size=64, iterations=10)


def our_runner(step, config, batch, policy, jit):
    """One `Trainer` step of `step`'s model, built under `policy`."""
    with precision.dtype_policy(policy):
        optimizer = create_optimizer(1e-4, 10000, 100,
                                     loss_scale=precision.needs_loss_scaling(policy))
        if step == "pretraining":
            return pretraining_step(BertPretrainer(config), batch, optimizer, jit_compile=jit)
        return classification_step(build_classifier(config, 2), batch, optimizer,
                                   jit_compile=jit)


def hf_runner(step, config, batch, policy):
    """One PyTorch step of `step`'s HF model on the GPU, autocast as `policy` says."""
    if step == "pretraining":
        model = transformers.BertForPreTraining(hf_bert_config(config)).cuda()
        step_loss = hf_pretraining_loss(model, batch, "cuda")
    else:
        model = transformers.BertForSequenceClassification(hf_bert_config(config)).cuda()
        step_loss = hf_classification_loss(model, batch, "cuda")
    return torch_step(model, step_loss, 1e-4, AUTOCAST[policy], "cuda")


def time_group(step, config, batch, policy):
    """`{(implementation, XLA): [seconds per step]}` for one step, size and precision."""
    start = time.perf_counter()
    runners = {}
    if "ours" in FLAGS.implementations:
        runners.update({("ours", jit): our_runner(step, config, batch, policy, jit == "yes")
                        for jit in FLAGS.xla})
    if "hf" in FLAGS.implementations:
        runners[("hf", "no")] = hf_runner(step, config, batch, policy)
    times, losses = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations)
    bad = {key: loss for key, loss in losses.items() if not np.isfinite(loss)}
    if bad:
        sys.exit(f"non-finite loss after the timed steps: {bad}")
    print(f"  {step} {policy}: built, warmed up and timed in "
          f"{time.perf_counter() - start:.0f} s", flush=True)
    return {key: [wall for wall, _ in samples] for key, samples in times.items()}


def step_flops(step, config):
    """Matmul FLOPs of one `step` of `config`'s model, as each implementation computes them."""
    if step == "classification":
        flops = matmul_flops.classification_step(config, FLAGS.batch_size, SEQ_LENGTH, 2)
        return {"ours": flops, "hf": flops}
    return {"ours": matmul_flops.our_pretraining_step(config, FLAGS.batch_size, SEQ_LENGTH,
                                                      PREDICTIONS),
            "hf": matmul_flops.pretraining_step(config, FLAGS.batch_size, SEQ_LENGTH,
                                                PREDICTIONS)}


def main(argv):
    del argv
    peaks = gpu_setup.start(FLAGS.implementations, FLAGS.precisions, FLAGS.peak_sizes)
    records = pretraining_batch(FLAGS.batch_size, FLAGS.records)
    batches = {"pretraining": records, "classification": classification_batch(records)}
    lines = ["| step | size | precision | implementation | XLA | min ms | median ms | max ms | "
             "seq/s | TFLOP/s | % peak |", "|---|---|---|---|---|---:|---:|---:|---:|---:|---:|"]
    for step in FLAGS.steps:
        for size in FLAGS.sizes:
            config = BertConfig.named(size)
            flops = step_flops(step, config)
            for policy in FLAGS.precisions:
                print(f"timing {step} {size} {policy} ...", file=sys.stderr, flush=True)
                for (name, jit), walls in time_group(step, config, batches[step], policy).items():
                    median = statistics.median(walls)
                    rate = flops[name] / median / 1e12
                    lines.append(
                        f"| {step} | {size} | {policy} | {name} | {jit} | "
                        f"{min(walls) * 1e3:.1f} | {median * 1e3:.1f} | {max(walls) * 1e3:.1f} | "
                        f"{FLAGS.batch_size / median:.0f} | {rate:.0f} | "
                        f"{100 * rate / (peaks[policy].gflops / 1000):.0f}% |")
                    print(lines[-1], flush=True)
    print(f"\ntraining steps on one GPU: batch {FLAGS.batch_size} x seq {SEQ_LENGTH}, AdamW, "
          f"clip 1.0, dropout on; pretraining: {PREDICTIONS} masked-LM predictions + NSP; "
          f"classification: 2 labels; {FLAGS.warmup} warm-up + {FLAGS.iterations} timed steps "
          "each, round robin")
    print("\n".join(lines))


if __name__ == "__main__":
    app.run(main)
