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
    """Writes `text` (UTF-8) to `path` whole: a local file, or a URL (`gs://...`).

    Local files need no TensorFlow (`config.py` and the SQuAD scorer write
    with this); a URL is written with `tf.io.gfile`. On any failure, Ctrl-C
    included, the temporary file is removed and a file already at `path` is
    left as it was.

    Raises:
        OSError: naming `path` (not the temporary name) and the reason.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "eval_results.txt")
    >>> write_text(path, "loss = 1.5\\n")
    >>> open(path).read()
    'loss = 1.5\\n'
    """
    temp = temporary_name(path)
    tf = _tensorflow() if "://" in path else None
    try:
        if tf:
            with tf.io.gfile.GFile(temp, "w") as f:
                f.write(text)
            tf.io.gfile.rename(temp, path, overwrite=True)
        else:
            with open(temp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(temp, path)
    except BaseException as error:
        if tf and tf.io.gfile.exists(temp):
            tf.io.gfile.remove(temp)
        elif not tf and os.path.exists(temp):
            os.remove(temp)
        if isinstance(error, OSError):
            raise OSError(f"cannot write {path}: {error.strerror or error}") from None
        if tf and isinstance(error, tf.errors.OpError):
            # TensorFlow says "NAME; reason", naming the temporary file.
            raise OSError(f"cannot write {path}: {error.message.split('; ')[-1]}") from None
        raise


def _tensorflow():
    """TensorFlow, imported only when a URL is written."""
    import tensorflow as tf
    return tf
