"""bert_tf.scripts: the absl-flag runners.

TensorFlow's C++ start-up notices (missing CUDA drivers on a CPU machine,
oneDNN, "failed call to cuInit" errors) would bury a runner's own output;
they are hidden unless the user has set `TF_CPP_MIN_LOG_LEVEL` (this runs
before TensorFlow is imported). Python-side errors still say what went wrong.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
