"""What a run leaves for people: TensorBoard scalars and eval_results.txt.

A folder of scalars that cannot be made or written (read-only, a full
disk) fails as every other output does, "cannot write FOLDER: reason"
(TensorFlow's error named its events file over three lines, and a full
disk's "File too large" came as an `OutOfRangeError`, with a traceback).
"""

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

from bert_tf.file_set import cannot_write

# `tf.summary.scalar` lives in the tensorboard package, which TensorFlow no
# longer installs; its events are `tf.summary.write` calls tagged for the
# "scalars" plugin, which TensorBoard reads as it reads its own.
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))


class ScalarWriter:
    """TensorBoard scalars in `folder` (a run's `train` or `eval`), made at once.

    Args:
        folder: where the events file goes (made if need be).
        enabled: False: a writer that writes nothing (a worker other than the chief).

    Raises:
        OSError: "cannot write FOLDER: reason", here or from `write`.

    Example:

    >>> import tempfile
    >>> ScalarWriter(tempfile.mkdtemp()).write(10, {"loss": 2.5, "learning_rate": 1e-4})
    """

    def __init__(self, folder, enabled=True):
        self.folder = folder
        try:
            self._writer = (tf.summary.create_file_writer(folder) if enabled
                            else tf.summary.create_noop_writer())
        except tf.errors.OpError as error:
            raise cannot_write(folder, error) from None

    def write(self, step, scalars):
        """Writes `{name: number}` as scalars at `step` and flushes."""
        try:
            with self._writer.as_default(step=step):
                for name, value in scalars.items():
                    tf.summary.write(name, tf.constant(value, tf.float32),
                                     metadata=_SCALAR_METADATA)
            self._writer.flush()
        except tf.errors.OpError as error:
            raise cannot_write(self.folder, error) from None


def eval_results_text(results):
    """`key = value` lines, keys sorted: the original's eval_results.txt.

    >>> print(eval_results_text({"loss": 1.5, "global_step": 20}), end="")
    global_step = 20
    loss = 1.5
    """
    return "".join(f"{key} = {results[key]}\n" for key in sorted(results))

