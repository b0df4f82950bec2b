"""Files written whole or not at all: under a temporary name, then renamed.

A run stopped mid-write (Ctrl-C, SIGTERM, a full disk) must neither leave a
truncated file under the name a user or the next run reads, nor destroy
the file an earlier run wrote there. Every writer of the package therefore
writes `NAME.tmp-PID` beside `NAME` and renames it over `NAME` when it is
complete (`written_whole`, or `file_set.publish` and `discard` for writers
that stay open across calls); on one file system the rename is atomic. A
failed write is reported by the name asked for (`file_set.cannot_write`),
never the temporary one. What a killed writer leaves behind is removed
later (`leftover_files`). Files read together are written as one
`file_set.FileSet` (`write_texts`).
"""

import contextlib
import os

from bert_tf.file_set import FileSet, cannot_write


@contextlib.contextmanager
def written_whole(path, suffix=""):
    """Yields the temporary name to write `path` under; renames it to `path` on success.

    On any failure in the block, Ctrl-C included, the temporary file (or
    folder) is removed and whatever stood at `path` is left as it was: a
    `FileSet` of one file. `suffix` ends the temporary name, for writers
    that insist on one (`numpy`'s `.npy`). Local paths need no TensorFlow;
    URLs use `tf.io.gfile`.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "features.npy")
    >>> with written_whole(path, suffix=".npy") as temp:
    ...     _ = open(temp, "w").write("done")
    >>> open(path).read(), os.listdir(os.path.dirname(path))
    ('done', ['features.npy'])
    """
    with FileSet() as files:
        yield files.add(path, suffix=suffix)


def write_texts(texts):
    """Writes `{path: text}` (UTF-8) as one `FileSet`: every file replaced, or none.

    A text of None: that member is not written this time, and an earlier
    file of its name is removed with the set (`FileSet.drop`).

    Raises:
        OSError: naming the file (not the temporary name) and the reason;
            the earlier files are left as they were.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> names = ("predictions.json", "nbest_predictions.json", "null_odds.json")
    >>> write_texts({os.path.join(folder, name): "{}\\n" for name in names})
    >>> write_texts({os.path.join(folder, "predictions.json"): "{}\\n",
    ...              os.path.join(folder, "nbest_predictions.json"): "{}\\n",
    ...              os.path.join(folder, "null_odds.json"): None})
    >>> sorted(os.listdir(folder))
    ['nbest_predictions.json', 'predictions.json']
    """
    with FileSet() as files:
        for path, text in texts.items():
            if text is None:
                files.drop(path)
            else:
                files.write_text(path, text)


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
    write_texts({path: text})


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
    with FileSet() as files:
        files.copy_file(source, path)


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
            import tensorflow as tf  # only when a URL is written
            tf.io.gfile.makedirs(folder)
            return
        os.makedirs(folder, exist_ok=True)
    except (FileExistsError, NotADirectoryError):
        raise OSError(f"cannot write {path}: a file stands where its folder would be") from None
    except Exception as error:  # an OSError, or TensorFlow's OpError
        raise cannot_write(path, error) from None
    if not os.access(folder, os.W_OK | os.X_OK):
        raise OSError(f"cannot write {path}: {folder} is not writable")
