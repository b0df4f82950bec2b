"""Fine-tunes real pretrained weights on CoNLL-2003 NER with bert_tf, and the same run with HF.

The weights are ../shared/data/models/all-MiniLM-L6-v2 (6 layers, H=384,
uncased). The first `--train_sentences` sentences of eng.train become
windows (our `tagging_features`, label on each word's first piece), put in
one fixed order per epoch; bert_tf's `NerTask` and HF transformers'
`BertForTokenClassification` then see the same batches in the same order,
start from the same encoder *and* classifier weights (ours are copied into
HF's head) and use the same recipe: AdamW (weight decay 0.01, none on
LayerNorm and bias, eps 1e-6), linear warmup over 10% then linear decay,
clip norm 1.0, dropout 0.1; the loss is the mean cross-entropy over first
pieces (HF: labels -100 elsewhere). Both are scored on all of eng.testa
(dev) and eng.testb (test) with our window-to-word inverse and
conlleval-rule entity F1 (checked against seqeval in
tests/tasks/test_entity_metrics.py). `--mixed_precision=mixed_bfloat16`
trains ours in bfloat16 (float32 weights), for its effect on the score.

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/finetune_ner.py \
        --train_sentences=4000 --epochs=3 --learning_rate=1e-4 [--implementations=hf]
"""

import dataclasses
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
from bert_tf.tasks import runner  # noqa: E402
from bert_tf.tasks.batching import batched_columns  # noqa: E402
from bert_tf.tasks.entity_metrics import entity_scores  # noqa: E402
from bert_tf.tasks.model_files import ModelFiles  # noqa: E402
from bert_tf.tasks.ner import NerTask  # noqa: E402
from bert_tf.tasks.run_options import RunOptions  # noqa: E402
from bert_tf.tasks.tagging_features import predicted_tags  # noqa: E402
from bert_tf.tasks.task import RunContext  # noqa: E402
from bert_tf.training.distribution import get_strategy  # noqa: E402
import peers  # noqa: E402  (bench/ is on sys.path: this script's folder)
from round_robin import define_choices_flag  # noqa: E402


IMPLEMENTATIONS = ("bert_tf", "hf")
CONLL = SHARED_DATA / "conll2003"
FLAGS = flags.FLAGS
flags.DEFINE_integer("train_sentences", 4000, "First sentences of eng.train to train on "
                     "(0: all).")
flags.DEFINE_float("epochs", 3.0, "Training epochs.")
flags.DEFINE_float("learning_rate", 1e-4, "Peak learning rate.")
flags.DEFINE_integer("batch_size", 32, "Training batch size.")
flags.DEFINE_integer("max_seq_length", 128, "Tokens per window.")
flags.DEFINE_integer("seed", 12345, "Seed of the order.")
define_choices_flag("implementations", IMPLEMENTATIONS, IMPLEMENTATIONS, "Which to train: "
                    "bert_tf, hf (HF starts from bert_tf's initial classifier weights either "
                    "way).")
peers.check_flag("implementations", {"hf": peers.HUGGINGFACE})
flags.DEFINE_enum("mixed_precision", "float32", ["float32", "mixed_bfloat16"],
                  "bert_tf's dtype policy (HF always trains in float32).")
define_path_flag("model_dir", SHARED_DATA / "models" / "all-MiniLM-L6-v2",
                 "HuggingFace folder of the pretrained weights.")


class SameBatchesTask(NerTask):
    """Trains on the columns exactly as given (no shuffle), so ours and HF see the same batches."""

    def dataset(self, examples, batch_size, is_training, input_context=None, seed=None):
        return batched_columns(examples.columns, len(examples), batch_size,
                               drop_remainder=is_training)


def training_order(train, rng):
    """The subset's windows, a fresh permutation per epoch, cut to whole batches."""
    windows = len(train)
    total = int(windows * FLAGS.epochs) // FLAGS.batch_size * FLAGS.batch_size
    order = []
    while len(order) < total:
        order.extend(rng.permutation(windows))
    order = np.array(order[:total])
    return dataclasses.replace(train, windows=[train.windows[i] for i in order],
                               columns={k: v[order] for k, v in train.columns.items()})


def make_task():
    model_files = ModelFiles(config_beside(FLAGS.model_dir),
                             os.path.join(FLAGS.model_dir, "vocab.txt"), FLAGS.model_dir)
    return SameBatchesTask(str(CONLL), model_files, FLAGS.max_seq_length,
                           do_lower_case=True)


