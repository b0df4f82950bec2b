"""`RunCheckpoints`: the checkpoints one training run writes to its output folder.

A run writes `output_dir/ckpt-N` every `save_checkpoints_steps` steps and
at its end (TensorFlow's `CheckpointManager`, which also deletes the oldest
beyond `max_to_keep`). These rules keep earlier work safe:

* a rerun resumes from the newest checkpoint there that reads, or loads
  the weights of a checkpoint the original code left (`resume`);
* a run never writes over a checkpoint it did not write itself: that is
  another run's (or this folder's earlier run's) work;
* a checkpoint whose weights led to a non-finite loss is moved to
  `nonfinite_checkpoints/`, so the newest one left is a good start;
* a save that fails (a full disk) removes the part it wrote (TensorFlow's
  `ckpt-N_temp/` folder, which would fill the disk further); the
  checkpoints before it stay as they were;
* a run whose output folder was deleted or replaced while it trained
  saves nothing more and stops (`_check_output_dir_in_place`).

Under `MultiWorkerMirroredStrategy` every worker must save (the save is a
collective), but only the chief's files are kept: the others write to a
scratch folder `output_dir/.worker_<task id>` and delete it. Every worker
resumes from `output_dir` itself, so it must be one folder that all share:
after restoring, the workers compare what each resumed from, and stop where
that differs (`WorkerAgreement.check_same_start`).

Example:

>>> import tempfile
>>> import tensorflow as tf
>>> step = tf.Variable(0, dtype=tf.int64)
>>> checkpoints = RunCheckpoints(tf.train.Checkpoint(global_step=step), None, step,
...                              tempfile.mkdtemp(), is_chief=True)
>>> checkpoints.restore_latest() is None
True
>>> _ = step.assign(3)
>>> checkpoints.save().endswith("ckpt-3")
True
>>> checkpoints.restore_latest()
3
"""

import os
import shutil
import weakref

import tensorflow as tf
from absl import logging

from bert_tf.file_set import cannot_write, discard
from bert_tf.checkpoints import CheckpointError, load_tf1_checkpoint
from bert_tf.checkpoints.folders import TRAINING_CHECKPOINT
from bert_tf.training import resume

# TensorFlow logs "Sharding callback duration: N microseconds" at INFO after every save:
# as many lines as the progress lines in a run that saves often, and nothing a user acts on.
logging.get_absl_logger().addFilter(
    lambda record: not str(record.msg).startswith("Sharding callback duration"))


