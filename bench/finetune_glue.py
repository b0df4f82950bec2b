"""Fine-tunes real pretrained weights on GLUE with bert_tf, and the same runs with HF transformers.

The weights are ../shared/data/models/all-MiniLM-L6-v2 (6 layers, H=384).
For each task a training subset is drawn with a fixed seed and put in one
fixed order for all epochs; both implementations then see the same batches
in the same order, start from the same encoder weights *and* the same
initial classifier weights (ours are copied into HuggingFace's head), and
use the same recipe: AdamW (weight decay 0.01, none on LayerNorm and bias,
eps 1e-6), linear warmup over 10% then linear decay, clip norm 1.0,
dropout 0.1. What differs is only the implementation (and dropout masks).
Dev scores use the whole dev set and our metric code (checked against
scikit-learn and scipy in tests/tasks/test_metrics.py).

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/finetune_glue.py \
        --tasks=sst-2,mrpc,rte,sts-b,cola --compare=sst-2,mrpc
"""

import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402

from shared_data import SHARED_DATA, define_path_flag, require  # noqa: E402

from bert_tf.checkpoints import config_beside  # noqa: E402
from bert_tf.tasks import classification_results, runner  # noqa: E402
from bert_tf.tasks.classification import ClassificationTask, examples_dataset  # noqa: E402
from bert_tf.tasks.glue_data import get_task  # noqa: E402
from bert_tf.tasks.model_files import ModelFiles  # noqa: E402
from bert_tf.tasks.run_options import RunOptions  # noqa: E402
from bert_tf.tasks.task import RunContext  # noqa: E402
from bert_tf.training.distribution import get_strategy  # noqa: E402
import peers  # noqa: E402  (bench/ is on sys.path: this script's folder)
from round_robin import define_choices_flag  # noqa: E402

FOLDERS = {"sst-2": "SST-2", "mrpc": "MRPC", "rte": "RTE", "sts-b": "STS-B", "cola": "CoLA"}
SHORT_TASKS = ("sst-2", "cola")

FLAGS = flags.FLAGS
define_choices_flag("tasks", list(FOLDERS), list(FOLDERS), "GLUE tasks to run.")
define_choices_flag("compare", ["sst-2", "mrpc"], list(FOLDERS), "Tasks also run with HF "
                    "transformers.")
peers.check_flag("compare", {task: peers.HUGGINGFACE for task in FOLDERS})
flags.DEFINE_integer("train_examples", 2000, "Training subset size (0: all).")
flags.DEFINE_float("epochs", 3.0, "Training epochs.")
flags.DEFINE_float("learning_rate", 5e-5, "Peak learning rate.")
flags.DEFINE_integer("batch_size", 32, "Training batch size.")
flags.DEFINE_integer("max_seq_length", 0, "Sequence length (0: per task, 64 for the "
                     "single-sentence SST-2 and CoLA, whose sentences fit, "
                     "else 128).")
flags.DEFINE_integer("seed", 12345, "Seed of the subset and the order.")
flags.DEFINE_bool("jit_compile", False, "XLA-compile our training step (slower on CPU).")
define_path_flag("model_dir", SHARED_DATA / "models" / "all-MiniLM-L6-v2",
                 "HuggingFace folder of the pretrained weights.")


def training_order(examples, rng):
    """The subset, then a fresh permutation per epoch, cut to whole batches."""
    if FLAGS.train_examples:
        examples = [examples[i] for i in rng.permutation(len(examples))[:FLAGS.train_examples]]
    total = int(len(examples) * FLAGS.epochs) // FLAGS.batch_size * FLAGS.batch_size
    order = []
    while len(order) < total:
        order += [examples[i] for i in rng.permutation(len(examples))]
    return examples, order[:total]


def seq_length(task):
    return FLAGS.max_seq_length or (64 if task.name in SHORT_TASKS else 128)


class SameBatchesTask(ClassificationTask):
    """Trains on `order` exactly as given (no shuffle), so ours and HF see the same batches."""

    def dataset(self, examples, batch_size, is_training, input_context=None, seed=None):
        return examples_dataset(examples, self.preprocessor, batch_size)


