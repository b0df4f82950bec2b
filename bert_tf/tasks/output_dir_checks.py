"""What a run may do with the `output_dir` it is given, judged by the folder's `run.json`.

Resuming is how an interrupted run goes on: rerun the same command. But a
rerun with other hyper-parameters into a folder that holds a finished run
would resume at the final step, train nothing and report the old scores.
So a training rerun whose record (`run_record`) differs from the folder's
stops with the differences; only how each step's batch is split into
micro-batches may change, and pretraining's input files may grow. What an
evaluation or prediction alone may score is `scored_model_checks`'.
"""

import json
import os

import tensorflow as tf
from absl import logging

from bert_tf.atomic_files import write_text
from bert_tf.checkpoints import CHECKPOINT_BASENAME
from bert_tf.errors import UsageError
from bert_tf.tasks.run_record import (GROWING_DATA, RECORD_FILE, comparable, record_differences,
                                      recorded_run)
from bert_tf.tasks.scored_model_checks import check_same_task, check_scored_model
from bert_tf.training.resume import newest_checkpoint

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
        check_scored_model(output_dir, latest, recorded, new, options.init_checkpoint)
        return
    if latest and recorded is not None:
        check_same_task(output_dir, recorded, new)
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
