"""Fine-tunes real pretrained weights on SQuAD with bert_tf, and the same run with HF transformers.

The weights are ../shared/data/models/all-MiniLM-L6-v2 (6 layers, H=384).
The questions are a seeded subset; their windows are built once, with our
feature code (`SquadTask.read_split`), and put in one fixed order (a fresh
seeded permutation of the windows per epoch, cut to whole batches). Both
implementations train on exactly those batches, from the same encoder
weights and the same initial span head (ours is copied into HF's
`qa_outputs`), with the same recipe: AdamW (weight decay 0.01, none on
LayerNorm and bias, eps 1e-6), linear warmup over 10% then linear decay,
clip norm 1.0, dropout 0.1. Both predict the same dev windows, and both sets
of logits go through OUR post-processing (n-best, max-context, final text)
and OUR official scorer, so only the training implementation differs.

SQuAD 1.1: train on a subset of train-v1.1, score a subset of dev-v1.1,
ours and HF (`BertForQuestionAnswering`, PyTorch, CPU):

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/finetune_squad.py --squad_version=1.1

SQuAD 2.0 (ours only): there is no train-v2.0 file here, so dev-v2.0 is
split by article: questions of the first half of its articles train
(first gold answer each), questions of the second half are scored:

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/finetune_squad.py --squad_version=2.0 \\
        --nocompare_hf
"""

import dataclasses
import json
import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402
from absl import app, flags  # noqa: E402

from shared_data import SHARED_DATA, define_path_flag  # noqa: E402

from bert_tf.checkpoints import config_beside  # noqa: E402
from bert_tf.tasks import runner  # noqa: E402
from bert_tf.tasks.batching import batched_columns  # noqa: E402
from bert_tf.tasks.model_files import ModelFiles  # noqa: E402
from bert_tf.tasks.run_options import RunOptions  # noqa: E402
from bert_tf.tasks.squad import SquadOptions, SquadSplit, SquadTask  # noqa: E402
from bert_tf.tasks.squad_data import load_squad_json  # noqa: E402
from bert_tf.tasks.squad_features import feature_columns  # noqa: E402
from bert_tf.tasks.task import RunContext  # noqa: E402
from bert_tf.training.distribution import get_strategy  # noqa: E402
import peers  # noqa: E402  (bench/ is on sys.path: this script's folder)


FLAGS = flags.FLAGS


def define_flags():
    """The command line (defined only when run as a script, so tests can import the module)."""
    flags.DEFINE_enum("squad_version", "1.1", ["1.1", "2.0"], "SQuAD version (see the docstring).")
    flags.DEFINE_bool("compare_hf", True, "Also train HF transformers on the same batches.")
    peers.check_flag("compare_hf", {True: peers.HUGGINGFACE})
    flags.DEFINE_integer("train_questions", 1150, "Training questions (seeded subset).")
    flags.DEFINE_integer("dev_questions", 1000, "Dev questions scored (seeded subset; 0: all).")
    flags.DEFINE_float("epochs", 1.0, "Epochs over the training windows.")
    flags.DEFINE_integer("max_steps", 0, "If > 0, train at most this many steps (timing, tests).")
    flags.DEFINE_float("learning_rate", 1e-4, "Peak learning rate.")
    flags.DEFINE_integer("batch_size", 16, "Training batch size (windows).")
    flags.DEFINE_integer("eval_batch_size", 64, "Prediction batch size.")
    flags.DEFINE_integer("max_seq_length", 256, "Tokens per window.")
    flags.DEFINE_integer("doc_stride", 128, "Context pieces between window starts.")
    flags.DEFINE_integer("max_query_length", 64, "Question pieces kept.")
    flags.DEFINE_integer("seed", 12345, "Seed of the subsets, the window order and torch.")
    define_path_flag("model_dir", SHARED_DATA / "models" / "all-MiniLM-L6-v2",
                     "HuggingFace folder of the pretrained weights (uncased vocabulary).")
    define_path_flag("squad_dir", SHARED_DATA / "squad",
                     "Folder of train-v1.1.json.gz, dev-v1.1.json.gz, dev-v2.0.json.gz.")


@dataclasses.dataclass(frozen=True)
class Recipe:
    """What both implementations share."""

    learning_rate: float
    batch_size: int
    eval_batch_size: int
    seed: int


def subset_file(content, path, questions, seed, articles=slice(None), first_answer_only=False):
    """Writes the SQuAD JSON of `questions` questions (seeded, 0: all) of some articles.

    Returns the question count written. With `first_answer_only` each
    question keeps its first gold answer (training needs exactly one).
    """
    data = content["data"][articles]
    ids = [qa["id"] for article in data for paragraph in article["paragraphs"]
           for qa in paragraph["qas"]]
    if questions:
        ids = [ids[i] for i in np.random.default_rng(seed).permutation(len(ids))[:questions]]
    kept = set(ids)
    articles_out = []
    for article in data:
        paragraphs = []
        for paragraph in article["paragraphs"]:
            qas = [dict(qa, answers=qa["answers"][:1]) if first_answer_only else qa
                   for qa in paragraph["qas"] if qa["id"] in kept]
            if qas:
                paragraphs.append(dict(paragraph, qas=qas))
        if paragraphs:
            articles_out.append(dict(article, paragraphs=paragraphs))
    with open(path, "w", encoding="utf-8") as f:
        json.dump({"version": content.get("version"), "data": articles_out}, f)
    return len(kept)


