"""What a run may do with the `output_dir` it is given, judged by the folder's `run.json`.

Resuming is how an interrupted run goes on: rerun the same command. But a
rerun with other hyper-parameters into a folder that holds a finished run
would resume at the final step, train nothing and report the old scores.
So a training rerun whose record (`run_record`) differs from the folder's
stops with the differences; only how each step's batch is split into
micro-batches may change. So does an evaluation or prediction of the
folder's model whose task settings differ where the model depends on them
(another task, labels, casing, SQuAD 2.0 or not) or whose model files
differ: it would score the model on text it cannot read. Settings that
only shape the evaluation (sequence length, windows) may differ.
"""

import json
import os

import tensorflow as tf
from absl import logging

from bert_tf.atomic_files import write_text
from bert_tf.checkpoints import (CHECKPOINT_BASENAME, FINE_TUNING_BILSTM_KERNEL, POOLER_NAMES,
                                 checkpoint_folder)
from bert_tf.errors import UsageError
from bert_tf.tasks.run_record import (GROWING_DATA, RECORD_FILE, comparable, record_differences,
                                      recorded_run)
from bert_tf.training.resume import newest_checkpoint

# Task settings an evaluation of a trained model may set otherwise than its training.
_EVALUATION_SETTINGS = ("max_seq_length", "doc_stride", "max_query_length",
                        "max_predictions_per_seq", "dynamic_masking", "masking")
# Training options a resumed run may change: how each step's batch is split into
# micro-batches. Every step still sums the gradient of the same examples, and the
# data resumes after the examples trained on (`input_feeds.skipping`), so a run
# moved to a device with less memory goes on as it would have.
_RESUMABLE_OPTIONS = ("gradient_accumulation_steps",)


def check_run_record(output_dir, record, options):
    """Refuses to resume another run; records a new one; says what an evaluation scores.

    Args:
        output_dir: the run's folder.
        record: this run's `run_record`.
        options: its `RunOptions` (the phases, the start weights).

    Raises:
        UsageError: training into a folder whose checkpoints belong to a run
            with other options, or evaluating a folder with no checkpoint
            and no `init_checkpoint`.
    """
    path = os.path.join(output_dir, RECORD_FILE)
    latest = newest_checkpoint(output_dir)
    recorded = recorded_run(output_dir)
    new = comparable(record)
    if not options.do_train:
        _check_scored_model(output_dir, latest, recorded, new, options.init_checkpoint)
        return
    if latest and recorded is not None:
        _check_same_task(output_dir, recorded, new)
        _check_data_only_grew(output_dir, recorded, new)
        changes = record_differences(_fixed_on_resume(recorded), _fixed_on_resume(new))
        if changes:
            raise UsageError(
                f"--output_dir={output_dir} holds a run with other options; resuming it would "
                f"not train what you asked ({'; '.join(changes)}). Use a new --output_dir, or "
                "rerun with the recorded options to resume it.")
        logging.info("resuming %s: the options match %s", latest, path)
        for name in _RESUMABLE_OPTIONS:
            before, now = recorded.get("options", {}).get(name), new["options"][name]
            if before is not None and before != now:
                logging.info("--%s=%s, where the recorded run had %s: each step trains on the "
                             "same examples", name, now, before)
    elif latest:
        logging.warning("resuming %s, whose run recorded no options (%s missing)", latest, path)
    else:
        _check_no_finished_model(output_dir)
        write_text(path, json.dumps(new, indent=2, sort_keys=True))


# Config keys that change nothing a trained model computes at inference.
_TRAINING_ONLY_CONFIG = ("hidden_dropout_prob", "attention_probs_dropout_prob",
                         "initializer_range")


def _fixed_on_resume(record):
    """`record` less the options a resumed run may change (`_RESUMABLE_OPTIONS`) and the
    data it may add to (`GROWING_DATA`, `_check_data_only_grew`).

    >>> _fixed_on_resume({"options": {"learning_rate": 1e-4, "gradient_accumulation_steps": 2},
    ...                   "training_data_parts": ["a"]})
    {'options': {'learning_rate': 0.0001}}
    """
    options = {name: value for name, value in record.get("options", {}).items()
               if name not in _RESUMABLE_OPTIONS}
    return {**{key: value for key, value in record.items() if key != GROWING_DATA},
            "options": options}


def _check_data_only_grew(output_dir, recorded, new):
    """Refuses a resume whose training data lacks a part the recorded run trained on.

    Pretraining's input files may grow between resumes; another corpus, or
    a file written over, would be trained on as if it were the same run.
    A record without the parts (older versions) is not checked.
    """
    trained = recorded.get(GROWING_DATA)
    if not isinstance(trained, list):
        return
    given = set(new.get(GROWING_DATA) or ())
    missing = [part for part in trained if part not in given]
    if missing:
        raise UsageError(
            f"--output_dir={output_dir} holds a run trained on input files this run does not "
            f"read ({len(missing)} of its {len(trained)}, compared by what they hold, not "
            "their paths); resuming would train on other data. Give its files (more may be "
            "added), or use a new --output_dir")


def _check_no_finished_model(output_dir):
    """Refuses to train afresh over a model a finished run (or a release) left in `output_dir`.

    Its training checkpoints (`ckpt-N`) are for resuming, and users delete
    them; the model it exported stays, and a new run would replace it.
    """
    model = os.path.join(output_dir, CHECKPOINT_BASENAME)
    if tf.io.gfile.exists(model + ".index"):
        raise UsageError(
            f"--output_dir={output_dir} holds a trained model ({CHECKPOINT_BASENAME}) and no "
            "training checkpoint to resume; training there would replace it. Use a new "
            f"--output_dir (with --init_checkpoint={model} to train on from it), or move the "
            "model away")


def _check_same_task(output_dir, recorded, new):
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


def _check_scored_model(output_dir, latest, recorded, new, init_checkpoint):
    """Says what an evaluation or prediction scores, checked against its training's record.

    The folder's own model (a checkpoint in `output_dir`, or the model it
    exported there) read otherwise than it was trained is refused. A model
    from another folder that records its run is checked the same way, with
    a warning only: a model may be scored on another task on purpose.
    """
    scored = latest or init_checkpoint
    if latest:
        warn_if_init_checkpoint_ignored(output_dir, latest, init_checkpoint)
    if not scored:
        raise UsageError(f"nothing to score: --output_dir={output_dir} holds no checkpoint "
                         "and no --init_checkpoint was given")
    folder = output_dir if latest else checkpoint_folder(init_checkpoint)
    own = latest or os.path.realpath(folder) == os.path.realpath(output_dir)
    trained = recorded if latest else recorded_run(folder)
    if trained is not None:
        if own:
            _check_same_task(output_dir, trained, new)
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
