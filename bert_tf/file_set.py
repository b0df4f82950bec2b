"""`FileSet`: files read together, replaced all or none.

Files that are read together (SQuAD's predictions.json, nbest_predictions.json
and null_odds.json; a checkpoint's .index and .data; the shards of one
create_pretraining_data run) are one `FileSet`: every member is written
under its temporary name (`NAME.tmp-PID`) first, and only once all are
complete are they renamed, so a failure while writing (a full disk on the
third file) leaves the earlier set as it was and no temporary file. Several
renames cannot be one atomic step; the set's earlier members are renamed
aside first, so its names never hold old and new members together (see
`FileSet.replace`). A single file is a set of one (`atomic_files`).

Here too are the steps every writer of a temporary file takes: `publish`
(rename it into place) and `discard` (remove it), and `cannot_write`, the
error that names the file asked for, never the temporary one.
"""

import contextlib
import errno
import os
import shutil
import sys

from bert_tf.errors import tensorflow_error_line
from bert_tf.leftover_files import set_aside_name, temporary_name


class FileSet:
    """Files read together, replaced all or none.

    Each member is written under a temporary name (`add`, `write_text`,
    `copy_file`); leaving the `with` block renames them all into place
    (`replace`), leaving it with an exception removes them (`discard`). So
    a failure while writing any member (a full disk) leaves the earlier set
    whole, and no temporary file. A member this run does not write
    (SQuAD 1.1's `null_odds.json`) is `drop`ped: an earlier run's file of
    that name is removed with the set rather than left beside the new one.

    Raises:
        OSError: "cannot write PATH: reason", naming the member, from the
            writes here and from `replace`.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with FileSet() as files:
    ...     files.write_text(os.path.join(folder, "predictions.json"), "{}")
    ...     files.write_text(os.path.join(folder, "null_odds.json"), "{}")
    >>> with FileSet() as files:
    ...     files.write_text(os.path.join(folder, "predictions.json"), '{"q": "a"}')
    ...     files.drop(os.path.join(folder, "null_odds.json"))
    >>> os.listdir(folder)
    ['predictions.json']
    """

    def __init__(self):
        self._members = []  # (temporary name, path), in the order added
        self._dropped = []

    def add(self, path, temp=None, suffix=""):
        """Adds member `path`; returns the temporary name the caller writes it under.

        `temp`: the name the caller's writer picks (a checkpoint's
        `PREFIX.tmp-PID.index`); by default `temporary_name(path) + suffix`.
        """
        temp = temp or temporary_name(path) + suffix
        self._members.append((temp, path))
        return temp

    def drop(self, path):
        """Makes `path` a member this run does not write: a file there is removed with the set."""
        self._dropped.append(path)

    def write_text(self, path, text):
        """Adds member `path`, `text` (UTF-8) written under its temporary name."""
        temp = self.add(path)
        try:
            if "://" in path:
                with _tensorflow().io.gfile.GFile(temp, "w") as f:
                    f.write(text)
            else:
                with open(temp, "w", encoding="utf-8") as f:
                    f.write(text)
        except Exception as error:
            if _file_error(error):
                raise cannot_write(path, error) from None
            raise

    def copy_file(self, source, path):
        """Adds member `path`, a copy of `source` (local files or URLs).

        Raises:
            OSError: naming both files (not the temporary one) and the reason.
        """
        temp = self.add(path)
        tf = _tensorflow()
        try:
            tf.io.gfile.copy(source, temp, overwrite=True)
        except tf.errors.OpError as error:
            raise OSError(f"cannot copy {source} to {path}: {_reason(error)}") from None

    def replace(self):
        """Renames every member into place and removes the dropped ones: all, or none.

        One member is renamed over its earlier file in one atomic step.
        Several cannot be: the earlier members (and dropped ones) are first
        renamed aside (`NAME.tmp-PID.replaced`), then the new ones renamed
        in, the first added last (a reader waiting for it finds the others
        there), and the earlier ones deleted. So the set's names never hold
        old and new members together: a reader finds the earlier set, the
        new one, or, in the microseconds between renames, part of one (a
        missing file, which fails loudly, where a stale one would be read as
        new). A rename that fails puts the earlier set back; a process killed
        between the renames leaves part of the new set, and the earlier
        members under their aside names, which the next run removes
        (`left_by_dead_writer`). A folder where a member file goes (someone
        else's) stops the set before any rename, and is left as it is.

        Raises:
            OSError: "cannot write PATH: reason"; the temporary files are removed.
        """
        aside, published, path = [], [], None
        try:
            if len(self._members) > 1 or self._dropped:
                for temp, path in self._members + [(None, dropped) for dropped in self._dropped]:
                    if not _exists(path) or (temp is None and _is_dir(path)):
                        continue  # a folder where a dropped file would be is no member
                    if _is_dir(path) and not _is_dir(temp):
                        raise IsADirectoryError(errno.EISDIR, "Is a directory")
                    aside.append((path, set_aside_name(path)))
                    publish(path, aside[-1][1])
            for temp, path in reversed(self._members):
                publish(temp, path)
                published.append(path)
        except BaseException as error:
            for new in published:
                discard(new)
            for earlier, set_aside in reversed(aside):
                with contextlib.suppress(Exception):
                    publish(set_aside, earlier)
            self.discard()
            if _file_error(error):
                raise cannot_write(path, error) from None
            raise
        for _, set_aside in aside:
            discard(set_aside)

    def discard(self):
        """Removes the members' temporary files (or folders); the earlier set stays."""
        for temp, _ in self._members:
            discard(temp)

    def __enter__(self):
        return self

    def __exit__(self, error_type, error, traceback):
        if error_type is None:
            self.replace()
        else:
            self.discard()


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


def _exists(path):
    """Whether `path` is there (a local file or folder, or a URL)."""
    return _tensorflow().io.gfile.exists(path) if "://" in path else os.path.lexists(path)


def _is_dir(path):
    """Whether `path` is a folder (local, or a URL)."""
    return _tensorflow().io.gfile.isdir(path) if "://" in path else os.path.isdir(path)


def _file_error(error):
    """Whether `error` is a failed file operation: an `OSError`, or TensorFlow's `OpError`."""
    tf = sys.modules.get("tensorflow")
    return isinstance(error, OSError) or (tf is not None and isinstance(error, tf.errors.OpError))


def _tensorflow():
    """TensorFlow, imported only when a URL is written."""
    import tensorflow as tf
    return tf