def squad_files(version, squad_dir, train_questions, dev_questions, seed, folder):
    """(train file, dev file) of the run, written into `folder`."""
    train_path, dev_path = os.path.join(folder, "train.json"), os.path.join(folder, "dev.json")
    if version == "1.1":
        subset_file(load_squad_json(os.path.join(squad_dir, "train-v1.1.json.gz")), train_path,
                    train_questions, seed, first_answer_only=True)
        subset_file(load_squad_json(os.path.join(squad_dir, "dev-v1.1.json.gz")), dev_path,
                    dev_questions, seed)
    else:
        content = load_squad_json(os.path.join(squad_dir, "dev-v2.0.json.gz"))
        half = len(content["data"]) // 2
        subset_file(content, train_path, train_questions, seed, slice(None, half),
                    first_answer_only=True)
        subset_file(content, dev_path, dev_questions, seed, slice(half, None))
    return train_path, dev_path


def window_order(split, epochs, batch_size, seed, max_steps=0):
    """The training windows: a fresh seeded permutation per epoch, cut to whole batches."""
    rng = np.random.default_rng(seed)
    features = split.features
    total = int(len(features) * epochs) // batch_size * batch_size
    if max_steps:
        total = min(total, max_steps * batch_size)
    order = []
    while len(order) < total:
        order += [features[i] for i in rng.permutation(len(features))]
    return SquadSplit(split.examples, order[:total])


class SameBatchesSquadTask(SquadTask):
    """Trains on the windows exactly in the order given (no shuffle, no repeat)."""

    def dataset(self, split, batch_size, is_training, input_context=None, seed=None):
        if not is_training:
            return super().dataset(split, batch_size, is_training, input_context, seed)
        columns = feature_columns(split.features, self.options.max_seq_length, True)
        del columns["unique_ids"]
        return batched_columns(columns, len(split.features), batch_size, drop_remainder=True)


