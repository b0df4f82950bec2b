"""Times one fine-tuning training step: ours against HuggingFace, from the same real weights.

A sentence-pair classifier of all-MiniLM-L6-v2 size (L6, H384, real weights
from `--model_dir`, HF safetensors) with a 2-label head, trained on one
fixed batch of the first 32 MRPC training pairs packed to 128 tokens:

* `ours`: the classifier the classification task builds
  (`ClassificationTask.build_model`), its optimizer and start weights from
  `runner.build_trainer` (as `finetune_glue.py` and `run_classifier.py`
  get them), one step of `Trainer.train_steps` (the loop every runner
  uses) per call, without and with XLA (`jit_compile`);
* `hf`: `transformers.BertForSequenceClassification` from the same folder
  with our head copied in, `hf_recipe`'s AdamW and clipping to 1.0, on the
  same token ids.

A step is forward with dropout on, cross-entropy, backward, clipping and an
AdamW update. `--mixed_precision=mixed_bfloat16` runs ours under that Keras
policy and HF's forward pass under `torch.autocast("cpu", torch.bfloat16)`.
Before the timings, both models run the batch with dropout off: equal
losses and last hidden states (loss difference and relative hidden-state
difference within 1e-4 in float32, 5e-2 in bfloat16) show they start from
the same weights; the run stops if not.

Timed steps go round robin (`round_robin.py`); the table (`timing_table`)
gives the fastest, median and slowest step, sequences per second and
matmul GFLOP/s from the median, and their share of the matmul peak of the
run's precision (`matmul_peak`). A step counts
`matmul_flops.classification_step`: 3 x (encoder forward + pooler + output layer).

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/finetune_step.py \
        --iterations=5 --warmup=2 [--mixed_precision=mixed_bfloat16]
"""

import os
import pathlib
import sys
import tempfile

from shared_data import SHARED_DATA, define_path_flag

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
REPO = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from absl import app, flags  # noqa: E402
import numpy as np  # noqa: E402
import peers  # noqa: E402
with peers.needed():
    import torch
    import transformers

from bert_tf.checkpoints import config_beside  # noqa: E402
from bert_tf.tasks import runner  # noqa: E402
from bert_tf.tasks.classification import ClassificationTask  # noqa: E402
from bert_tf.tasks.glue_data import get_task  # noqa: E402
from bert_tf.tasks.model_files import ModelFiles  # noqa: E402
from bert_tf.tasks.run_options import RunOptions  # noqa: E402
from bert_tf.training.distribution import get_strategy  # noqa: E402
from bert_tf.training.objective import batch_loss  # noqa: E402
import matmul_flops  # noqa: E402
from matmul_peak import define_peak_flags  # noqa: E402
from round_robin import define_threads_flag, time_round_robin, use_threads  # noqa: E402
from step_runners import autocast, torch_step, trainer_step  # noqa: E402
from timing_table import BenchRun, TimedRow, markdown_table  # noqa: E402

LEARNING_RATE = 5e-5
# Steps the learning-rate schedule is built for: more than any run takes, so it never reaches 0.
SCHEDULE_STEPS = 10_000
# Largest loss difference and relative hidden-state difference before any step that
# still means "the same start weights", per precision.
TOLERANCE = {"float32": 1e-4, "mixed_bfloat16": 5e-2}

FLAGS = flags.FLAGS
define_path_flag("model_dir", SHARED_DATA / "models" / "all-MiniLM-L6-v2",
                 "HuggingFace BERT folder (config.json, model.safetensors, vocab.txt).")
define_path_flag("data_dir", SHARED_DATA / "glue" / "MRPC", "MRPC folder (train.tsv).")
flags.DEFINE_integer("batch_size", 32, "Sequence pairs per step.", lower_bound=1)
flags.DEFINE_integer("seq_length", 128, "Tokens per packed pair.", lower_bound=8,
                     upper_bound=512)
flags.DEFINE_integer("iterations", 5, "Timed steps per implementation.", lower_bound=1)
flags.DEFINE_integer("warmup", 2, "Untimed steps first (tracing, XLA).", lower_bound=1)
flags.DEFINE_enum("mixed_precision", "float32", list(TOLERANCE),
                  "float32, or ours under mixed_bfloat16 and HF under bfloat16 autocast.")
define_threads_flag()
define_peak_flags()


def fixed_batch(task):
    """The first `--batch_size` training pairs, packed by the task's own input pipeline."""
    examples = task.read_split("train")[:FLAGS.batch_size]
    if len(examples) < FLAGS.batch_size:
        raise ValueError(f"{FLAGS.data_dir}: {len(examples)} training pairs, fewer than "
                         f"--batch_size={FLAGS.batch_size}")
    batch = next(iter(task.dataset(examples, FLAGS.batch_size, is_training=False)))
    return {name: value.numpy() for name, value in batch.items()}


def our_trainer(task, jit, output_dir):
    """The classifier, optimizer and start weights a classification run builds."""
    options = RunOptions(output_dir=output_dir, do_train=True, train_batch_size=FLAGS.batch_size,
                         learning_rate=LEARNING_RATE, mixed_precision=FLAGS.mixed_precision,
                         jit_compile=jit, init_checkpoint=FLAGS.model_dir)
    return runner.build_trainer(task, options, get_strategy("one_device"), SCHEDULE_STEPS)


