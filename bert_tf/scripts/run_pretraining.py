"""Pretrains BERT with masked LM and next-sentence prediction (the original's runner).

    python run_pretraining.py --input_file=/tmp/tf_examples.tfrecord \
      --output_dir=/tmp/pretraining_output --do_train=True --do_eval=True \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt \
      --train_batch_size=32 --max_seq_length=128 --max_predictions_per_seq=20 \
      --num_train_steps=20 --num_warmup_steps=10 --learning_rate=2e-5

The original's flags keep their names and defaults. Added: where to run
(`--distribution_strategy`, `--num_gpus`, `--tpu`), speed
(`--mixed_precision`, `--jit_compile`, `--steps_per_execution`), memory
(`--gradient_accumulation_steps`: `--train_batch_size` stays the batch of one
optimizer step), `--optimizer=adamw|lamb`, the paper's ablations (`--nsp=false`:
"No NSP"; `--causal`: "LTR & No NSP"), `--eval_input_file` and `--vocab_file`.

`--dynamic_masking` trains on raw text instead of TFRecords: `--input_file`
then names text files in `create_pretraining_data.py`'s input format, which
are paired and masked in tf.data with fresh masks every epoch (RoBERTa's
dynamic masking), using that tool's flags `--do_lower_case`,
`--masked_lm_prob`, `--short_seq_prob` and `--do_whole_word_mask`, and the
WordPiece vocabulary of `--vocab_file`:

    python run_pretraining.py --dynamic_masking --input_file=corpus/*.txt \
      --vocab_file=$BERT_BASE_DIR/vocab.txt --bert_config_file=... \
      --output_dir=/tmp/pretraining_output --do_train --num_train_steps=10000

Rerunning the same command resumes from the newest checkpoint in
`--output_dir`. At the end of training the model is also written there as an
original-format checkpoint (`bert_model.ckpt`, `bert_config.json`, and
`vocab.txt` when `--vocab_file` is given); `--do_eval` writes
`eval_results.txt`.
"""

import os
import sys

from absl import app, flags, logging

from bert_tf.checkpoints import CheckpointError, save_tf1_checkpoint
from bert_tf.checkpoints.tf1 import CHECKPOINT_BASENAME
from bert_tf.config import BertConfig, ConfigError
from bert_tf.data import readers
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.scripts import runtime_flags
from bert_tf.tokenization.vocab import (PRETRAINING_REQUIRED_TOKENS, load_vocab,
                                        validate_case_matches_checkpoint)
from bert_tf.training import distribution, precision
from bert_tf.training.init_checkpoint import initialize_from_checkpoint
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.pretraining_inputs import DynamicMasking, pretraining_dataset_fn
from bert_tf.training.pretraining_losses import pretraining_objective
from bert_tf.training.summaries import write_eval_results
from bert_tf.training.trainer import NonFiniteLossError, Trainer

FLAGS = flags.FLAGS
runtime_flags.define_runtime_flags()
# The original's flags.
flags.DEFINE_string("bert_config_file", None, "The config json file of the pre-trained BERT "
                    "model: the model architecture.")
flags.DEFINE_string("input_file", None, "Input TF example files (comma-separated globs).")
flags.DEFINE_string("output_dir", None, "Where checkpoints, summaries and results are written.")
flags.DEFINE_string("init_checkpoint", None, "Initial weights: an original BERT checkpoint, "
                    "HuggingFace safetensors, or one of our training checkpoints.")
flags.DEFINE_integer("max_seq_length", 128, "Sequence length of the input records.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked LM predictions per sequence in the "
                     "input records.")
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_integer("train_batch_size", 32, "Sequences per optimizer step (all replicas).")
flags.DEFINE_integer("eval_batch_size", 8, "Sequences per eval batch (all replicas).")
flags.DEFINE_float("learning_rate", 5e-5, "The peak learning rate of Adam.")
flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.")
flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warmup steps.")
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.")
# Ours.
flags.DEFINE_bool("nsp", True, "Train the next-sentence head (false: the paper's 'No NSP').")
flags.DEFINE_bool("causal", False, "Left-to-right LM without NSP (the paper's 'LTR & No NSP').")
flags.DEFINE_string("eval_input_file", None, "Eval records (default: --input_file).")
flags.DEFINE_string("vocab_file", None, "WordPiece vocabulary: tokenizes --dynamic_masking "
                    "text, and is copied beside the exported bert_model.ckpt.")
flags.DEFINE_bool("dynamic_masking", False, "Read raw text (one sentence per line, blank lines "
                  "between documents) and pair and mask it while training, afresh each epoch.")
flags.DEFINE_bool("do_lower_case", True, "With --dynamic_masking: lower-case and strip "
                  "accents before WordPiece (uncased models).")
flags.DEFINE_float("masked_lm_prob", 0.15, "With --dynamic_masking: fraction of tokens to "
                   "predict.")
flags.DEFINE_float("short_seq_prob", 0.1, "With --dynamic_masking: probability of a pair "
                   "shorter than max_seq_length.")
flags.DEFINE_bool("do_whole_word_mask", False, "With --dynamic_masking: mask whole words.")