def run_ours(task, order, dev, recipe, output_dir):
    """Trains ours; returns (eval results, train seconds, initial head, dev logits)."""
    steps = len(order.features) // recipe.batch_size
    options = RunOptions(output_dir=output_dir, do_train=True, train_batch_size=recipe.batch_size,
                         eval_batch_size=recipe.eval_batch_size,
                         learning_rate=recipe.learning_rate, random_seed=recipe.seed,
                         steps_per_execution=max(1, steps // 4),
                         save_checkpoints_steps=10 ** 9,
                         init_checkpoint=task.model_files.init_checkpoint)
    trainer = runner.build_trainer(task, options, get_strategy("one_device"), steps)
    head = trainer.model.get_layer("squad").dense
    initial_head = (head.kernel.numpy().copy(), head.bias.numpy().copy())
    context = RunContext(options, trainer)
    initial_logits = context.predict(task.dataset(
        SquadSplit(dev.examples, dev.features[:8]), 8, False))
    start = time.time()
    trainer.train(lambda _: task.dataset(order, recipe.batch_size, True), steps)
    seconds = time.time() - start
    outputs = context.predict(task.dataset(dev, recipe.eval_batch_size, False))
    return task.eval_results(outputs, dev), seconds, initial_head, initial_logits


def hf_model(model_dir, initial_head, seed):
    """HF `BertForQuestionAnswering` from `model_dir` with our initial span head."""
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    torch.manual_seed(seed)
    model = transformers.BertForQuestionAnswering.from_pretrained(model_dir)
    with torch.no_grad():
        model.qa_outputs.weight.copy_(torch.from_numpy(initial_head[0].T))
        model.qa_outputs.bias.copy_(torch.from_numpy(initial_head[1]))
    return model


def hf_logits(model, columns, batch_size):
    """{"start_logits", "end_logits"} numpy of the model on padded feature columns."""
    import torch
    model.eval()
    starts, ends = [], []
    with torch.no_grad():
        for i in range(0, len(columns["input_ids"]), batch_size):
            out = model(**_hf_inputs(columns, slice(i, i + batch_size)))
            starts.append(out.start_logits.numpy())
            ends.append(out.end_logits.numpy())
    return {"start_logits": np.concatenate(starts), "end_logits": np.concatenate(ends)}


def _hf_inputs(columns, rows):
    import torch
    names = {"input_ids": "input_ids", "input_mask": "attention_mask",
             "segment_ids": "token_type_ids", "start_positions": "start_positions",
             "end_positions": "end_positions"}
    return {hf: torch.from_numpy(columns[ours][rows].astype(np.int64))
            for ours, hf in names.items() if ours in columns}


def run_hf(task, order, dev, recipe, initial_head, model_dir):
    """Trains HF on the same batches; returns (eval results, train seconds, initial logits)."""
    import hf_recipe

    model = hf_model(model_dir, initial_head, recipe.seed)
    length = task.options.max_seq_length
    dev_columns = feature_columns(dev.features, length, False)
    initial_logits = hf_logits(model, {k: v[:8] for k, v in dev_columns.items()}, 8)
    steps = len(order.features) // recipe.batch_size
    train_columns = feature_columns(order.features, length, True)

    def step_loss(step):
        rows = slice(step * recipe.batch_size, (step + 1) * recipe.batch_size)
        return model(**_hf_inputs(train_columns, rows)).loss

    seconds = hf_recipe.train(model, step_loss, steps, recipe.learning_rate)
    outputs = hf_logits(model, dev_columns, recipe.eval_batch_size)
    return task.eval_results(outputs, dev), seconds, initial_logits


def multi_window_questions(split):
    """How many questions of the split have more than one window."""
    return int(np.sum(np.bincount([f.example_index for f in split.features]) > 1))


def run(version, compare_hf, model_dir, squad_dir, train_questions, dev_questions,
        epochs, recipe, max_seq_length=256, doc_stride=128, max_query_length=64, max_steps=0):
    """Runs the comparison; returns (facts about the data, [(implementation, results, seconds)])."""
    model_files = ModelFiles(config_beside(model_dir), os.path.join(model_dir, "vocab.txt"),
                             model_dir)
    options = SquadOptions(max_seq_length=max_seq_length, doc_stride=doc_stride,
                           max_query_length=max_query_length,
                           version_2_with_negative=version == "2.0")
    with tempfile.TemporaryDirectory(prefix="finetune_squad_") as folder:
        train_file, dev_file = squad_files(version, squad_dir, train_questions, dev_questions,
                                           recipe.seed, folder)
        task = SameBatchesSquadTask(model_files, train_file, dev_file, options)
        train, dev = task.read_split("train"), task.read_split("dev")
        order = window_order(train, epochs, recipe.batch_size, recipe.seed, max_steps)
        facts = {"train questions": len(train), "train windows": len(train.features),
                 "train questions with >1 window": multi_window_questions(train),
                 "train steps": len(order.features) // recipe.batch_size,
                 "dev questions": len(dev), "dev windows": len(dev.features),
                 "dev questions with >1 window": multi_window_questions(dev)}
        if version == "2.0":
            facts["train unanswerable"] = sum(e.is_impossible for e in train.examples)
            facts["dev unanswerable"] = sum(not e.gold_answers for e in dev.examples)
        results, seconds, head, ours_initial = run_ours(
            task, order, dev, recipe, os.path.join(folder, "ours"))
        rows = [("bert_tf", results, seconds)]
        if compare_hf:
            results, seconds, hf_initial = run_hf(task, order, dev, recipe, head, model_dir)
            rows.append(("HF transformers", results, seconds))
            facts["initial dev logits, max |ours - HF|"] = float(max(
                np.abs(ours_initial[k] - hf_initial[k]).max() for k in hf_initial))
    return facts, rows


def main(argv):
    del argv
    recipe = Recipe(FLAGS.learning_rate, FLAGS.batch_size, FLAGS.eval_batch_size, FLAGS.seed)
    print(f"load average at start: {os.getloadavg()}")
    facts, rows = run(FLAGS.squad_version, FLAGS.compare_hf, FLAGS.model_dir,
                      FLAGS.squad_dir, FLAGS.train_questions, FLAGS.dev_questions,
                      FLAGS.epochs, recipe, FLAGS.max_seq_length, FLAGS.doc_stride,
                      FLAGS.max_query_length, FLAGS.max_steps)
    print(f"load average at end: {os.getloadavg()}")
    print_table(facts, rows, recipe.batch_size)


def print_table(facts, rows, batch_size):
    for key, value in facts.items():
        print(f"{key}: {value}")
    keys = [k for k in rows[0][1] if not k.endswith("_thresh") and k != "total"
            and not k.endswith("_total")] if rows else []
    print("\n| implementation | " + " | ".join(keys) + " | train time | windows/s |")
    print("|---|" + "---|" * (len(keys) + 2))
    windows = facts["train steps"] * batch_size
    for name, results, seconds in rows:
        print(f"| {name} | " + " | ".join(f"{results[k]:.2f}" for k in keys)
              + f" | {seconds:.0f} s | {windows / seconds:.2f} |")
    for name, results, _ in rows:
        extra = {k: v for k, v in results.items() if k.endswith("_thresh")}
        if extra:
            print(f"{name}: " + ", ".join(f"{k} {v:.4f}" for k, v in extra.items()))


if __name__ == "__main__":
    define_flags()
    app.run(main)
