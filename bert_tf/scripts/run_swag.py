r"""Fine-tunes BERT on SWAG multiple choice (the paper's section 4.4).

    python run_swag.py --data_dir=$SWAG_DIR --vocab_file=$BERT_DIR/vocab.txt \
      --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --do_train --do_eval \
      --max_seq_length=80 --train_batch_size=16 --learning_rate=2e-5 \
      --num_train_epochs=3.0 --output_dir=/tmp/swag_output/

`--data_dir` holds SWAG's `train.csv`, `val.csv` and `test.csv`. Writes
eval_results.txt (eval_accuracy, eval_loss, loss, global_step),
test_results.tsv (the probability of each ending, one line per example) and,
after training, the model as an original release folder; `--export_dir`
adds a SavedModel that picks the ending of raw text (docs/SERVING.md,
"Multiple choice").

A left-to-right model (`"causal": true` in its bert_config.json, from
`run_pretraining.py --causal`) is fine-tuned left to right, as it was
pretrained. Its [CLS] then sees only itself, so each ending is scored from
the last real token (the final [SEP]), the one that has seen the whole
text: our choice, since the paper does not say (docs/ORIGINAL_BEHAVIOUR.md).
Remove the key to fine-tune it with attention both ways. `--bilstm` puts a
randomly initialised BiLSTM over the encoder (the paper's "+ BiLSTM" row, for
any model); each ending is then scored from its two final states.
"""

from absl import flags

from bert_tf.scripts import cli, runner_flags
from bert_tf.tasks import runner
from bert_tf.tasks.multiple_choice import SwagTask

FLAGS = flags.FLAGS
runner_flags.define_model_flags()
runner_flags.define_phase_flags()
runner_flags.define_runtime_flags()
runner_flags.define_bilstm_flags()


def run():
    """Trains, evaluates and predicts as the flags say; returns the eval results (or None)."""
    options = runner_flags.run_options(FLAGS)
    model_files = runner_flags.model_files(FLAGS)
    task = SwagTask(FLAGS.data_dir, model_files, FLAGS.max_seq_length, FLAGS.do_lower_case,
                    runner_flags.bilstm_units(FLAGS, model_files.config))
    return runner.run(task, options)


def console_main():
    cli.run_main(run, "run_swag", required=["output_dir"])


if __name__ == "__main__":
    console_main()
