"""Files written whole or not at all: under a temporary name, then renamed.

A run stopped mid-write (Ctrl-C, SIGTERM, a full disk) must neither leave a
truncated file under the name a user or the next run reads, nor destroy
the file an earlier run wrote there. Every writer of the package therefore
writes `NAME.tmp-PID` beside `NAME` and renames it over `NAME` when it is
complete (`written_whole`, or `publish` and `discard` for writers that stay
open across calls); on one file system the rename is atomic. A failed write
is reported by the name asked for (`cannot_write`), never the temporary
one. What a killed writer leaves behind (`left_by_dead_writer`) is removed
by the next run in that folder (`training.run_dir.remove_leftovers`), or by
the next writer of the same name (`remove_left_behind`: exports, TFRecords,
extracted features and NER's feature caches, which are large).
"""

import contextlib
import os
import re
import shutil

from absl import logging

from bert_tf.errors import tensorflow_error_line

# `NAME.tmp-PID`, `NAME.tmp-PID.index` (and `NAME.incomplete-PID`, the TFRecord
# temporaries of earlier versions, still cleaned up): group 1 is the PID.
_TEMPORARY_NAME = re.compile(r"\.(?:tmp|incomplete)-(\d+)(?:\.|$)")


def temporary_name(path):
    """The name `path` is written under until it is complete.

    >>> temporary_name("/out/predictions.json") == f"/out/predictions.json.tmp-{os.getpid()}"
    True
    """
    return f"{path}.tmp-{os.getpid()}"


