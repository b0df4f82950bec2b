"""What every worker of a multi-worker run must run alike, compared before any work.

The runner gathers each worker's `worker_settings` and, where one differs,
stops every worker, naming the settings that differ
(`training.worker_agreement`).
"""

from bert_tf.tasks.run_record import GROWING_DATA, examples_sha256


def worker_settings(task, record, options, splits):
    """`{name: value}` of what every worker of a multi-worker run must run alike.

    The training record (`run_record`: task, options, model, training data,
    steps) and what the phases read: another learning rate or step count on
    one worker would silently train another model than the chief saves.

    Each host may keep its files elsewhere, so files are compared by what
    they hold, never by their paths: the start weights by their identity
    (`checkpoints.weights_identity`; by path only where they do not read),
    the vocabulary, config and examples by digest. `output_dir` is not
    compared: it is one folder all workers share, which each host may mount
    at another path (what each worker resumed from there is compared once
    restored: `RunCheckpoints.restore_latest`). Pretraining's input files, of
    any size, are not read whole to be digested: its training and evaluation
    files are compared by their sizes and first and last MiB
    (`Task.compared_examples`), the training files as the list `run.json`
    keeps (`Task.training_data`).
    """
    settings = dict(record["options"], **record["task"], train_steps=record["train_steps"])
    settings["init_checkpoint"] = record["start_weights"] or record["options"]["init_checkpoint"]
    model = record.get("model") or {}
    settings.update(bert_config=model.get("bert_config"), vocabulary=model.get("vocab_sha256"),
                    training_data=record.get("training_data_sha256") or record.get(GROWING_DATA))
    for name in ("do_train", "do_eval", "do_predict", "eval_batch_size", "predict_batch_size",
                 "max_eval_steps", "mixed_precision"):
        settings[name] = getattr(options, name)
    for split, name in (("dev", "evaluation_data"), ("test", "prediction_data")):
        if split in splits:
            settings[name] = examples_sha256(task.compared_examples(splits[split]))
    return settings
