r"""Fine-tunes BERT on SQuAD 1.1 / 2.0 and answers questions (the original's runner).

    python run_squad.py --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --do_train=True \
      --train_file=$SQUAD_DIR/train-v1.1.json --do_predict=True \
      --predict_file=$SQUAD_DIR/dev-v1.1.json --train_batch_size=12 \
      --learning_rate=3e-5 --num_train_epochs=2.0 --max_seq_length=384 \
      --doc_stride=128 --output_dir=/tmp/squad_base/

Writes predictions.json, nbest_predictions.json and, with
--version_2_with_negative, null_odds.json into --output_dir; score them with
`python -m bert_tf.evaluate_squad`. --do_eval scores --predict_file's own
answers in the same run (eval_results.txt). Files may be gzip (.gz).

A left-to-right model (`"causal": true` in its bert_config.json, from
`run_pretraining.py --causal`) is fine-tuned left to right, as it was pretrained:
each position sees itself and the positions before it only. Remove the key to
use it with attention both ways. `--bilstm` puts a randomly initialised
BiLSTM over the encoder before the span layer, as the paper's "+ BiLSTM" row
did for that model (it works for any model): each position's logits then
depend on the whole text (docs/ORIGINAL_BEHAVIOUR.md).
"""

from absl import flags

from bert_tf.errors import UsageError
from bert_tf.scripts import cli, runner_flags
from bert_tf.tasks import runner
from bert_tf.tasks.squad import SquadOptions, SquadTask

FLAGS = flags.FLAGS
runner_flags.define_model_flags(max_seq_length=SquadOptions.max_seq_length)
runner_flags.define_phase_flags(data_dir=False)  # --train_file, --predict_file instead
runner_flags.define_runtime_flags()
runner_flags.define_bilstm_flags()
flags.DEFINE_string("train_file", None, "SQuAD json for training. E.g., train-v1.1.json")
flags.DEFINE_string("predict_file", None, "SQuAD json for predictions. E.g., dev-v1.1.json "
                    "or test-v1.1.json")
flags.DEFINE_integer("doc_stride", SquadOptions.doc_stride, "When splitting up a long "
                     "document into chunks, how much stride to take between chunks.",
                     lower_bound=1)
flags.DEFINE_integer("max_query_length", SquadOptions.max_query_length, "The maximum number "
                     "of tokens for the question; longer questions are truncated.",
                     lower_bound=1)
flags.DEFINE_integer("n_best_size", SquadOptions.n_best_size, "The number of n-best "
                     "predictions to generate in nbest_predictions.json.", lower_bound=1)
flags.DEFINE_integer("max_answer_length", SquadOptions.max_answer_length, "The maximum length "
                     "of an answer that can be generated (start and end are predicted "
                     "independently).", lower_bound=1)
flags.DEFINE_bool("verbose_logging", SquadOptions.verbose_logging, "Log every warning of the "
                  "answer alignment (a number of them are expected for a normal SQuAD "
                  "evaluation).")
flags.DEFINE_bool("version_2_with_negative", SquadOptions.version_2_with_negative, "The SQuAD "
                  "examples include questions without an answer (SQuAD 2.0).")
flags.DEFINE_float("null_score_diff_threshold", SquadOptions.null_score_diff_threshold,
                   "If null_score - best_non_null is greater than the threshold predict null.")


def run():
    """Trains, evaluates and predicts as the flags say; returns the eval results (or None)."""
    if FLAGS.max_seq_length <= FLAGS.max_query_length + 3:
        raise UsageError(f"The max_seq_length ({FLAGS.max_seq_length}) must be greater "
                         f"than max_query_length ({FLAGS.max_query_length}) + 3")
    if not FLAGS.version_2_with_negative:
        cli.refuse_unused_flags(("null_score_diff_threshold",),
                                "with --version_2_with_negative (SQuAD 2.0)")
    options = runner_flags.run_options(FLAGS)
    squad_options = SquadOptions(
        max_seq_length=FLAGS.max_seq_length, doc_stride=FLAGS.doc_stride,
        max_query_length=FLAGS.max_query_length, n_best_size=FLAGS.n_best_size,
        max_answer_length=FLAGS.max_answer_length,
        version_2_with_negative=FLAGS.version_2_with_negative,
        null_score_diff_threshold=FLAGS.null_score_diff_threshold,
        verbose_logging=FLAGS.verbose_logging)
    model_files = runner_flags.model_files(FLAGS)
    task = SquadTask(model_files, FLAGS.train_file, FLAGS.predict_file, squad_options,
                     FLAGS.do_lower_case, runner_flags.bilstm_units(FLAGS, model_files.config))
    return runner.run(task, options)


def console_main():
    cli.run_main(run, "run_squad", required=["output_dir"])


if __name__ == "__main__":
    console_main()
