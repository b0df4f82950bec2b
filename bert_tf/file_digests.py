"""`file_sha256`: what a file holds, as one SHA-256, the same on every machine.

A path says where a file lies, not what it is: the same vocabulary or
start weights lie at `/home/alice/bert` on one host and `/mnt/models/bert`
on another, and a path may hold other bytes tomorrow. Where a run must
know it reads the same file as before (`run.json`) or as the other workers
of a multi-worker run, it compares this digest instead.

The file is read in 8 MiB blocks (about 1.2 GB/s where the CPU has SHA
instructions: 0.35 s for BERT-Base's 440 MB of safetensors). A local file
digested before in this process, and not changed since (the same inode,
size, and modification and change times), is not read again: one run asks
for its start weights' digest once for its record and once per NER
feature cache. Where files are too large to read whole (pretraining's
inputs), `sampled_sha256` stands in for it. Local files need no TensorFlow;
URLs (`gs://...`) are read with `tf.io.gfile`.

>>> import tempfile
>>> path = os.path.join(tempfile.mkdtemp(), "vocab.txt")
>>> _ = open(path, "w").write("[PAD]\\n")
>>> file_sha256(path)[:16]
'cd66c3d348c719ac'
"""

import functools
import hashlib
import os

_BLOCK = 8 << 20
_SAMPLE = 1 << 20


def file_sha256(path):
    """The SHA-256 of the bytes of the file at `path`, in hex (as `sha256sum` prints it).

    Raises:
        OSError: the file does not read (`tf.errors.OpError` for a URL).
    """
    if "://" in path:
        import tensorflow as tf  # only for a URL
        with tf.io.gfile.GFile(path, "rb") as f:
            return _digest(f)
    stat = os.stat(path)
    return _local_sha256(os.path.realpath(path), stat.st_ino, stat.st_size, stat.st_mtime_ns,
                         stat.st_ctime_ns)


@functools.lru_cache(maxsize=64)
def _local_sha256(path, *unchanged):
    """`file_sha256` of a local file, kept while its `os.stat` says `unchanged`: a write
    changes its change time (which no one can set back), and a file put in its place
    its inode."""
    del unchanged  # the cache's key: a changed file is read again
    with open(path, "rb") as f:
        return _digest(f)


def _digest(f):
    digest = hashlib.sha256()
    while block := f.read(_BLOCK):
        digest.update(block)
    return digest.hexdigest()


def sampled_sha256(path):
    """The SHA-256 of a file's size and of its first and last MiB, in hex: what a file of
    any size holds, read in 2 MiB at most.

    For inputs too large to digest whole, compared across hosts (pretraining's
    evaluation records, gigabytes each): other data written at the same path
    differs in it (another seed, another corpus, more records), the same file
    at another path does not. Files of at most 2 MiB are read whole.

    Raises:
        OSError: the file does not read (`tf.errors.OpError` for a URL).

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for name in ("a.tfrecord", "b.tfrecord"):
    ...     _ = open(os.path.join(folder, name), "wb").write(b"x" * (3 << 20))
    >>> sampled_sha256(os.path.join(folder, "a.tfrecord")) == sampled_sha256(
    ...     os.path.join(folder, "b.tfrecord"))
    True
    """
    if "://" in path:
        import tensorflow as tf  # only for a URL
        size = tf.io.gfile.stat(path).length
        with tf.io.gfile.GFile(path, "rb") as f:
            return _sampled(f, size)
    with open(path, "rb") as f:
        return _sampled(f, os.fstat(f.fileno()).st_size)


def _sampled(f, size):
    digest = hashlib.sha256(str(size).encode())
    digest.update(f.read(_SAMPLE))
    if size > _SAMPLE:
        f.seek(max(_SAMPLE, size - _SAMPLE))
        digest.update(f.read(_SAMPLE))
    return digest.hexdigest()
