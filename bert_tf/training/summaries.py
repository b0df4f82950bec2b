"""What a run leaves for people: TensorBoard scalars and eval_results.txt."""

import tensorflow as tf
from tensorflow.core.framework import summary_pb2

from bert_tf.atomic_files import write_text

# `tf.summary.scalar` lives in the tensorboard package, which TensorFlow no
# longer installs; its events are `tf.summary.write` calls tagged for the
# "scalars" plugin, which TensorBoard reads as it reads its own.
_SCALAR_METADATA = summary_pb2.SummaryMetadata(
    plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="scalars"))


def write_scalars(writer, step, scalars):
    """Writes `{name: number}` as TensorBoard scalars at `step` and flushes.

    Example:

    >>> import tempfile
    >>> writer = tf.summary.create_file_writer(tempfile.mkdtemp())
    >>> write_scalars(writer, 10, {"loss": 2.5, "learning_rate": 1e-4})
    """
    with writer.as_default(step=step):
        for name, value in scalars.items():
            tf.summary.write(name, tf.constant(value, tf.float32), metadata=_SCALAR_METADATA)
    writer.flush()


def write_eval_results(path, results):
    """Writes `key = value` lines, keys sorted, as the original's eval_results.txt.

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "eval_results.txt")
    >>> write_eval_results(path, {"loss": 1.5, "global_step": 20})
    >>> print(open(path).read(), end="")
    global_step = 20
    loss = 1.5
    """
    write_text(path, "".join(f"{key} = {results[key]}\n" for key in sorted(results)))