def _process_alive(pid):
    """True if a process `pid` exists on this host (ours or another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def left_by_dead_writer(name):
    """True for a temporary name (`temporary_name`) of a process that has gone.

    >>> left_by_dead_writer("predictions.json.tmp-999999999"), left_by_dead_writer(
    ...     temporary_name("predictions.json")), left_by_dead_writer("predictions.json")
    (True, False, False)
    """
    match = _TEMPORARY_NAME.search(name)
    return bool(match) and not _process_alive(int(match.group(1)))


def remove_left_behind(path):
    """Removes the temporary files or folders that killed writers of `path` left beside it.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "train.npy")
    >>> for name in (path + ".tmp-999999999.npy", temporary_name(path)):
    ...     _ = open(name, "w")
    >>> [os.path.basename(p) for p in remove_left_behind(path)]
    ['train.npy.tmp-999999999.npy']
    """
    parent, name = os.path.split(os.path.abspath(path))
    removed = []
    for sibling in sorted(os.listdir(parent)) if os.path.isdir(parent) else ():
        if sibling.startswith(f"{name}.") and left_by_dead_writer(sibling):
            removed.append(os.path.join(parent, sibling))
            if os.path.isdir(removed[-1]):
                shutil.rmtree(removed[-1], ignore_errors=True)
            else:
                os.remove(removed[-1])
            logging.info("removed %s, left behind by an interrupted writer", removed[-1])
    return removed


@contextlib.contextmanager
def written_whole(path, suffix=""):
    """Yields the temporary name to write `path` under; renames it to `path` on success.

    On any failure in the block, Ctrl-C included, the temporary file (or
    folder) is removed and whatever stood at `path` is left as it was.
    `suffix` ends the temporary name, for writers that insist on one
    (`numpy`'s `.npy`). Local paths need no TensorFlow; URLs use `tf.io.gfile`.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "features.npy")
    >>> with written_whole(path, suffix=".npy") as temp:
    ...     _ = open(temp, "w").write("done")
    >>> open(path).read(), os.listdir(os.path.dirname(path))
    ('done', ['features.npy'])
    """
    temp = temporary_name(path) + suffix
    try:
        yield temp
        publish(temp, path)
    except BaseException:
        discard(temp)
        raise


def publish(temp, path):
    """Renames the complete temporary `temp` over `path` (atomic on one file system)."""
    if "://" in path:
        _tensorflow().io.gfile.rename(temp, path, overwrite=True)
    else:
        os.replace(temp, path)


def discard(temp):
    """Removes the temporary file or folder `temp`, if it is there."""
    if "://" in temp:
        gfile = _tensorflow().io.gfile
        if gfile.isdir(temp):
            gfile.rmtree(temp)
        elif gfile.exists(temp):
            gfile.remove(temp)
    elif os.path.isdir(temp):
        shutil.rmtree(temp, ignore_errors=True)
    elif os.path.exists(temp):
        os.remove(temp)


def write_text(path, text):
    """Writes `text` (UTF-8) to `path` whole (`written_whole`): a local file, or a URL (`gs://...`).

    Local files need no TensorFlow (`config.py` and the SQuAD scorer write
    with this); a URL is written with `tf.io.gfile`.

    Raises:
        OSError: naming `path` (not the temporary name) and the reason.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "eval_results.txt")
    >>> write_text(path, "loss = 1.5\\n")
    >>> open(path).read()
    'loss = 1.5\\n'
    """
    tf = _tensorflow() if "://" in path else None
    try:
        with written_whole(path) as temp:
            if tf:
                with tf.io.gfile.GFile(temp, "w") as f:
                    f.write(text)
            else:
                with open(temp, "w", encoding="utf-8") as f:
                    f.write(text)
    except OSError as error:
        raise cannot_write(path, error) from None
    except Exception as error:
        if tf and isinstance(error, tf.errors.OpError):
            raise cannot_write(path, error) from None
        raise


def cannot_write(path, error):
    """The `OSError` "cannot write PATH: reason" for `error`, a failed write of `path`.

    `error` is an `OSError` or TensorFlow's `OpError`, whose message names
    the temporary file and the op ("{{function_node ...}} PATH.tmp-7;
    No space left on device [Op:SaveV2]", and more lines): the user is told
    the name asked for and the reason alone (`_reason`).

    >>> str(cannot_write("/out/ckpt-3", OSError(28, "No space left on device")))
    'cannot write /out/ckpt-3: No space left on device'
    >>> class OpError(Exception):
    ...     message = "{{function_node f}} /out/ckpt-3_temp/part; File too large [Op:SaveV2]"
    >>> str(cannot_write("/out/ckpt-3", OpError()))
    'cannot write /out/ckpt-3: File too large'
    """
    return OSError(f"cannot write {path}: {_reason(error)}")


def _reason(error):
    """Why a file operation failed (`OSError` or `OpError`), without the file TensorFlow names.

    >>> _reason(FileNotFoundError(2, "No such file or directory", "/out/a.tmp-7"))
    'No such file or directory'
    """
    if isinstance(error, OSError):
        return error.strerror or str(error)
    return tensorflow_error_line(error).split("; ")[-1]


def copy_file(source, path):
    """Copies `source` to `path` whole (`written_whole`; local files or URLs).

    Raises:
        OSError: naming both files (not the temporary one) and the reason.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> write_text(os.path.join(folder, "vocab.txt"), "[PAD]\\n[UNK]\\n")
    >>> copy_file(os.path.join(folder, "vocab.txt"), os.path.join(folder, "copy.txt"))
    >>> open(os.path.join(folder, "copy.txt")).read().split()
    ['[PAD]', '[UNK]']
    """
    tf = _tensorflow()
    try:
        with written_whole(path) as temp:
            tf.io.gfile.copy(source, temp, overwrite=True)
    except tf.errors.OpError as error:
        raise OSError(f"cannot copy {source} to {path}: {_reason(error)}") from None


def prepare_folder_for(path):
    """Creates the folder `path` will be written to, and checks that it can be, before any work.

    A run that learns a vocabulary or computes features for an hour must
    not then fail on a folder that does not exist or cannot be written.

    Raises:
        OSError: "cannot write PATH: reason".

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "new", "vocab.txt")
    >>> prepare_folder_for(path)
    >>> os.path.isdir(os.path.dirname(path))
    True
    """
    folder = os.path.dirname(path)
    if not folder:
        folder = "."
    try:
        if "://" in path:
            _tensorflow().io.gfile.makedirs(folder)
            return
        os.makedirs(folder, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OSError(f"cannot write {path}: a file stands where its folder would be") from None
    except Exception as error:  # an OSError, or TensorFlow's OpError
        raise cannot_write(path, error) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OSError(f"cannot write {path}: {folder} is not writable")


def _tensorflow():
    """TensorFlow, imported only when a URL is written."""
    import tensorflow as tf
    return tf