def run_ours(task, order, evaluation_splits, output_dir):
    steps = len(order) // FLAGS.batch_size
    options = RunOptions(output_dir=output_dir, do_train=True, train_batch_size=FLAGS.batch_size,
                         eval_batch_size=64, learning_rate=FLAGS.learning_rate,
                         steps_per_execution=max(1, steps // 8), save_checkpoints_steps=10 ** 9,
                         init_checkpoint=FLAGS.model_dir, mixed_precision=FLAGS.mixed_precision)
    trainer = runner.build_trainer(task, options, get_strategy("one_device"), steps)
    head = trainer.model.get_layer("classifier").dense
    initial_head = (head.kernel.numpy().copy(), head.bias.numpy().copy())
    if "bert_tf" not in FLAGS.implementations:
        return None, None, initial_head
    start = time.time()
    trainer.train(lambda _: task.dataset(order, FLAGS.batch_size, True), steps)
    seconds = time.time() - start
    context = RunContext(options, trainer)
    scores = {name: task.evaluate(context, split) for name, split in evaluation_splits.items()}
    return scores, seconds, initial_head


def run_hf(task, order, evaluation_splits, initial_head):
    import hf_recipe
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    torch.manual_seed(FLAGS.seed)
    model = transformers.BertForTokenClassification.from_pretrained(
        FLAGS.model_dir, num_labels=len(task.labels))
    with torch.no_grad():
        model.classifier.weight.copy_(torch.from_numpy(initial_head[0].T))
        model.classifier.bias.copy_(torch.from_numpy(initial_head[1]))
    steps = len(order) // FLAGS.batch_size

    def inputs(columns, rows):
        return {"input_ids": torch.from_numpy(columns["input_ids"][rows]).long(),
                "attention_mask": torch.from_numpy(columns["input_mask"][rows]).long(),
                "token_type_ids": torch.from_numpy(columns["segment_ids"][rows]).long()}

    def step_loss(step):
        rows = slice(step * FLAGS.batch_size, (step + 1) * FLAGS.batch_size)
        labels = np.where(order.columns["label_weights"][rows] > 0,
                          order.columns["label_ids"][rows], -100)
        return model(**inputs(order.columns, rows), labels=torch.from_numpy(labels).long()).loss

    def evaluate(split):
        logits = []
        with torch.no_grad():
            for i in range(0, len(split), 64):
                logits.append(model(**inputs(split.columns, slice(i, i + 64))).logits.numpy())
        tags = predicted_tags(split.windows, np.concatenate(logits), split.sentence_lengths,
                              task.labels)
        scores = entity_scores([s.tags for s in split.sentences], tags).as_dict()
        return {f"eval_{name}": value for name, value in scores.items()}

    seconds = hf_recipe.train(model, step_loss, steps, FLAGS.learning_rate)
    return {name: evaluate(split) for name, split in evaluation_splits.items()}, seconds


def main(argv):
    del argv
    require(CONLL)
    task = make_task()
    train = task.read_split("train")
    evaluation_splits = {"testa": task.read_split("dev"), "testb": task.read_split("test")}
    if FLAGS.train_sentences:
        kept = [w for w in train.windows if w.sentence_index < FLAGS.train_sentences]
        train = dataclasses.replace(
            train, sentences=train.sentences[:FLAGS.train_sentences], windows=kept,
            columns={k: v[:len(kept)] for k, v in train.columns.items()})
    order = training_order(train, np.random.default_rng(FLAGS.seed))
    with tempfile.TemporaryDirectory(prefix="finetune_ner_") as output_dir:
        ours, seconds, initial_head = run_ours(task, order, evaluation_splits, output_dir)
    rows = [("bert_tf", ours, seconds)] if ours else []
    if "hf" in FLAGS.implementations:
        rows.append(("HF transformers", *run_hf(task, order, evaluation_splits, initial_head)))
    print_table(rows, len(train.sentences), len(train), len(order))


def print_table(rows, sentences, windows, sequences):
    print(f"\nCoNLL-2003, first {sentences} train sentences ({windows} windows), "
          f"{FLAGS.epochs:g} epochs, lr {FLAGS.learning_rate:g}, batch {FLAGS.batch_size}, "
          f"seq {FLAGS.max_seq_length}; scored on all of eng.testa and eng.testb")
    print("\n| implementation | split | F1 | precision | recall | PER / ORG / LOC / MISC F1 "
          "| train time | seq/s |")
    print("|---|---|---|---|---|---|---|---|")
    for name, scores, seconds in rows:
        for split, results in scores.items():
            types = " / ".join(f"{100 * results[f'eval_{t}_f1']:.1f}"
                               for t in ("PER", "ORG", "LOC", "MISC"))
            print(f"| {name} | {split} | {100 * results['eval_f1']:.1f} | "
                  f"{100 * results['eval_precision']:.1f} | {100 * results['eval_recall']:.1f} | "
                  f"{types} | {seconds:.0f} s | {sequences / seconds:.1f} |")


if __name__ == "__main__":
    app.run(main)