def _validate(config, strategy):
    if not FLAGS.do_train and not FLAGS.do_eval:
        raise app.UsageError("At least one of `do_train` or `do_eval` must be True.")
    if FLAGS.max_seq_length > config.max_position_embeddings:
        raise app.UsageError(
            f"--max_seq_length={FLAGS.max_seq_length} exceeds max_position_embeddings "
            f"{config.max_position_embeddings} of {FLAGS.bert_config_file}")
    split = FLAGS.gradient_accumulation_steps * strategy.num_replicas_in_sync
    if FLAGS.train_batch_size % split:
        raise app.UsageError(
            f"--train_batch_size={FLAGS.train_batch_size} is not divisible by "
            f"--gradient_accumulation_steps x replicas = {split}")
    if FLAGS.dynamic_masking:
        _validate_dynamic_masking(config)
    if FLAGS.eval_batch_size % strategy.num_replicas_in_sync:
        raise app.UsageError(f"--eval_batch_size={FLAGS.eval_batch_size} is not divisible by "
                             f"{strategy.num_replicas_in_sync} replicas")


def _validate_dynamic_masking(config):
    if not FLAGS.vocab_file:
        raise app.UsageError("--dynamic_masking needs --vocab_file to tokenize the text")
    try:
        vocab_size = len(load_vocab(FLAGS.vocab_file, PRETRAINING_REQUIRED_TOKENS))
    except (OSError, ValueError) as error:
        raise app.UsageError(f"--vocab_file: {error}") from None
    if vocab_size > config.vocab_size:
        raise app.UsageError(
            f"--vocab_file={FLAGS.vocab_file} has {vocab_size} tokens, more than vocab_size "
            f"{config.vocab_size} of {FLAGS.bert_config_file}")
    try:
        validate_case_matches_checkpoint(FLAGS.do_lower_case, FLAGS.init_checkpoint)
    except ValueError as error:
        raise app.UsageError(str(error)) from None


def _export(model, config):
    """Writes the trained model as an original release folder (chief only)."""
    save_tf1_checkpoint(model, os.path.join(FLAGS.output_dir, CHECKPOINT_BASENAME))
    config.to_json_file(os.path.join(FLAGS.output_dir, "bert_config.json"))
    if FLAGS.vocab_file:
        with open(FLAGS.vocab_file, "rb") as source, open(
                os.path.join(FLAGS.output_dir, "vocab.txt"), "wb") as target:
            target.write(source.read())


def _check_input_files():
    for flag in ("input_file", "eval_input_file"):
        if FLAGS[flag].value:
            try:
                readers.expand_input_patterns(FLAGS[flag].value)
            except ValueError as error:
                raise app.UsageError(f"--{flag}: {error}") from None


def run():
    """Trains and/or evaluates as the flags say; returns the eval results (or None)."""
    config = BertConfig.from_json_file(FLAGS.bert_config_file)
    _check_input_files()
    strategy = runtime_flags.strategy_from_flags()
    _validate(config, strategy)
    nsp = FLAGS.nsp and not FLAGS.causal
    with precision.dtype_policy(FLAGS.mixed_precision), strategy.scope():
        model = BertPretrainer(config, nsp=nsp, causal=FLAGS.causal)
        optimizer = create_optimizer(
            FLAGS.learning_rate, FLAGS.num_train_steps, FLAGS.num_warmup_steps, FLAGS.optimizer,
            loss_scale=precision.needs_loss_scaling(FLAGS.mixed_precision))
    trainer = Trainer(
        model, optimizer, pretraining_objective(nsp), strategy, FLAGS.output_dir,
        global_batch_size=FLAGS.train_batch_size,
        gradient_accumulation_steps=FLAGS.gradient_accumulation_steps,
        steps_per_execution=FLAGS.steps_per_execution or FLAGS.iterations_per_loop,
        save_checkpoints_steps=FLAGS.save_checkpoints_steps, jit_compile=FLAGS.jit_compile)
    if trainer.restore_latest() is None and FLAGS.init_checkpoint:
        initialize_from_checkpoint(model, FLAGS.init_checkpoint)

    dynamic_masking = DynamicMasking(
        FLAGS.vocab_file, FLAGS.do_lower_case, FLAGS.masked_lm_prob, FLAGS.short_seq_prob,
        FLAGS.do_whole_word_mask) if FLAGS.dynamic_masking else None

    def dataset_fn(input_file, batch_size, is_training):
        return pretraining_dataset_fn(input_file, FLAGS.max_seq_length,
                                      FLAGS.max_predictions_per_seq, batch_size, is_training,
                                      causal=FLAGS.causal, dynamic_masking=dynamic_masking)

    if FLAGS.do_train:
        micro_batch = FLAGS.train_batch_size // FLAGS.gradient_accumulation_steps
        trainer.train(dataset_fn(FLAGS.input_file, micro_batch, True), FLAGS.num_train_steps)
        if trainer.is_chief:
            _export(model, config)
    if not FLAGS.do_eval:
        return None
    results = trainer.evaluate(
        dataset_fn(FLAGS.eval_input_file or FLAGS.input_file, FLAGS.eval_batch_size, False),
        FLAGS.max_eval_steps)
    if trainer.is_chief:
        write_eval_results(os.path.join(FLAGS.output_dir, "eval_results.txt"), results)
    return results


def main(argv):
    if len(argv) > 1:
        raise app.UsageError(f"unexpected arguments: {argv[1:]}")
    try:
        run()
    except (ConfigError, CheckpointError, distribution.DistributionError,
            NonFiniteLossError) as error:
        sys.exit(f"run_pretraining: error: {error}")
    logging.info("done")


def console_main():
    flags.mark_flags_as_required(["bert_config_file", "input_file", "output_dir"])
    app.run(main)


if __name__ == "__main__":
    console_main()
