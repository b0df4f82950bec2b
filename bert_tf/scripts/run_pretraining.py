r"""Pretrains BERT with masked LM and next-sentence prediction (the original's runner).

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

A `--causal` model's `bert_config.json` says `"causal": true`: the
fine-tuning runners, `extract_features.py` and the SavedModel exports then
use it left to right too, and its evaluation reports `lm_accuracy` and
`lm_loss` (every next token predicted, none masked). It has no
`--export_dir` (it predicts the next token, not a [MASK]), and pretraining
it further without `--causal` is refused (remove the key from its
`bert_config.json` to use it with attention both ways).

Rerunning the same command resumes from the newest checkpoint in
`--output_dir`. At the end of training the model is also written there as an
original-format checkpoint (`bert_model.ckpt`, `bert_config.json`, and
`vocab.txt` when `--vocab_file` is given); `--do_eval` writes
`eval_results.txt`.
"""

from absl import flags, logging

from bert_tf.errors import UsageError
from bert_tf.scripts import cli, runner_flags
from bert_tf.tasks import runner
from bert_tf.tasks.model_files import vocab_beside
from bert_tf.tasks.pretraining import PretrainingTask
from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.tokenization.vocab import PRETRAINING_REQUIRED_TOKENS, load_vocab

FLAGS = flags.FLAGS
runner_flags.define_runtime_flags()
# The original's flags (and --vocab_file, --do_lower_case: tokenizing --dynamic_masking text;
# the vocabulary is also copied beside the exported bert_model.ckpt).
runner_flags.define_model_flags()
flags.DEFINE_string("input_file", None, "Input TF example files (comma-separated globs).")
flags.DEFINE_string("output_dir", None, "Where checkpoints, summaries and results are written.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Masked LM predictions per sequence in the "
                     "input records.", lower_bound=1)
flags.DEFINE_bool("do_train", False, "Whether to run training.")
flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
flags.DEFINE_integer("train_batch_size", 32, "Sequences per optimizer step (all replicas).",
                     lower_bound=1)
flags.DEFINE_integer("eval_batch_size", 8, "Sequences per eval batch (all replicas).",
                     lower_bound=1)
flags.DEFINE_float("learning_rate", 5e-5, "The peak learning rate of Adam.")
runner_flags.require_positive("learning_rate")
flags.DEFINE_integer("num_train_steps", 100000, "Number of training steps.", lower_bound=1)
flags.DEFINE_integer("num_warmup_steps", 10000, "Number of warmup steps.", lower_bound=0)
flags.DEFINE_integer("max_eval_steps", 100, "Maximum number of eval steps.", lower_bound=1)
# Ours.
flags.DEFINE_bool("nsp", True, "Train the next-sentence head (false: the paper's 'No NSP').")
flags.DEFINE_bool("causal", False, "Left-to-right LM without NSP (the paper's 'LTR & No NSP').")
flags.DEFINE_string("eval_input_file", None, "Eval records (default: --input_file).")
flags.DEFINE_bool("dynamic_masking", False, "Read raw text (one sentence per line, blank lines "
                  "between documents) and pair and mask it while training, afresh each epoch.")
flags.DEFINE_float("masked_lm_prob", 0.15, "With --dynamic_masking: fraction of tokens to "
                   "predict.", lower_bound=0.0, upper_bound=1.0)
flags.DEFINE_float("short_seq_prob", 0.1, "With --dynamic_masking: probability of a pair "
                   "shorter than max_seq_length.", lower_bound=0.0, upper_bound=1.0)
flags.DEFINE_bool("do_whole_word_mask", False, "With --dynamic_masking: mask whole words.")


# The flags that shape raw text into examples: records already hold their pairs and masks.
_DYNAMIC_MASKING_FLAGS = ("masked_lm_prob", "short_seq_prob", "do_whole_word_mask")


def _refuse_ignored_flags():
    """Refuses a flag the run would ignore, so that nobody trains believing it took effect."""
    if not FLAGS.dynamic_masking:
        cli.refuse_unused_flags(_DYNAMIC_MASKING_FLAGS, "with --dynamic_masking (records hold "
                                "their masks already: give it to create_pretraining_data.py)")
    if FLAGS.causal:  # `left_to_right_batch` puts every masked token back
        cli.refuse_unused_flags(("masked_lm_prob", "do_whole_word_mask"), "without --causal "
                                "(a left-to-right model reads the text unmasked and predicts "
                                "every next token)")
    if FLAGS.causal and FLAGS["nsp"].present and FLAGS.nsp:
        raise UsageError("--causal trains no next-sentence head (the paper's 'LTR & No "
                         "NSP'); drop --nsp")


def _dynamic_masking(model_files):
    """The `PretrainingDataOptions` of `--dynamic_masking`, checked; else None."""
    if not FLAGS.dynamic_masking:
        return None
    load_vocab(model_files.vocab_file, PRETRAINING_REQUIRED_TOKENS)
    try:
        options = PretrainingDataOptions(
            do_lower_case=FLAGS.do_lower_case, max_seq_length=FLAGS.max_seq_length,
            max_predictions_per_seq=FLAGS.max_predictions_per_seq,
            masked_lm_prob=FLAGS.masked_lm_prob, short_seq_prob=FLAGS.short_seq_prob,
            do_whole_word_mask=FLAGS.do_whole_word_mask)
        options.check_for_dynamic_masking()
        return options
    except ValueError as error:
        raise UsageError(f"--{error}") from None


def run():
    """Trains and/or evaluates as the flags say; returns the eval results (or None)."""
    _refuse_ignored_flags()
    options = runner_flags.run_options(
        FLAGS, num_train_steps=FLAGS.num_train_steps, num_warmup_steps=FLAGS.num_warmup_steps,
        max_eval_steps=FLAGS.max_eval_steps, random_seed=None)
    if FLAGS.dynamic_masking and not (FLAGS.vocab_file or vocab_beside(FLAGS.init_checkpoint)):
        raise UsageError("--dynamic_masking needs --vocab_file to tokenize the text")
    model_files = runner_flags.model_files(FLAGS, needs_vocab=FLAGS.dynamic_masking)
    task = PretrainingTask(model_files, FLAGS.input_file, FLAGS.eval_input_file,
                           FLAGS.max_seq_length, FLAGS.max_predictions_per_seq, nsp=FLAGS.nsp,
                           causal=FLAGS.causal, dynamic_masking=_dynamic_masking(model_files),
                           do_lower_case=FLAGS.do_lower_case)
    results = runner.run(task, options)
    logging.info("done")
    return results


def console_main():
    # No --bert_config_file: the one beside --init_checkpoint (or the resumed run's).
    cli.run_main(run, "run_pretraining", required=["input_file", "output_dir"])


if __name__ == "__main__":
    console_main()
