"""Round-robin TFRecord output that never leaves a half-written shard behind.

The original tool writes its records to a comma list of output files in turn
(record i to file i mod n). `RoundRobinRecordWriter` does the same, but the
files are one `file_set.FileSet`: each is written under a temporary
name, and they are renamed into place only when every record of every file
is written, so an interrupted or failed run (a full disk on the last file)
leaves the earlier run's files as they were, never some new shards beside
old ones that a glob would read as one data set, and no temporary file
(a failed run); the error names the output file.
"""

import contextlib
import os
from typing import Iterable, Sequence

import tensorflow as tf
from absl import logging

from bert_tf.atomic_files import prepare_folder_for
from bert_tf.file_set import FileSet, cannot_write
from bert_tf.leftover_files import remove_left_behind
from bert_tf.output_paths import file_identity


class RoundRobinRecordWriter:
    """Writes serialized records to several TFRecord files in turn.

    Use it as a context manager: leaving the block normally renames the files
    into place; leaving it with an exception deletes them.

    Args:
      output_files: final paths; missing parent directories are created.

    Raises:
      ValueError: no file, or a file named twice.
      OSError: naming the file when it cannot be created or written.

    Example:
      >>> import tempfile, tensorflow as tf
      >>> path = os.path.join(tempfile.mkdtemp(), "out.tfrecord")
      >>> with RoundRobinRecordWriter([path]) as writer:
      ...     writer.write_all([b"one", b"two"])
      >>> [r.numpy() for r in tf.data.TFRecordDataset(path)]
      [b'one', b'two']
    """

    def __init__(self, output_files: Sequence[str]):
        if not output_files:
            raise ValueError("no output files given")
        if len({file_identity(path) for path in output_files}) < len(output_files):
            raise ValueError(f"an output file is named twice in {', '.join(output_files)}")
        self.output_files = list(output_files)
        self.num_written = 0
        self._files = FileSet()
        self._writers = []
        try:
            for final in self.output_files:
                self._writers.append(self._open(final, self._files.add(final)))
        except BaseException:
            self._abort()
            raise

    @staticmethod
    def _open(final: str, temp: str) -> tf.io.TFRecordWriter:
        prepare_folder_for(final)
        if "://" not in final:
            remove_left_behind(final)  # what killed writers of it left
        try:
            return tf.io.TFRecordWriter(temp)
        except (tf.errors.OpError, OSError) as error:
            raise cannot_write(final, error) from None

    def write(self, record: bytes) -> None:
        index = self.num_written % len(self._writers)
        try:
            self._writers[index].write(record)
        except tf.errors.OpError as error:
            raise cannot_write(self.output_files[index], error) from None
        self.num_written += 1

    def write_all(self, records: Iterable[bytes]) -> None:
        for record in records:
            self.write(record)

    def close(self) -> None:
        """Flushes every file, then renames them all to their final names (`FileSet.replace`);
        on failure, deletes them all."""
        try:
            for writer, final in zip(self._writers, self.output_files):
                try:
                    writer.close()
                except tf.errors.OpError as error:
                    raise cannot_write(final, error) from None
            self._files.replace()
        except BaseException:
            self._abort()
            raise
        self._writers = []

    def _abort(self) -> None:
        for writer in self._writers:
            with contextlib.suppress(tf.errors.OpError):  # its flush fails again on a full disk
                writer.close()
        self._files.discard()
        self._writers = []

    def __enter__(self) -> "RoundRobinRecordWriter":
        return self

    def __exit__(self, exc_type, exc, traceback) -> None:
        if exc_type is None:
            self.close()
        else:
            self._abort()
            logging.error("not written: %s (the incomplete new files are removed, any earlier "
                          "ones left as they were)", ", ".join(self.output_files))
