"""What an evaluation or prediction may score, judged by the model's recorded training.

An evaluation or prediction alone scores a trained model: the folder's own
(its newest `ckpt-N`, or the model a finished run exported) or the one
`--init_checkpoint` names. A model read otherwise than it was trained
(another task, labels, casing, SQuAD 2.0 or not, other model files) would
be scored on text it cannot read: refused for the folder's own model,
warned about for another folder's (a model may be scored on another task
on purpose). Settings that only shape the evaluation (sequence length,
windows) and config keys only training reads (dropout) may differ. Weights
the checkpoint lacks (a random head) are refused (`check_scored_weights`).
"""

import os

from absl import logging

from bert_tf.checkpoints import (CHECKPOINT_BASENAME, FINE_TUNING_BILSTM_KERNEL, POOLER_NAMES,
                                 CheckpointError, checkpoint_folder, is_huggingface)
from bert_tf.checkpoints.folders import ORIGINAL_CHECKPOINT, TRAINING_CHECKPOINT
from bert_tf.checkpoints.tf1 import resolve_checkpoint_prefix
from bert_tf.errors import UsageError
from bert_tf.tasks.run_record import RECORD_FILE, record_differences, recorded_run

# Task settings an evaluation of a trained model may set otherwise than its training.
_EVALUATION_SETTINGS = ("max_seq_length", "doc_stride", "max_query_length",
                        "max_predictions_per_seq", "dynamic_masking", "masking")
# A task setting only a feature-based run records (NER's): its model is a tagger over the
# features of a frozen encoder, its start weights.
_FROZEN_ENCODER = "feature_layers"
# Config keys that change nothing a trained model computes at inference.
_TRAINING_ONLY_CONFIG = ("hidden_dropout_prob", "attention_probs_dropout_prob",
                         "initializer_range")


def check_same_task(output_dir, recorded, new):
    """Refuses a folder whose recorded run is of another task than `new`'s, or of none."""
    other_task = recorded.get("task", {}).get("task")
    if other_task is None:
        raise UsageError(f"{os.path.join(output_dir, RECORD_FILE)}: the run record names no "
                         "task; delete it to use the checkpoints beside it anyway")
    if other_task != new["task"]["task"]:
        raise UsageError(f"--output_dir={output_dir} holds a run of task {other_task}, not "
                         f"{new['task']['task']}; use a new --output_dir")


def check_scored_weights(task_name, init_checkpoint, loaded, reads_pooled_output=True):
    """Refuses to evaluate or predict with weights `init_checkpoint` does not hold, or
    without the BiLSTM it holds over its encoder.

    A fine-tuning run starts from a pretrained encoder and initialises its
    task head at random, so a load leaves missing head weights as they are.
    An evaluation or prediction alone given such a checkpoint (the
    pretrained model, or another task's fine-tuned one) would write answers
    of a random head, and exit 0. A model fine-tuned with `--bilstm` scored
    without it would load its head (of the same shape, at the default size)
    over the encoder's outputs, which it never read.

    Args:
        task_name: the task the run scores, for the message.
        init_checkpoint: `--init_checkpoint`, which the model was loaded from.
        loaded: `initialize_from_checkpoint`'s `LoadReport` (None for a
            training checkpoint, which restores every model weight or fails).
        reads_pooled_output: the task's `Task.reads_pooled_output`; if False,
            a pooler left newly initialised does not count.

    Raises:
        UsageError: naming the first weight the checkpoint lacks, or the
            checkpoint's BiLSTM the model lacks.

    Example (a pretrained model's folder, given to a SQuAD prediction):

    >>> from bert_tf.checkpoints import LoadReport
    >>> check_scored_weights("squad", "uncased_L-12_H-768_A-12", LoadReport(
    ...     restored=["bert/pooler/dense/bias"], unused=[],
    ...     not_in_checkpoint=["cls/squad/output_bias", "cls/squad/output_weights"]))
    Traceback (most recent call last):
    ...
    bert_tf.errors.UsageError: --init_checkpoint=uncased_L-12_H-768_A-12 has no
    cls/squad/output_bias nor 1 more of the model's weights: it is not a trained squad
    model, ...
    """
    if loaded is not None and FINE_TUNING_BILSTM_KERNEL in loaded.unused:
        raise UsageError(
            f"--init_checkpoint={init_checkpoint} holds a BiLSTM over its encoder (a model "
            "fine-tuned with --bilstm), and this run's model has none; add --bilstm (with the "
            "--bilstm_units it was trained with) to score it")
    missing = [name for name in (loaded.not_in_checkpoint if loaded is not None else [])
               if reads_pooled_output or name not in POOLER_NAMES]
    if missing:
        more = f" nor {len(missing) - 1} more of the model's weights" if len(missing) > 1 else ""
        raise UsageError(
            f"--init_checkpoint={init_checkpoint} has no {missing[0]}{more}: it is not "
            f"a trained {task_name} model, and an evaluation or prediction with it would score "
            "randomly initialised weights. Give the --output_dir of a training run of this "
            "task, or train one with --do_train")