def run_ours(task, order, dev, output_dir):
    model_files = ModelFiles(config_beside(FLAGS.model_dir),
                             os.path.join(FLAGS.model_dir, "vocab.txt"))
    ours = SameBatchesTask(task, None, model_files, seq_length(task))
    steps = len(order) // FLAGS.batch_size
    options = RunOptions(output_dir=output_dir, do_train=True, train_batch_size=FLAGS.batch_size,
                         eval_batch_size=64, learning_rate=FLAGS.learning_rate,
                         jit_compile=FLAGS.jit_compile, steps_per_execution=max(1, steps // 4),
                         save_checkpoints_steps=10 ** 9, init_checkpoint=FLAGS.model_dir)
    trainer = runner.build_trainer(ours, options, get_strategy("one_device"), steps)
    head = trainer.model.get_layer("classifier").dense
    initial_head = (head.kernel.numpy().copy(), head.bias.numpy().copy())
    start = time.time()
    trainer.train(lambda _: ours.dataset(order, FLAGS.batch_size, True), steps)
    seconds = time.time() - start
    results = ours.evaluate(RunContext(options, trainer), dev)
    return results, seconds, initial_head


def run_hf(task, order, dev, initial_head):
    import hf_recipe
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    torch.manual_seed(FLAGS.seed)
    num_labels = 1 if task.is_regression else len(task.labels)
    model = transformers.BertForSequenceClassification.from_pretrained(
        FLAGS.model_dir, num_labels=num_labels)
    with torch.no_grad():
        model.classifier.weight.copy_(torch.from_numpy(initial_head[0].T))
        model.classifier.bias.copy_(torch.from_numpy(initial_head[1]))
    tokenizer = transformers.BertTokenizer(os.path.join(FLAGS.model_dir, "vocab.txt"))
    steps = len(order) // FLAGS.batch_size

    def encode(examples):
        pair = examples[0].text_b is not None
        return tokenizer([e.text_a for e in examples],
                         [e.text_b for e in examples] if pair else None,
                         truncation="longest_first", max_length=seq_length(task),
                         padding="max_length", return_tensors="pt")

    def step_loss(step):
        batch = order[step * FLAGS.batch_size:(step + 1) * FLAGS.batch_size]
        labels = torch.tensor([e.label for e in batch],
                              dtype=torch.float32 if task.is_regression else torch.long)
        return model(**encode(batch), labels=labels).loss

    seconds = hf_recipe.train(model, step_loss, steps, FLAGS.learning_rate)
    logits = []
    with torch.no_grad():
        for i in range(0, len(dev), 64):
            logits.append(model(**encode(dev[i:i + 64])).logits.numpy())
    results = classification_results.evaluation_results(
        task.name, np.concatenate(logits), [e.label for e in dev], 64, task.is_regression)
    return results, seconds


def task_folder(name):
    """The GLUE folder of task `name` in the shared data."""
    return SHARED_DATA / "glue" / FOLDERS[name]


def main(argv):
    del argv
    require(*map(task_folder, FLAGS.tasks))
    rows = []
    for name in FLAGS.tasks:
        task = get_task(name)
        folder = str(task_folder(task.name))
        rng = np.random.default_rng(FLAGS.seed)
        subset, order = training_order(task.read(folder, "train"), rng)
        dev = task.read(folder, "dev")
        with tempfile.TemporaryDirectory(prefix=f"finetune_{name}_") as output_dir:
            ours, ours_seconds, head = run_ours(task, order, dev, output_dir)
        rows.append((name, len(subset), seq_length(task), "bert_tf", ours, ours_seconds,
                     len(order)))
        if name in FLAGS.compare:
            theirs, hf_seconds = run_hf(task, order, dev, head)
            rows.append((name, len(subset), seq_length(task), "HF transformers", theirs,
                         hf_seconds, len(order)))
        print_table(rows)


def print_table(rows):
    print("\n| task | train subset | seq length | implementation | dev metrics | train time "
          "| seq/s |")
    print("|---|---|---|---|---|---|---|")
    for name, size, length, impl, results, seconds, sequences in rows:
        metrics = ", ".join(f"{k.removeprefix('eval_')} {100 * v:.1f}"
                            for k, v in sorted(results.items())
                            if k.startswith("eval_") and k != "eval_loss")
        print(f"| {name} | {size} | {length} | {impl} | {metrics} | {seconds:.0f} s | "
              f"{sequences / seconds:.1f} |")


if __name__ == "__main__":
    app.run(main)
