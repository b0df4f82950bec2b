"""Fine-tunes BERT on sentence(-pair) classification: GLUE, XNLI, TFDS (the original's runner).

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
(with the task's GLUE metrics) and test_results.tsv (class probabilities,
or the score for regression) to `--output_dir`.
"""

import os

from absl import app, flags, logging

from bert_tf.scripts import finetuning_flags, runtime_flags
from bert_tf.tasks import classification
from bert_tf.tasks.finetuning import build_trainer, num_train_steps
from bert_tf.tasks.glue_data import get_task, tsv_task
from bert_tf.tasks.tfds_data import TfdsTask
from bert_tf.tasks.xnli_data import XnliTask
from bert_tf.tokenization import BertPreprocessor

FLAGS = flags.FLAGS
finetuning_flags.define_finetuning_flags()
flags.DEFINE_string("task_name", None, "The name of the task to train.")
flags.DEFINE_string("xnli_language", "zh", "XNLI language (the original fixed zh).")
flags.DEFINE_string("tfds_name", None, "Read the task from tensorflow-datasets instead of "
                    "--data_dir, e.g. glue/sst2 (must already be prepared).")
flags.DEFINE_string("tfds_data_dir", None, "tensorflow-datasets data_dir for --tfds_name.")


def _task():
    if FLAGS.tfds_name:
        return TfdsTask(FLAGS.tfds_name, FLAGS.tfds_data_dir)
    if not FLAGS.task_name:
        raise ValueError("--task_name (or --tfds_name) is required")
    if FLAGS.task_name.lower() == "xnli":
        return XnliTask(FLAGS.xnli_language)
    if FLAGS.task_name.lower() == "tsv":
        return tsv_task(FLAGS.data_dir)
    return get_task(FLAGS.task_name)


def _read_splits(task):
    """Reads every split the run needs, so bad data fails before training starts."""
    splits = {split: task.read(FLAGS.data_dir, split)
              for split in finetuning_flags.requested_splits()}
    for split, examples in splits.items():
        logging.info("%s %s: %d examples", task.name, split, len(examples))
    return splits


def _evaluate(task, trainer, examples, preprocessor):
    dataset = classification.examples_dataset(examples, preprocessor, FLAGS.eval_batch_size)
    logits = classification.predict_logits(trainer.model, dataset, FLAGS.jit_compile)
    results = classification.evaluation_results(
        task.name, logits, [e.label for e in examples], task.is_regression)
    return dict(results, global_step=int(trainer.global_step.numpy()))


def run():
    """Trains, evaluates and predicts as the flags say; returns the eval results (or None)."""
    config = finetuning_flags.check_model_flags()
    task = _task()
    splits = _read_splits(task)
    vocab_file = finetuning_flags.resolved_vocab_file()
    preprocessor = BertPreprocessor(vocab_file, seq_length=FLAGS.max_seq_length,
                                    do_lower_case=FLAGS.do_lower_case)
    strategy = runtime_flags.strategy_from_flags()
    runtime_flags.check_batch_split(FLAGS.train_batch_size, strategy)
    options = finetuning_flags.options_from_flags()
    steps = num_train_steps(len(splits.get("train", [])), FLAGS.train_batch_size,
                            FLAGS.num_train_epochs)
    num_labels = 1 if task.is_regression else len(task.labels)
    trainer = build_trainer(lambda: classification.build_classifier(config, num_labels),
                            classification.classification_objective(task.is_regression),
                            strategy, options, steps, FLAGS.init_checkpoint)
    if FLAGS.do_train:
        logging.info("training %d steps of batch %d", steps, FLAGS.train_batch_size)
        trainer.train(lambda context: classification.examples_dataset(
            splits["train"], preprocessor, options.micro_batch_size, is_training=True,
            seed=FLAGS.random_seed, input_context=context), steps)
        if trainer.is_chief:
            classification.export_classifier(trainer.model, config, vocab_file, task,
                                             FLAGS.output_dir)
    results = None
    if FLAGS.do_eval:
        results = _evaluate(task, trainer, splits["dev"], preprocessor)
        finetuning_flags.report_eval_results(trainer, results)
    if FLAGS.do_predict and trainer.is_chief:
        dataset = classification.examples_dataset(splits["test"], preprocessor,
                                                  FLAGS.predict_batch_size)
        logits = classification.predict_logits(trainer.model, dataset, FLAGS.jit_compile)
        classification.write_test_results(os.path.join(FLAGS.output_dir, "test_results.tsv"),
                                          logits, task.is_regression)
    return results


main = finetuning_flags.absl_main(run, "run_classifier")


def console_main():
    flags.mark_flags_as_required(["output_dir"])
    app.run(main)


if __name__ == "__main__":
    console_main()
