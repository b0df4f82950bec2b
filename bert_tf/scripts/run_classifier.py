r"""Fine-tunes BERT on sentence(-pair) classification: GLUE, XNLI, TFDS (the original's runner).

    python run_classifier.py --task_name=MRPC --do_train=true --do_eval=true \
      --data_dir=$GLUE_DIR/MRPC --vocab_file=$BERT_BASE_DIR/vocab.txt \
      --bert_config_file=$BERT_BASE_DIR/bert_config.json \
      --init_checkpoint=$BERT_BASE_DIR/bert_model.ckpt --max_seq_length=128 \
      --train_batch_size=32 --learning_rate=2e-5 --num_train_epochs=3.0 \
      --output_dir=/tmp/mrpc_output/

Tasks: cola, sst-2, mrpc, sts-b (regression), qqp, mnli, mnli-mm, qnli, rte,
wnli, xnli (`--xnli_language`), tsv (your own headed TSV files with a
labels.txt, see `glue_data.tsv_task`), or any prepared TFDS dataset
(`--tfds_name=glue/sst2 --tfds_data_dir=...`). Writes eval_results.txt
(the original's keys plus the task's GLUE metrics), test_results.tsv (class
probabilities, or the score for regression) and, after training, the model
as an original release folder with labels.txt.

A left-to-right model (`"causal": true` in its bert_config.json, from
`run_pretraining.py --causal`) is fine-tuned left to right, as it was
pretrained. Its [CLS] then sees only itself, so the classifier reads the
last real token (the final [SEP]), the one that has seen the whole text:
our choice, since the paper does not say (docs/ORIGINAL_BEHAVIOUR.md).
Remove the key to fine-tune it with attention both ways. `--bilstm` puts a
randomly initialised BiLSTM over the encoder (the paper's "+ BiLSTM" row,
for any model); the classifier then reads its two final states, each of
which has read the whole text, instead of the pooled output.
"""

from absl import flags

from bert_tf.errors import UsageError
from bert_tf.scripts import cli, runner_flags
from bert_tf.tasks import runner
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tasks.glue_data import get_task, tsv_task
from bert_tf.tasks.tfds_data import TfdsTask
from bert_tf.tasks.xnli_data import XnliTask

FLAGS = flags.FLAGS
runner_flags.define_model_flags()
runner_flags.define_phase_flags()
runner_flags.define_runtime_flags()
runner_flags.define_bilstm_flags()
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("xnli_language", "zh", "XNLI language (the original fixed zh).")
flags.DEFINE_string("tfds_name", None, "Read the task from tensorflow-datasets instead of "
                    "--data_dir, e.g. glue/sst2 (must already be prepared).")
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets data_dir for --tfds_name.")


def reader_from_flags():
    """The dataset reader `--task_name` (or `--tfds_name`) names."""
    if not FLAGS.tfds_name:
        cli.refuse_unused_flags(("tfds_data_dir",), "with --tfds_name")
    if (FLAGS.task_name or "").lower() != "xnli" or FLAGS.tfds_name:
        cli.refuse_unused_flags(("xnli_language",), "with --task_name=XNLI")
    if FLAGS.tfds_name:
        cli.refuse_unused_flags(("task_name", "data_dir"), "without --tfds_name (the "
                                "tensorflow-datasets dataset is the task and its data)")
        return TfdsTask(FLAGS.tfds_name, FLAGS.tfds_data_dir)
    if not FLAGS.task_name:
        raise UsageError("--task_name (or --tfds_name) is required")
    if FLAGS.task_name.lower() == "xnli":
        if not FLAGS.xnli_language.strip():
            raise UsageError("--xnli_language is empty; give a language code such as zh")
        return XnliTask(FLAGS.xnli_language)
    if FLAGS.task_name.lower() == "tsv":
        return tsv_task(FLAGS.data_dir)
    return get_task(FLAGS.task_name)


def run():
    """Trains, evaluates and predicts as the flags say; returns the eval results (or None)."""
    options = runner_flags.run_options(FLAGS)
    model_files = runner_flags.model_files(FLAGS)
    task = ClassificationTask(reader_from_flags(), FLAGS.data_dir, model_files,
                              FLAGS.max_seq_length, FLAGS.do_lower_case,
                              runner_flags.bilstm_units(FLAGS, model_files.config))
    return runner.run(task, options)


def console_main():
    cli.run_main(run, "run_classifier", required=["output_dir"])


if __name__ == "__main__":
    console_main()
