"""bert_tf.scripts: the absl-flag runners.

Importing this package imports TensorFlow, in two ways that save the
runners' start-up:

* Quietly. TensorFlow's C++ start-up notices (missing CUDA drivers on a CPU
  machine, oneDNN, "failed call to cuInit" errors) would bury a runner's own
  output. Unless the user has set `TF_CPP_MIN_LOG_LEVEL`, the runners raise
  its level to 3 and import TensorFlow (and look for GPUs, which loads the
  CUDA platform) with the process's stderr pointed at /dev/null: TensorFlow
  2.21 writes its first notices from C++ before its logging is set up, where
  the level does not reach them. Python-side errors still say what went
  wrong; set `TF_CPP_MIN_LOG_LEVEL=0` to see everything. Where
  `TF_XLA_FLAGS` is set, stderr stays open: TensorFlow reads it while
  looking for GPUs and ends the process on a flag it does not know, saying
  which on stderr only (with stderr at /dev/null the runner ended with exit
  status 1 and not a word).
* Without garbage collection. The import makes some 340,000 Python objects,
  none of them garbage, and the full collections that so many allocations
  trigger walk them all, again and again (about a second of CPU in all). So
  the collector is off during the import, and what the import made is then
  frozen (`gc.freeze`): later collections leave it out too.
"""

import gc
import os


def _import_tensorflow_quietly():
    saved, devnull = os.dup(2), os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 2)
    try:
        import tensorflow as tf
        tf.config.list_physical_devices("GPU")
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(devnull)


def _import_tensorflow():
    collecting = gc.isenabled()
    gc.disable()
    try:
        if "TF_CPP_MIN_LOG_LEVEL" not in os.environ:
            os.environ["TF_CPP_MIN_LOG_LEVEL"] = "3"
            if "TF_XLA_FLAGS" not in os.environ:
                _import_tensorflow_quietly()
        import tensorflow  # noqa: F401
    finally:
        gc.freeze()
        if collecting:
            gc.enable()


_import_tensorflow()
