"""Fine-tunes BERT on SWAG multiple choice (the paper's section 4.4).

    python run_swag.py --data_dir=$SWAG_DIR --vocab_file=$BERT_DIR/vocab.txt \
      --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --do_train --do_eval \
      --max_seq_length=80 --train_batch_size=16 --learning_rate=2e-5 \
      --num_train_epochs=3.0 --output_dir=/tmp/swag_output/

`--data_dir` holds SWAG's `train.csv`, `val.csv` and `test.csv`. Writes
eval_results.txt (eval_accuracy, eval_loss, global_step) and
test_results.tsv (the probability of each ending, one line per example).
"""

import os

from absl import app, flags, logging

from bert_tf.scripts import finetuning_flags, runtime_flags
from bert_tf.tasks import classification, multiple_choice
from bert_tf.tasks.finetuning import build_trainer, num_train_steps
from bert_tf.tasks.swag_data import NUM_CHOICES, read_swag
from bert_tf.tokenization import BertPreprocessor

FLAGS = flags.FLAGS
finetuning_flags.define_finetuning_flags()
FILES = {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}


def run():
    """Trains, evaluates and predicts as the flags say; returns the eval results (or None)."""
    config = finetuning_flags.check_model_flags()
    splits = {s: read_swag(os.path.join(FLAGS.data_dir or "", FILES[s]))
              for s in finetuning_flags.requested_splits()}
    preprocessor = BertPreprocessor(finetuning_flags.resolved_vocab_file(),
                                    seq_length=FLAGS.max_seq_length,
                                    do_lower_case=FLAGS.do_lower_case)
    strategy = runtime_flags.strategy_from_flags()
    runtime_flags.check_batch_split(FLAGS.train_batch_size, strategy)
    options = finetuning_flags.options_from_flags()
    steps = num_train_steps(len(splits.get("train", [])), FLAGS.train_batch_size,
                            FLAGS.num_train_epochs)
    trainer = build_trainer(
        lambda: multiple_choice.build_multiple_choice_model(config, NUM_CHOICES,
                                                            FLAGS.max_seq_length),
        classification.classification_objective(), strategy, options, steps,
        FLAGS.init_checkpoint)
    if FLAGS.do_train:
        logging.info("training %d steps of batch %d", steps, FLAGS.train_batch_size)
        trainer.train(lambda context: multiple_choice.choices_dataset(
            splits["train"], preprocessor, options.micro_batch_size, is_training=True,
            seed=FLAGS.random_seed, input_context=context), steps)

    def logits_of(examples, batch_size):
        dataset = multiple_choice.choices_dataset(examples, preprocessor, batch_size)
        return classification.predict_logits(trainer.model, dataset, FLAGS.jit_compile)

    results = None
    if FLAGS.do_eval:
        results = classification.evaluation_results(
            "swag", logits_of(splits["dev"], FLAGS.eval_batch_size),
            [e.label for e in splits["dev"]])
        results["global_step"] = int(trainer.global_step.numpy())
        finetuning_flags.report_eval_results(trainer, results)
    if FLAGS.do_predict and trainer.is_chief:
        classification.write_test_results(
            os.path.join(FLAGS.output_dir, "test_results.tsv"),
            logits_of(splits["test"], FLAGS.predict_batch_size), is_regression=False)
    return results


main = finetuning_flags.absl_main(run, "run_swag")


def console_main():
    flags.mark_flags_as_required(["output_dir"])
    app.run(main)


if __name__ == "__main__":
    console_main()
