r"""Named-entity recognition on CoNLL-2003, fine-tuned or feature-based (the paper's section 5.3).

    python run_ner.py --do_train=true --do_eval=true --do_predict=true \
      --data_dir=$CONLL_DIR --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --max_seq_length=128 --train_batch_size=32 --learning_rate=5e-5 \
      --num_train_epochs=3.0 --output_dir=/tmp/ner_output/

`--data_dir` holds eng.train, eng.testa (dev) and eng.testb (test), or
train.txt, valid.txt and test.txt. `--mode=feature_based` freezes the
encoder, caches its `--feature_layers` features once per split in
`output_dir/features/` and trains a two-layer BiLSTM (`--lstm_units` per
direction) and a classifier on them. `--do_lower_case` defaults to the
casing of the vocabulary (CoNLL text is cased). Writes eval_results.txt
(precision, recall, F1, per type), dev_predictions.txt and
test_predictions.txt (`word gold predicted`, for conlleval), test_results.txt
and, after training, the model as an original release folder with labels.txt;
with `--export_dir` (fine_tune only) also the `ner` SavedModel that finds
entities in raw text (docs/SERVING.md).

A left-to-right model (`"causal": true` in its bert_config.json, from
`run_pretraining.py --causal`) is fine-tuned (or gives its features) left to
right, as it was pretrained: each position sees itself and the positions
before it only. Remove the key to use it with attention both ways.
`--bilstm` (fine_tune mode) puts a randomly initialised BiLSTM between the
encoder and the tag layer, trained with it (the paper's "+ BiLSTM" row).
"""

import os

from absl import flags

from bert_tf.errors import UsageError
from bert_tf.scripts import cli, runner_flags
from bert_tf.tasks import runner
from bert_tf.tasks.model_files import vocab_beside
from bert_tf.tasks import ner
from bert_tf.tasks.ner import MODES, NerTask
from bert_tf.tasks.token_features import FEATURE_LAYERS
from bert_tf.tokenization.vocab import vocab_is_lower_cased

FLAGS = flags.FLAGS
runner_flags.define_model_flags()
runner_flags.define_phase_flags()
runner_flags.define_runtime_flags()
runner_flags.define_bilstm_flags()
FLAGS.set_default("do_lower_case", None)  # None: the vocabulary's casing
flags.DEFINE_enum("mode", "fine_tune", list(MODES), "fine_tune: train the whole network; "
                  "feature_based: a BiLSTM on frozen, cached encoder features.")
flags.DEFINE_enum("feature_layers", ner.DEFAULT_FEATURE_LAYERS, list(FEATURE_LAYERS),
                  "Feature-based mode: which encoder layers make a token's features.")
flags.DEFINE_integer("lstm_units", ner.DEFAULT_LSTM_UNITS,
                     "Feature-based mode: units per LSTM direction.", lower_bound=1)
flags.DEFINE_integer("doc_stride", ner.DEFAULT_DOC_STRIDE, "Word pieces between the starts "
                     "of the windows a sentence longer than max_seq_length is split into.",
                     lower_bound=1)


def do_lower_case():
    """`--do_lower_case`, or when unset the casing of the vocabulary."""
    if FLAGS.do_lower_case is not None:
        return FLAGS.do_lower_case
    vocab_file = runner_flags.model_file_paths(FLAGS)[1] or vocab_beside(FLAGS.init_checkpoint)
    if not vocab_file:
        raise UsageError("--vocab_file is required (no vocab.txt beside --init_checkpoint)")
    return vocab_is_lower_cased(vocab_file)


def run():
    """Trains, evaluates and predicts as the flags say; returns the eval results (or None)."""
    if FLAGS.export_dir and FLAGS.mode != "fine_tune":
        raise UsageError(f"--export_dir: only --mode=fine_tune models have a SavedModel "
                         f"export (text -> entities), not --mode={FLAGS.mode}")
    if FLAGS.mode != "feature_based":
        cli.refuse_unused_flags(("feature_layers", "lstm_units"), "with --mode=feature_based")
    lower_case = do_lower_case()
    model_files = runner_flags.model_files(FLAGS, do_lower_case=lower_case)
    task = NerTask(FLAGS.data_dir, model_files, FLAGS.max_seq_length, lower_case,
                   mode=FLAGS.mode, doc_stride=FLAGS.doc_stride,
                   feature_layers=FLAGS.feature_layers, lstm_units=FLAGS.lstm_units,
                   cache_dir=os.path.join(FLAGS.output_dir, "features"),
                   feature_batch_size=FLAGS.eval_batch_size,
                   bilstm_units=runner_flags.bilstm_units(FLAGS, model_files.config))
    return runner.run(task, runner_flags.run_options(FLAGS))


def console_main():
    cli.run_main(run, "run_ner", required=["output_dir"])


if __name__ == "__main__":
    console_main()
