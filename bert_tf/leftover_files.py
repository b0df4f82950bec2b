"""Temporary names, and what killed writers leave behind under them.

Every writer of the package writes `NAME.tmp-PID` beside `NAME` and renames
it into place when it is complete (`atomic_files`). A writer killed before
the rename (SIGKILL, a machine that went down) leaves its temporary file or
folder there, hundreds of MB for an export. The PID in the name tells
whose it is: one whose process is gone (`left_by_dead_writer`) is removed
by the next run in that folder (`training.run_dir.remove_leftovers`), or by
the next writer of the same name (`remove_left_behind`: exports, TFRecords,
extracted features and NER's feature caches, which are large). Readers of
a folder skip temporary names (`is_temporary`).
"""

import os
import re
import shutil

from absl import logging

# `NAME.tmp-PID`, `NAME.tmp-PID.index` (and `NAME.incomplete-PID`, the TFRecord
# temporaries of earlier versions, still cleaned up): group 1 is the PID.
_TEMPORARY_NAME = re.compile(r"\.(?:tmp|incomplete)-(\d+)(?:\.|$)")


def temporary_name(path):
    """The name `path` is written under until it is complete.

    >>> temporary_name("/out/predictions.json") == f"/out/predictions.json.tmp-{os.getpid()}"
    True
    """
    return f"{path}.tmp-{os.getpid()}"


def set_aside_name(path):
    """The name the file or folder standing at `path` is renamed to while a new one replaces
    it (`FileSet.replace`, an export's swap); deleted once the new one is in place.

    >>> set_aside_name("/out/model") == temporary_name("/out/model") + ".replaced"
    True
    """
    return f"{temporary_name(path)}.replaced"


def is_set_aside(name, path_name):
    """True for a `set_aside_name` of a file or folder named `path_name`, by any process.

    >>> is_set_aside("model.tmp-81.replaced", "model"), is_set_aside("model.tmp-81", "model")
    (True, False)
    """
    return name.startswith(f"{path_name}.tmp-") and name.endswith(".replaced")


def _process_alive(pid):
    """True if a process `pid` exists on this host (ours or another user's)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_temporary(name):
    """True for a name a writer uses until its file is complete (or a set's earlier member
    renamed aside, `FileSet.replace`), whether the writer still runs or not.

    >>> is_temporary("shard-0.tfrecord.tmp-81"), is_temporary("shard-0.tfrecord.tmp-81.replaced")
    (True, True)
    >>> is_temporary("shard-0.tfrecord")
    False
    """
    return bool(_TEMPORARY_NAME.search(name))


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