def hf_classifier(num_labels, head):
    """`BertForSequenceClassification` from `--model_dir`, with `head`'s kernel and bias."""
    transformers.logging.set_verbosity_error()
    model = transformers.BertForSequenceClassification.from_pretrained(
        FLAGS.model_dir, num_labels=num_labels)
    with torch.no_grad():
        model.classifier.weight.copy_(torch.from_numpy(head.kernel.numpy().T))
        model.classifier.bias.copy_(torch.from_numpy(head.bias.numpy()))
    return model


def hf_inputs(batch):
    """The batch as HF's keyword arguments, `labels` included."""
    return {"input_ids": torch.from_numpy(batch["input_ids"]).long(),
            "attention_mask": torch.from_numpy(batch["input_mask"]).long(),
            "token_type_ids": torch.from_numpy(batch["segment_ids"]).long(),
            "labels": torch.from_numpy(batch["label_ids"]).long()}


def start_check(trainer, model, batch, autocast_dtype):
    """Ours against HF on the batch with dropout off, before any step.

    Returns the two losses and the relative difference of the encoders' last
    hidden states, `|ours - HF| / |HF|` over the whole batch (the loss alone
    would hardly notice other encoder weights: the new head's logits are near
    0, so both losses are near log 2).
    """
    features = {name: batch[name] for name in ("input_ids", "input_mask", "segment_ids")}
    ours_loss, _ = batch_loss(trainer.objective, trainer.model(features, training=False), batch)
    ours_hidden = trainer.model.get_layer("bert_encoder")(features, training=False)
    model.eval()
    with torch.no_grad(), autocast(autocast_dtype):
        theirs = model(**hf_inputs(batch), output_hidden_states=True)
    hf_hidden = theirs.hidden_states[-1].float().numpy()
    difference = np.asarray(ours_hidden["sequence_output"], np.float32) - hf_hidden
    return (float(ours_loss), float(theirs.loss),
            float(np.linalg.norm(difference) / np.linalg.norm(hf_hidden)))


def main(argv):
    del argv
    use_threads(FLAGS.threads)
    model_files = ModelFiles(config_beside(FLAGS.model_dir),
                             os.path.join(FLAGS.model_dir, "vocab.txt"))
    task = ClassificationTask(get_task("mrpc"), FLAGS.data_dir, model_files, FLAGS.seq_length)
    batch = fixed_batch(task)
    mixed = FLAGS.mixed_precision == "mixed_bfloat16"
    dtype, autocast_dtype = ("bfloat16", torch.bfloat16) if mixed else ("float32", None)
    with tempfile.TemporaryDirectory(prefix="finetune_step_") as folder, \
            BenchRun(FLAGS.threads, [dtype], FLAGS.peak_sizes) as run:
        trainers = {jit: our_trainer(task, jit, os.path.join(folder, f"jit_{jit}"))
                    for jit in (False, True)}
        hf = hf_classifier(len(task.reader.labels),
                           trainers[False].model.get_layer("classifier").dense)
        ours, theirs, hidden = start_check(trainers[False], hf, batch, autocast_dtype)
        check = (f"same start, dropout off: loss ours {ours:.6f}, HF {theirs:.6f}; last hidden "
                 f"states' relative difference {hidden:.1e} (each allowed "
                 f"{TOLERANCE[FLAGS.mixed_precision]:.0e})")
        print(f"# {check}", file=sys.stderr, flush=True)
        if not max(abs(ours - theirs), hidden) <= TOLERANCE[FLAGS.mixed_precision]:
            sys.exit(f"{check}: ours and HF do not start from the same weights; not timing")
        runners = {("ours", jit): trainer_step(trainer, batch) for jit, trainer in trainers.items()}
        inputs = hf_inputs(batch)
        runners[("hf", False)] = torch_step(hf, lambda: hf(**inputs).loss, LEARNING_RATE,
                                            autocast_dtype)
        times, _ = time_round_robin(runners, FLAGS.warmup, FLAGS.iterations)
    flops = matmul_flops.classification_step(model_files.config, FLAGS.batch_size,
                                             FLAGS.seq_length, len(task.reader.labels))
    precision = {"ours": FLAGS.mixed_precision,
                 "hf": "bfloat16 autocast" if mixed else "float32"}
    rows = [TimedRow((name, "yes" if jit else "no", precision[name]), samples,
                     FLAGS.batch_size, flops, dtype)
            for (name, jit), samples in times.items()]
    print(run.header(
        f"fine-tuning steps of {os.path.basename(FLAGS.model_dir)}, 2-label MRPC classifier: "
        f"batch {FLAGS.batch_size} x seq {FLAGS.seq_length}, dropout on, AdamW, clip 1.0; "
        f"{FLAGS.warmup} warm-up + {FLAGS.iterations} timed steps each, round robin", check))
    print(markdown_table(("implementation", "XLA", "precision"), rows, FLAGS.threads,
                         run.peaks))


if __name__ == "__main__":
    app.run(main)
