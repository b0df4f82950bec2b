"""Which checkpoint of an output folder a rerun resumes from.

`Trainer` writes `output_dir/ckpt-N.{index,data-*}` (object-based
checkpoints) and TensorFlow's `checkpoint` state file naming the newest.
The state file is a convenience, not the truth: a corrupt one reads as "no
checkpoint" (TensorFlow only logs a warning), and it may name a checkpoint
whose files are gone or truncated. So resuming scans the `ckpt-N.index`
files themselves and restores the newest one that reads completely. Newer
ones that do not read are moved to `unreadable_checkpoints/` (kept for
inspection, and out of the way of the names this run will write); when every
checkpoint is unreadable, resuming stops with an error instead of starting
again at step 0 over the earlier run's files.

A folder may instead hold a checkpoint written by the original code
(`model.ckpt-N`, variables named `bert/...` with Adam slots and
`global_step`), as the original README's commands leave behind;
`original_checkpoint` finds it so that its weights can be loaded by name.
"""

import os
import shutil

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints import READ_ERRORS, CheckpointError
from bert_tf.checkpoints.folders import (ORIGINAL_CHECKPOINT, TRAINING_CHECKPOINT,
                                         numbered_checkpoints)
from bert_tf.checkpoints.tf1 import is_training_checkpoint, read_checkpoint

UNREADABLE_FOLDER = "unreadable_checkpoints"
NON_FINITE_FOLDER = "nonfinite_checkpoints"


class ResumeError(CheckpointError):
    """The output folder holds checkpoints that this run cannot resume from."""


def training_checkpoints(folder):
    """`[(step, prefix)]` of the `ckpt-N` checkpoints in `folder`, newest first."""
    return numbered_checkpoints(folder, TRAINING_CHECKPOINT)


def newest_checkpoint(folder):
    """What a run in `folder` resumes or scores: its newest `ckpt-N`, else the newest
    `model.ckpt-N` of the original code (`original_checkpoint`), else None."""
    checkpoints = training_checkpoints(folder)
    return checkpoints[0][1] if checkpoints else original_checkpoint(folder)


def set_aside(prefix, subfolder):
    """Moves the files of checkpoint `prefix` into `subfolder` of its folder; returns it."""
    folder = os.path.dirname(prefix)
    target = os.path.join(folder, subfolder)
    os.makedirs(target, exist_ok=True)
    for path in tf.io.gfile.glob(prefix + ".*"):
        shutil.move(path, os.path.join(target, os.path.basename(path)))
    return target


def point_state_file_at(folder, prefix):
    """Makes the `checkpoint` state file name `prefix` as the newest (rewriting a bad one).

    With `prefix` None, the state file is removed.
    """
    state_file = os.path.join(folder, "checkpoint")
    if prefix is None:
        if tf.io.gfile.exists(state_file):
            tf.io.gfile.remove(state_file)
        return
    try:
        state = tf.train.get_checkpoint_state(folder)
    except tf.errors.OpError:
        state = None
    if state is None or os.path.basename(state.model_checkpoint_path) != os.path.basename(prefix):
        # Every older checkpoint too, oldest first: the state file is the list that
        # `CheckpointManager` deletes the oldest of, and one it forgot would stay for ever.
        # With their times: the manager deletes only those written after the state
        # file's `last_preserved_timestamp` (0 here).
        step = int(prefix.rsplit("-", 1)[1])
        kept = [older for number, older in reversed(training_checkpoints(folder))
                if number < step] + [prefix]
        tf.compat.v1.train.update_checkpoint_state(
            folder, prefix, all_model_checkpoint_paths=kept,
            all_model_checkpoint_timestamps=[
                tf.io.gfile.stat(path + ".index").mtime_nsec / 1e9 for path in kept])


def restore_newest_readable(checkpoint, folder, is_chief=True):
    """Restores into `checkpoint` the newest `ckpt-N` of `folder` that reads completely.

    Args:
        checkpoint: the run's `tf.train.Checkpoint`.
        folder: the output folder.
        is_chief: only the chief moves unreadable checkpoints aside and
            repairs the state file; other workers only read.

    Returns:
        The prefix restored, or None if `folder` holds no `ckpt-N.index`.

    Raises:
        ResumeError: every checkpoint is unreadable, or the newest readable
            one belongs to another kind of model or optimizer.
    """
    unreadable = []
    for _, prefix in training_checkpoints(folder):
        try:
            checkpoint.restore(prefix).assert_existing_objects_matched()
        except (AssertionError, ValueError) as error:
            raise ResumeError(
                f"{prefix}: this checkpoint is of another model or optimizer than this run "
                f"builds ({error}); use another --output_dir") from None
        except READ_ERRORS as error:
            if _reads_whole(prefix):  # the files are sound: the run is what differs
                raise ResumeError(
                    f"{prefix}: this checkpoint does not fit the model or optimizer this run "
                    f"builds{_loss_scaling_difference(checkpoint, prefix)} "
                    f"({str(error).splitlines()[0]}); rerun with the options it was written "
                    "with, or use another --output_dir") from None
            logging.warning("%s: unreadable, trying an older checkpoint (%s)", prefix,
                            str(error).splitlines()[0])
            unreadable.append(prefix)
            continue
        if is_chief:
            for bad in unreadable:
                target = set_aside(bad, UNREADABLE_FOLDER)
                logging.warning("moved the unreadable checkpoint %s to %s", bad, target)
            point_state_file_at(folder, prefix)
        return prefix
    if unreadable:
        raise ResumeError(
            f"{folder}: no checkpoint can be read ({', '.join(map(os.path.basename, unreadable))}"
            " are damaged or incomplete); move them away to start afresh, or use another "
            "--output_dir")
    return None


def _reads_whole(prefix):
    """Whether every tensor of checkpoint `prefix` reads: its files are whole.

    A restore also fails on a sound checkpoint of another model or optimizer
    (a dtype or shape that differs): that one must not be called damaged,
    nor be passed over for an older one.
    """
    try:
        reader = tf.train.load_checkpoint(prefix)
        for name in reader.get_variable_to_dtype_map():
            reader.get_tensor(name)
    except (*READ_ERRORS, ValueError):
        return False
    return True


_LOSS_SCALE = "optimizer/dynamic_scale/.ATTRIBUTES/VARIABLE_VALUE"


def _loss_scaling_difference(checkpoint, prefix):
    """Says so where the checkpoint and the run differ in loss scaling (`--mixed_precision`)."""
    optimizer = getattr(checkpoint, "optimizer", None)
    if optimizer is None:
        return ""
    run_scales = hasattr(optimizer, "dynamic_scale")
    try:
        saved_scales = _LOSS_SCALE in tf.train.load_checkpoint(prefix).get_variable_to_shape_map()
    except READ_ERRORS:
        return ""
    if saved_scales == run_scales:
        return ""
    return (": it was written with loss scaling (--mixed_precision=mixed_float16) and this run "
            "has none" if saved_scales else ": it was written without loss scaling and this "
            "run has it (--mixed_precision=mixed_float16)")


def original_checkpoint(folder):
    """The newest checkpoint written by the original code in `folder`, or None.

    That is a name-based `model.ckpt-N` (the original's Estimator runs), not
    an object-based checkpoint of ours.
    """
    for _, prefix in numbered_checkpoints(folder, ORIGINAL_CHECKPOINT):
        try:
            names = read_checkpoint(prefix).get_variable_to_shape_map()
        except CheckpointError as error:
            logging.warning("%s", error)
            continue
        if not is_training_checkpoint(names):
            return prefix
    return None