def check_scored_model(output_dir, latest, recorded, new, init_checkpoint):
    """Says what an evaluation or prediction scores, checked against its training's record.

    The folder's own model (a checkpoint in `output_dir`, or the model it
    exported there) read otherwise than it was trained is refused. A model
    from another folder that records its run is checked the same way, with
    a warning only: a model may be scored on another task on purpose.
    """
    scored = latest or init_checkpoint
    if latest and recorded is not None and _FROZEN_ENCODER in recorded.get("task", {}):
        _check_same_encoder(output_dir, recorded, new)
    elif latest:
        warn_if_init_checkpoint_ignored(output_dir, latest, init_checkpoint)
    if not scored:
        raise UsageError(f"nothing to score: --output_dir={output_dir} holds no checkpoint "
                         "and no --init_checkpoint was given")
    folder = output_dir if latest else checkpoint_folder(init_checkpoint)
    own = latest or os.path.realpath(folder) == os.path.realpath(output_dir)
    trained = recorded if latest else recorded_run(folder)
    if trained is not None:
        if own:
            check_same_task(output_dir, trained, new)
        changes = _evaluation_changes(trained, new)
        other_task = trained.get("task", {}).get("task")
        if other_task != new["task"]["task"]:
            changes.insert(0, f"task: {other_task!r} in the recorded run, "
                              f"{new['task']['task']!r} now")
        if changes and own:
            raise UsageError(
                f"--output_dir={output_dir} holds a model trained otherwise than this run "
                f"would read its data ({'; '.join(changes)}); rerun with the recorded "
                "settings")
        if changes:
            logging.warning("--init_checkpoint=%s was trained otherwise than this run reads "
                            "its data (%s)", init_checkpoint, "; ".join(changes))
        shaped = [f"{key}={new['task'][key]!r} (trained with {trained['task'][key]!r})"
                  for key in _EVALUATION_SETTINGS if key in trained.get("task", {})
                  and new["task"].get(key, trained["task"][key]) != trained["task"][key]]
        if shaped:
            logging.warning("scoring with %s: the answers may differ from the trained "
                            "settings'", ", ".join(shaped))
        if latest:
            _warn_if_training_unfinished(latest, trained)
    logging.info("scoring %s (of the run recorded in %s)", scored,
                 os.path.join(folder, RECORD_FILE) if trained else "no run.json")


def _check_same_encoder(output_dir, recorded, new):
    """Refuses to score a feature-based tagger on the features of other start weights.

    Its training checkpoints hold the tagger alone; the features it reads
    come from the frozen encoder of `--init_checkpoint`, which must be the
    one it was trained on (another scored the tagger on other features, with
    a warning that the other checkpoint was not what is scored).
    """
    def start(record):
        return {"start_weights": record.get("start_weights"),
                "options": {"init_checkpoint": record.get("options", {}).get("init_checkpoint")}}
    changes = record_differences(start(recorded), start(new))
    if changes:
        raise UsageError(f"--output_dir={output_dir} holds a tagger trained on the features of "
                         f"other start weights ({'; '.join(changes)}); give the "
                         "--init_checkpoint it was trained from")


