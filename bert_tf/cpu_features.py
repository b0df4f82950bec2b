"""The instruction-set flags of this machine's CPU, for choices measured per CPU kind.

Choices that depend on them: whether bfloat16 is computed at speed
(`training/precision.py`) and how a dense layer is computed
(`modeling/token_dense.py`). `cpu_only_tensorflow` tells whether such a
CPU choice applies at all, `onednn_enabled` whether oneDNN's kernels run.
Linux lists the flags in `/proc/cpuinfo`; elsewhere they are unknown
(None), and callers keep their default. Each file is read once per
process: every dense layer of an encoder asks when it is built.

Example:

>>> import tempfile
>>> with tempfile.NamedTemporaryFile("w", suffix="cpuinfo") as file:
...     _ = file.write("processor\\t: 0\\nflags\\t\\t: fpu avx2 fma\\n\\n")
...     file.flush()
...     sorted(cpu_flags(file.name))
['avx2', 'fma', 'fpu']
"""

import functools

import keras
import tensorflow as tf
from tensorflow.python.util import _pywrap_util_port


@functools.cache
def cpu_flags(cpuinfo="/proc/cpuinfo"):
    """The flags of every `flags` line of `cpuinfo`, as a frozenset; None if unreadable."""
    try:
        with open(cpuinfo, encoding="utf-8", errors="replace") as file:
            lines = file.read().splitlines()
    except OSError:
        return None
    return frozenset(flag for line in lines if line.startswith("flags")
                     for flag in line.partition(":")[2].split())


def onednn_enabled():
    """Whether TensorFlow runs oneDNN's kernels and graph rewrites in this process.

    `TF_ENABLE_ONEDNN_OPTS` decides when TensorFlow loads (`bert_tf` sets
    it on unless the environment says otherwise); this asks TensorFlow's
    own test of it (it has no public one), of the pinned version.
    """
    return bool(_pywrap_util_port.IsMklEnabled())


def cpu_only_tensorflow():
    """True on the TensorFlow backend of a machine without GPUs or TPUs: where CPU rules apply."""
    return keras.backend.backend() == "tensorflow" and not (
        tf.config.list_logical_devices("GPU") or tf.config.list_logical_devices("TPU"))
