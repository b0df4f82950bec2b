"""What run an `output_dir` holds, so a rerun resumes it only with the same options.

Resuming is how an interrupted run goes on: rerun the same command. But a
rerun with other hyper-parameters into a folder that holds a finished run
would resume at the final step, train nothing and report the old scores.
So the first training run writes `run.json` (the task and the options that
decide what is trained); a training rerun whose options differ stops with
the differences, and an evaluation without training says what it scores.
"""

import json
import os

from absl import logging

from bert_tf.atomic_files import write_text
from bert_tf.errors import UsageError
from bert_tf.training.resume import original_checkpoint, training_checkpoints

RECORD_FILE = "run.json"
# The options that decide what a training run computes (not how fast).
_TRAINING_OPTIONS = ("init_checkpoint", "train_batch_size", "learning_rate", "num_train_epochs",
                     "warmup_proportion", "num_train_steps", "num_warmup_steps", "optimizer",
                     "gradient_accumulation_steps", "random_seed")


def run_record(task, options, train_steps):
    """The JSON-able description of a training run.

    >>> from bert_tf.tasks.run_options import RunOptions
    >>> class Toy:
    ...     name = "toy"
    ...     def record(self):
    ...         return {"task": "toy", "max_seq_length": 8}
    >>> record = run_record(Toy(), RunOptions(output_dir="/tmp/x", learning_rate=1e-4), 10)
    >>> record["task"], record["options"]["learning_rate"], record["train_steps"]
    ({'task': 'toy', 'max_seq_length': 8}, 0.0001, 10)
    """
    recorded = {name: getattr(options, name) for name in _TRAINING_OPTIONS}
    recorded["init_checkpoint"] = _absolute(options.init_checkpoint)
    return {"task": task.record(), "options": recorded, "train_steps": train_steps}


def _absolute(path):
    """A local path made absolute (the same start weights from any folder); others as given.

    >>> _absolute("gs://bucket/bert_model.ckpt"), _absolute(None)
    ('gs://bucket/bert_model.ckpt', None)
    >>> _absolute("model/bert_model.ckpt") == os.path.join(os.getcwd(), "model/bert_model.ckpt")
    True
    """
    if path is None or "://" in path:
        return path
    return os.path.abspath(path)


def _differences(old, new, prefix=""):
    keys = sorted(set(old) | set(new))
    for key in keys:
        a, b = old.get(key), new.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            yield from _differences(a, b, f"{prefix}{key}.")
        elif a != b:
            yield f"{prefix}{key}: {a!r} in the recorded run, {b!r} now"


def recorded_run(folder):
    """The run recorded in `folder` (its `run.json`, parsed), or None where there is none.

    Raises:
        UsageError: the record is there but does not read.
    """
    path = os.path.join(folder, RECORD_FILE)
    if not os.path.exists(path):
        return None
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as error:
        raise UsageError(f"{path}: unreadable run record ({error}); delete it to "
                         "use the checkpoints beside it anyway") from None


def check_run_record(output_dir, task, options, train_steps):
    """Refuses to resume another run; records a new one; says what an evaluation scores.

    Raises:
        UsageError: training into a folder whose checkpoints belong to a run
            with other options, or evaluating a folder with no checkpoint
            and no `init_checkpoint`.
    """
    path = os.path.join(output_dir, RECORD_FILE)
    checkpoints = training_checkpoints(output_dir) or (
        [(None, original_checkpoint(output_dir))] if original_checkpoint(output_dir) else [])
    latest = checkpoints[0][1] if checkpoints else None
    recorded = recorded_run(output_dir)
    if not options.do_train:
        if latest:
            logging.info("scoring %s (of the run recorded in %s)", latest,
                         path if recorded else "no run.json")
        elif options.init_checkpoint:
            logging.info("scoring --init_checkpoint=%s", options.init_checkpoint)
        else:
            raise UsageError(f"nothing to score: --output_dir={output_dir} holds no checkpoint "
                             "and no --init_checkpoint was given")
        return
    new = run_record(task, options, train_steps)
    if latest and recorded is not None:
        other_task = recorded.get("task", {}).get("task")
        if other_task != new["task"]["task"]:
            raise UsageError(f"--output_dir={output_dir} holds a run of task {other_task}, not "
                             f"{new['task']['task']}; use a new --output_dir")
        changes = list(_differences(recorded, json.loads(json.dumps(new))))
        if changes:
            raise UsageError(
                f"--output_dir={output_dir} holds a run with other options; resuming it would "
                f"not train what you asked ({'; '.join(changes)}). Use a new --output_dir, or "
                "rerun with the recorded options to resume it.")
        logging.info("resuming %s: the options match %s", latest, path)
    elif latest:
        logging.warning("resuming %s, whose run recorded no options (%s missing)", latest, path)
    else:
        write_text(path, json.dumps(new, indent=2, sort_keys=True))
