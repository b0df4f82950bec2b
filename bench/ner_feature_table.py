"""The paper's feature-based NER table (section 5.3) on real weights, one row per feature choice.

For each `--feature_layers` choice, `NerTask(mode="feature_based")` takes
token features from the frozen encoder (computed once per split and cached),
trains the two-layer BiLSTM tagger on the first `--train_sentences`
sentences of eng.train, and scores all of eng.testa (dev) and eng.testb
(test) with conlleval-rule entity F1. Everything runs in one process
through `runner.run`, exactly the flow `run_ner.py --mode=feature_based`
uses, so the table's rows are what these command lines give:

    run_ner.py --mode=feature_based --feature_layers=<row> --do_train --do_eval \
        --do_predict --init_checkpoint=<model> --data_dir=<first N sentences> ...

Usage (the run behind docs/RESULTS.md):

    TF_CPP_MIN_LOG_LEVEL=2 .venv/bin/python bench/ner_feature_table.py \
        --train_sentences=4000 --epochs=3 --lstm_units=128 --max_seq_length=64
"""

import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

from absl import app, flags  # noqa: E402

from shared_data import SHARED_DATA, define_path_flag, require  # noqa: E402

from bert_tf.checkpoints import config_beside  # noqa: E402
from bert_tf.tasks import runner  # noqa: E402
from bert_tf.tasks.model_files import ModelFiles  # noqa: E402
from bert_tf.tasks.ner import NerTask  # noqa: E402
from bert_tf.tasks.run_options import RunOptions  # noqa: E402
from bert_tf.tasks.token_features import FEATURE_LAYERS  # noqa: E402
from round_robin import define_choices_flag  # noqa: E402

CONLL = SHARED_DATA / "conll2003"

FLAGS = flags.FLAGS
flags.DEFINE_integer("train_sentences", 4000, "First sentences of eng.train to train on "
                     "(0: all).")
flags.DEFINE_float("epochs", 3.0, "Training epochs of the BiLSTM.")
flags.DEFINE_float("learning_rate", 1e-3, "Peak learning rate of the BiLSTM.")
flags.DEFINE_integer("batch_size", 32, "Training batch size.")
flags.DEFINE_integer("max_seq_length", 64, "Tokens per window.")
flags.DEFINE_integer("lstm_units", 768, "Units per LSTM direction (the paper: 768).")
define_choices_flag("feature_layers", FEATURE_LAYERS, FEATURE_LAYERS, "The rows to run.")
define_path_flag("model_dir", SHARED_DATA / "models" / "all-MiniLM-L6-v2",
                 "HuggingFace folder of the pretrained weights.")


def subset_data_dir(folder):
    """A CoNLL folder in `folder`: the first `--train_sentences` of eng.train, all of testa/testb."""
    source = str(CONLL)
    kept, sentences, previous_blank = [], 0, True
    with open(os.path.join(source, "eng.train")) as f:
        for line in f:
            blank = not line.strip()
            if not blank and previous_blank and not line.startswith("-DOCSTART-"):
                sentences += 1
                if FLAGS.train_sentences and sentences > FLAGS.train_sentences:
                    break
            kept.append(line)
            previous_blank = blank or line.startswith("-DOCSTART-")
    with open(os.path.join(folder, "eng.train"), "w") as f:
        f.writelines(kept)
    for name in ("eng.testa", "eng.testb"):
        os.symlink(os.path.join(source, name), os.path.join(folder, name))
    return folder


def read_results(path):
    """The `key = value` lines of a results file, keys without their `test_` prefix."""
    with open(path) as f:
        pairs = (line.split(" = ") for line in f if " = " in line)
        return {key.replace("test_", "eval_", 1): float(value) for key, value in pairs}


def run_row(feature_layers, data_dir, output_dir):
    """Trains and scores one row; returns (testa results, testb results, seconds)."""
    model_files = ModelFiles(config_beside(FLAGS.model_dir),
                             os.path.join(FLAGS.model_dir, "vocab.txt"), FLAGS.model_dir)
    task = NerTask(data_dir, model_files, FLAGS.max_seq_length, do_lower_case=True,
                   mode="feature_based", feature_layers=feature_layers,
                   lstm_units=FLAGS.lstm_units, cache_dir=os.path.join(output_dir, "features"),
                   feature_batch_size=64)
    options = RunOptions(output_dir=output_dir, do_train=True, do_eval=True, do_predict=True,
                         init_checkpoint=FLAGS.model_dir, train_batch_size=FLAGS.batch_size,
                         eval_batch_size=64, predict_batch_size=64,
                         learning_rate=FLAGS.learning_rate, num_train_epochs=FLAGS.epochs,
                         steps_per_execution=50, save_checkpoints_steps=10 ** 9)
    start = time.time()
    dev = runner.run(task, options)
    seconds = time.time() - start
    test = read_results(os.path.join(output_dir, "test_results.txt"))
    return dev, test, seconds


def main(argv):
    del argv
    require(CONLL)
    rows = []
    with tempfile.TemporaryDirectory(prefix="ner_features_") as work:
        data_dir = os.path.join(work, "data")
        os.mkdir(data_dir)
        subset_data_dir(data_dir)
        for feature_layers in FLAGS.feature_layers:
            dev, test, seconds = run_row(feature_layers, data_dir,
                                         os.path.join(work, feature_layers))
            rows.append((feature_layers, dev, test, seconds))
            print(f"{feature_layers}: testa F1 {100 * dev['eval_f1']:.1f}, "
                  f"testb F1 {100 * test['eval_f1']:.1f}, {seconds:.0f} s", flush=True)
    print(f"\nFeature-based NER, {os.path.basename(FLAGS.model_dir)} frozen, first "
          f"{FLAGS.train_sentences or 'all'} train sentences, BiLSTM 2 x {FLAGS.lstm_units} "
          f"units per direction, {FLAGS.epochs:g} epochs, lr {FLAGS.learning_rate:g}, "
          f"batch {FLAGS.batch_size}, seq {FLAGS.max_seq_length}")
    print("\n| features | testa F1 | testb F1 | testa P / R | run time (features + training "
          "+ scoring) |")
    print("|---|---|---|---|---|")
    for feature_layers, dev, test, seconds in rows:
        print(f"| {feature_layers} | {100 * dev['eval_f1']:.1f} | {100 * test['eval_f1']:.1f} | "
              f"{100 * dev['eval_precision']:.1f} / {100 * dev['eval_recall']:.1f} | "
              f"{seconds:.0f} s |")


if __name__ == "__main__":
    app.run(main)
