"""Files written whole or not at all: under a temporary name, then renamed.

A run stopped mid-write (Ctrl-C, SIGTERM, a full disk) must neither leave a
truncated file under the name a user or the next run reads, nor destroy
the file an earlier run wrote there. Every writer of the package therefore
writes `NAME.tmp-PID` beside `NAME` and renames it over `NAME` when it is
complete; on one file system the rename is atomic. What a killed writer
leaves behind is removed by the next run in that folder
(`training.run_dir.remove_leftovers`).
"""

import os


def temporary_name(path):
    """The name `path` is written under until it is complete.

    >>> temporary_name("/out/predictions.json") == f"/out/predictions.json.tmp-{os.getpid()}"
    True
    """
    return f"{path}.tmp-{os.getpid()}"


def write_text(path, text):
    """Writes `text` (UTF-8) to `path` (local or any `tf.io.gfile` file system) whole.

    On any failure, Ctrl-C included, the temporary file is removed and a
    file already at `path` is left as it was.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "eval_results.txt")
    >>> write_text(path, "loss = 1.5\\n")
    >>> open(path).read()
    'loss = 1.5\\n'
    """
    # Imported here: config.py writes with this module and imports no TensorFlow, so that
    # the runners can import TensorFlow quietly first (bert_tf/scripts/__init__.py).
    import tensorflow as tf

    temp = temporary_name(path)
    try:
        with tf.io.gfile.GFile(temp, "w") as f:
            f.write(text)
        tf.io.gfile.rename(temp, path, overwrite=True)
    except BaseException:
        if tf.io.gfile.exists(temp):
            tf.io.gfile.remove(temp)
        raise