class RunCheckpoints:
    """Saves and restores one run's `tf.train.Checkpoint` in its output folder.

    Args:
        checkpoint: the `tf.train.Checkpoint` of the model, optimizer and step.
        model: the Keras model, for the weights of an original-code checkpoint.
        global_step: the step variable; a checkpoint is numbered by it.
        output_dir: the run's output folder.
        is_chief: whether this process keeps the files (see the module).
        worker_id: a non-chief worker's task id, naming its scratch folder.
        max_to_keep: older checkpoints are deleted.
        workers: the `WorkerAgreement` of a multi-worker run, which compares
            what the workers resumed from; None in one process.
    """

    def __init__(self, checkpoint, model, global_step, output_dir, is_chief, worker_id=None,
                 max_to_keep=5, workers=None):
        self._checkpoint = checkpoint
        self._model = model
        self._global_step = global_step
        self._output_dir = output_dir
        self._is_chief = is_chief
        self._folder = output_dir if is_chief else os.path.join(output_dir, f".worker_{worker_id}")
        self._max_to_keep = max_to_keep
        self._workers = workers
        self._open_manager()
        self._written = set()  # checkpoint prefixes this run saved
        # The output folder this run writes to, held open; None until there is one (the
        # first save makes it), for URLs, and off the chief.
        self._output_dir_handle = self._open_output_dir()

    def _open_manager(self):
        """(Re)reads the state file: after `resume` repaired it, the manager must see that."""
        self._manager = tf.train.CheckpointManager(
            self._checkpoint, self._folder, max_to_keep=self._max_to_keep,
            checkpoint_name=TRAINING_CHECKPOINT)

    def _step(self):
        return int(self._global_step.numpy())

    def _open_output_dir(self):
        """A handle of the output folder, closed with this object; None (see `__init__`).

        Held open, a deleted folder keeps its inode: a folder made later at
        its path cannot get the same one, and pass for it.
        """
        if not self._is_chief or not os.path.isdir(self._output_dir):
            return None
        handle = os.open(self._output_dir, os.O_RDONLY | os.O_DIRECTORY)
        weakref.finalize(self, os.close, handle)
        return handle

    def _check_output_dir_in_place(self, prefix):
        """Refuses to save once the output folder this run wrote to was deleted or replaced.

        TensorFlow would make the folder again and write on, and the run
        would end as if nothing had happened: its checkpoints without the
        run's record (`run.json`), its TensorBoard scalars written on into
        the deleted file, and, where a new run was started in a folder of
        the same name, the two interleaving their checkpoints there (the
        lock, `run_dir.OutputDirLock`, is on the deleted folder).
        """
        if self._output_dir_handle is None:
            return
        try:
            in_place = os.path.samestat(os.fstat(self._output_dir_handle),
                                        os.stat(self._output_dir))
        except OSError:  # nothing there, or a file in the path
            in_place = False
        if not in_place:
            raise OSError(f"cannot write {prefix}: {self._output_dir} was deleted or replaced "
                          "while this run wrote to it; stopping rather than write there again")

    def restore_latest(self):
        """Resumes from the output folder: the newest readable checkpoint, else the original's.

        Every worker of a multi-worker run must call it: they compare what
        each resumed from, a collective.

        Returns:
            The step resumed at; 0 when only the weights of an original-code
            checkpoint (`model.ckpt-N`) were loaded; None when the folder
            holds no checkpoint.

        Raises:
            CheckpointError: the checkpoints there are all unreadable or do
                not fit this model.
            UsageError: the workers of a multi-worker run resumed from
                different checkpoints or steps (`output_dir` is not one
                folder they share).
        """
        resumed, step = self._restore_newest()
        if self._workers is not None:
            self._workers.check_same_start(self._output_dir, step or 0, resumed)
        return step

    def _restore_newest(self):
        """`(the prefix restored or None, the step resumed at as `restore_latest` says)`."""
        prefix = resume.restore_newest_readable(self._checkpoint, self._output_dir,
                                                self._is_chief)
        if prefix is not None:
            self._open_manager()
            logging.info("resumed from %s at step %d", prefix, self._step())
            return prefix, self._step()
        original = resume.original_checkpoint(self._output_dir)
        if original is None:
            return None, None
        load_tf1_checkpoint(self._model, original)
        logging.warning("%s was written by the original BERT code: loaded its model weights "
                        "by name; its optimizer state and step are not used (step 0)", original)
        return original, 0

    def prefix(self, step):
        """The path prefix of this run's checkpoint of `step`."""
        return os.path.join(self._folder, f"{TRAINING_CHECKPOINT}-{step}")

    def save(self):
        """Writes a checkpoint of the current step (every worker must call it); returns its prefix.

        Raises:
            CheckpointError: a checkpoint of this step exists that this run
                did not write (resume with `restore_latest` first).
            OSError: "cannot write PREFIX: reason" (a full disk, a read-only folder,
                an output folder deleted during the run).
        """
        prefix = self.prefix(self._step())
        if prefix in self._written:
            return prefix
        self._check_output_dir_in_place(prefix)
        if self._is_chief and tf.io.gfile.exists(prefix + ".index"):
            raise CheckpointError(
                f"{prefix} exists and was not written by this run; not overwriting it "
                "(resume from the output folder, or choose another output folder)")
        try:
            path = self._manager.save(checkpoint_number=self._step())
        except (OSError, tf.errors.OpError) as error:
            discard(f"{prefix}_temp")  # the shards written so far
            raise cannot_write(prefix, error) from None
        self._written.add(path)
        if self._output_dir_handle is None:
            self._output_dir_handle = self._open_output_dir()
        if not self._is_chief:
            shutil.rmtree(self._folder, ignore_errors=True)
        return path

    def set_aside_non_finite(self, step):
        """Moves this run's checkpoint of `step`, whose weights gave a non-finite value, aside.

        Only the chief moves, and only a checkpoint this run wrote; the state
        file then names the newest remaining one.

        Returns:
            `(the folder it was moved to, or None; the prefix of the newest
            checkpoint before `step`, or None)`.
        """
        moved_to = None
        poisoned = self.prefix(step)
        if self._is_chief and poisoned in self._written:
            moved_to = resume.set_aside(poisoned, resume.NON_FINITE_FOLDER)
            self._written.discard(poisoned)
        older = [prefix for number, prefix in resume.training_checkpoints(self._folder)
                 if number < step]
        last_good = older[0] if older else None
        if moved_to:
            resume.point_state_file_at(self._folder, last_good)
            self._open_manager()
        return moved_to, last_good