def _evaluation_changes(recorded, new):
    """How a scoring run would read its data otherwise than the recorded model was trained
    (its config's training-only keys, dropout and initialisation, left out)."""
    fixed = [key for key in recorded.get("task", {}) if key not in _EVALUATION_SETTINGS]
    trained = {"task": {key: recorded["task"][key] for key in fixed},
               "model": _scored_model(recorded.get("model"))}
    asked = {"task": {key: new["task"].get(key) for key in fixed},
             "model": _scored_model(new.get("model"))}
    return record_differences(trained, asked)


def _scored_model(model):
    """A record's model less the config keys that only training reads."""
    if not isinstance(model, dict) or not isinstance(model.get("bert_config"), dict):
        return model
    config = {key: value for key, value in model["bert_config"].items()
              if key not in _TRAINING_ONLY_CONFIG}
    return dict(model, bert_config=config)


def warn_if_init_checkpoint_ignored(output_dir, scored, init_checkpoint):
    """Warns where `--init_checkpoint` names another model than the folder's own it scores.

    In a folder with a trained model (its newest `ckpt-N`, or the model a
    finished run exported), an evaluation or prediction scores that model,
    as the original does; an `--init_checkpoint` of the start weights or of
    an earlier checkpoint is not what is scored.
    """
    if not init_checkpoint:
        return
    folder = os.path.realpath(output_dir)
    if os.path.realpath(init_checkpoint) not in (
            folder, os.path.realpath(scored), os.path.join(folder, CHECKPOINT_BASENAME)):
        logging.warning("--init_checkpoint=%s is not the model this run scores: --output_dir "
                        "holds a trained model, and an evaluation or prediction scores it, %s "
                        "(as the original does). To score --init_checkpoint, give a new "
                        "--output_dir", init_checkpoint, scored)


def _warn_if_training_unfinished(latest, trained):
    """Warns where the folder's model to score is of a step before its training's end.

    A training run stopped by SIGTERM (or killed) leaves its last `ckpt-N`;
    an evaluation or prediction alone then scores that model, as the
    original does, though the rerun the stop message asks for (the same
    command) would have finished training first.
    """
    step, steps = int(latest.rsplit("-", 1)[1]), trained.get("train_steps")
    if isinstance(steps, int) and step < steps:
        logging.warning("%s is of step %d of the %d steps its run trains (%s): its training "
                        "stopped early, and this scores that unfinished model; rerun the "
                        "training command (with --do_train) to finish it first", latest, step,
                        steps, RECORD_FILE)


def scored_step(init_checkpoint):
    """The training step of the model `init_checkpoint` names, for `eval_results.txt`.

    A run's `ckpt-N` is of step N, the `bert_model.ckpt` a finished run
    exported of the steps its `run.json` records; a release's model, or a
    HuggingFace one, is of no step of ours (None). An evaluation alone of
    another folder's trained model reported `global_step = 0`.
    """
    if not init_checkpoint or is_huggingface(init_checkpoint):
        return None
    try:
        prefix = resolve_checkpoint_prefix(init_checkpoint)
    except CheckpointError:  # the load names it
        return None
    name, _, number = os.path.basename(prefix).rpartition("-")
    if name in (TRAINING_CHECKPOINT, ORIGINAL_CHECKPOINT) and number.isdigit():
        return int(number)
    if os.path.basename(prefix) == CHECKPOINT_BASENAME:
        steps = (recorded_run(os.path.dirname(prefix) or ".") or {}).get("train_steps")
        return steps if isinstance(steps, int) else None
    return None
