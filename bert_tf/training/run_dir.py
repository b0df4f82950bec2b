"""One run per output folder, and no leftovers of interrupted writers in it.

Two runs writing checkpoints into the same `output_dir` would interleave
them, each resuming from the other's. `OutputDirLock` takes an exclusive
`fcntl.flock` on the folder itself and on `output_dir/.lock` for the life
of a run; a second run fails at once naming the holder (host, process id,
command line, start time, from `.lock`). The folder's own lock is what
stops a second run after someone deletes `.lock` mid-run (its new `.lock`
would be a new file, free to lock); `.lock`'s lock is what works on NFS,
where a folder cannot be locked. The kernel drops both when their holder
dies, however it dies, so a stale `.lock` never blocks a rerun. (flock is
advisory and local: on network file systems that do not support it, two
hosts are not kept apart.)

The runner takes the lock (`bert_tf.tasks.runner.run` for fine-tuning and
`run_pretraining`); `Trainer` does not, so that tests and notebooks can
build several trainers on one folder in one process. In a multi-worker run
only the chief takes it: the workers share the folder by design.

Writers in this package write under a temporary name and rename when done:
`NAME.tmp-PID*` (`atomic_files`: results, predictions, features, labels,
configs, TFRecords, original-format checkpoints) and TensorFlow's own
`ckpt-N_temp/` folders of training checkpoints. A writer killed mid-write
leaves these behind (tens of MB each for a BERT checkpoint).
`remove_leftovers` deletes the ones whose process is gone; under the lock
no other run can be writing in the folder.
"""

import contextlib
import datetime
import errno
import fcntl
import os
import re
import shutil
import socket
import sys

from absl import logging

from bert_tf.file_set import cannot_write
from bert_tf.leftover_files import left_by_dead_writer

LOCK_NAME = ".lock"
_HELD = object()  # `_lock_folder`'s answer where another process holds the folder
_CHECKPOINT_TEMP_FOLDER = re.compile(r"^ckpt-\d+_temp$")


class OutputDirInUseError(OSError):
    """Another run holds the lock of the output folder."""


def remove_leftovers(folder):
    """Deletes temporary files of dead writers and checkpoint `_temp` folders in `folder`.

    Call it only while holding the folder's `OutputDirLock` (a live run's
    `ckpt-N_temp/` folder carries no process id).

    Returns:
        The paths removed.

    Example:

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name in ("bert_model.ckpt.tmp-999999999.index", "ckpt-7_temp/",
    ...              f"part.tmp-{os.getpid()}", "ckpt-7.index"):
    ...     path = os.path.join(folder, name)
    ...     os.makedirs(path) if name.endswith("/") else open(path, "w").close()
    >>> sorted(os.path.basename(p) for p in remove_leftovers(folder))
    ['bert_model.ckpt.tmp-999999999.index', 'ckpt-7_temp']
    >>> sorted(os.listdir(folder))  # doctest: +ELLIPSIS
    ['ckpt-7.index', 'part.tmp-...']
    """
    removed = []
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isdir(path):
            if _CHECKPOINT_TEMP_FOLDER.match(name):
                shutil.rmtree(path, ignore_errors=True)
                removed.append(path)
            continue
        if left_by_dead_writer(name):
            os.remove(path)
            removed.append(path)
    for path in removed:
        logging.info("removed %s, left behind by an interrupted writer", path)
    return removed


class OutputDirLock:
    """Exclusive use of `output_dir` by this process, as a context manager.

    Entering creates the folder, takes the lock (or raises
    `OutputDirInUseError` naming the holder), records who holds it in
    `output_dir/.lock` and removes the leftovers of interrupted writers.

    Example:

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with OutputDirLock(folder):
    ...     OutputDirLock(folder).__enter__()  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    bert_tf.training.run_dir.OutputDirInUseError: ... is in use by process ... on host ...
    """

    def __init__(self, output_dir):
        self.output_dir = output_dir
        self.path = os.path.join(output_dir, LOCK_NAME)
        self._folder = None
        self._file = None

    def __enter__(self):
        os.makedirs(self.output_dir, exist_ok=True)
        folder = _lock_folder(self.output_dir)
        if folder is _HELD:
            raise self._in_use()
        self._folder = folder
        try:
            handle = open(self.path, "a+", encoding="utf-8")
        except OSError:
            self._release_folder()
            raise
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            self._release_folder()
            raise self._in_use() from None
        handle.seek(0)
        handle.truncate()
        started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
        try:
            handle.write(f"process {os.getpid()} on host {socket.gethostname()}, started "
                         f"{started}: {' '.join(sys.argv)}\n")
            handle.flush()
        except OSError as error:  # a full disk
            fcntl.flock(handle, fcntl.LOCK_UN)
            with contextlib.suppress(OSError):  # its flush of what did not fit fails again
                handle.close()
            self._release_folder()
            raise cannot_write(self.path, error) from None
        self._file = handle
        remove_leftovers(self.output_dir)
        return self

    def __exit__(self, *exc_info):
        self._file.seek(0)
        self._file.truncate()
        fcntl.flock(self._file, fcntl.LOCK_UN)
        self._file.close()
        self._file = None
        self._release_folder()
        return False

    def _in_use(self):
        """The error naming the holder, as its `.lock` records it."""
        try:
            with open(self.path, encoding="utf-8") as handle:
                holder = handle.read().strip() or "a process that has not written its name yet"
        except FileNotFoundError:
            holder = "a process whose .lock file was deleted"
        return OutputDirInUseError(f"output_dir {self.output_dir} is in use by {holder}; wait "
                                   "for that run to end or choose another --output_dir")

    def _release_folder(self):
        if self._folder is not None:
            os.close(self._folder)  # closing drops its lock
            self._folder = None


def _lock_folder(folder):
    """Takes an exclusive lock on `folder` itself.

    Returns:
        The locked descriptor; None where the file system cannot lock a
        folder (NFS: its locks need a file open for writing); `_HELD` where
        another process holds the lock.
    """
    descriptor = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(descriptor)
        return _HELD if error.errno == errno.EWOULDBLOCK else None
    return descriptor
