"""What the one-GPU benches share: frameworks on the GPU, a precision check, the peaks.

`gpu_training_step.py` and `gpu_forward.py` time ours (TensorFlow) against
HuggingFace (PyTorch) on one CUDA GPU, in three precisions: float32 (TF32
matmuls on both sides: TensorFlow's default on Ampere and later, PyTorch
set to match), `mixed_bfloat16` and `mixed_float16` (ours under that Keras
policy, HF under `torch.autocast` to that type). Where TensorFlow and
PyTorch cannot share a process (their CUDA runtimes differ), each side
runs in its own (`--implementations=ours|hf`), and a framework that is not
timed is kept off the GPU.
"""

import sys

import numpy as np
import tensorflow as tf
from absl import flags

import peers

with peers.needed():
    import torch

from matmul_peak import define_peak_flags, measure
from round_robin import define_choices_flag
from shared_data import GOLDEN_RECORDS, define_path_flag

AUTOCAST = {"float32": None, "mixed_bfloat16": torch.bfloat16, "mixed_float16": torch.float16}
FRAMEWORK = {"ours": "tensorflow", "hf": "torch", "hf_half": "torch"}
PEAK_DTYPE = {"float32": "float32", "mixed_bfloat16": "bfloat16", "mixed_float16": "float16"}


def define_flags(timed, batch_size, iterations, implementations=("ours", "hf")):
    """Defines the flags both GPU benches take, `timed` naming what a timed call runs.

    `--precisions`, `--implementations` (of `implementations`), `--xla` (ours without
    and/or with it), `--batch_size`, `--iterations` and `--warmup` (timed
    and untimed calls of each), `--records` (the real records whose batch is
    read) and `--peak_sizes` (8192 by default).
    """
    define_choices_flag("precisions", list(AUTOCAST), list(AUTOCAST), "Precisions to time.")
    define_choices_flag("implementations", list(implementations), list(implementations),
                        "Implementations to time, in one process.")
    define_choices_flag("xla", ["no", "yes"], ["no", "yes"], "Ours without and/or with XLA.")
    flags.DEFINE_integer("batch_size", batch_size, "Sequences per call.", lower_bound=1)
    flags.DEFINE_integer("iterations", iterations, f"Timed {timed} per implementation.",
                         lower_bound=1)
    flags.DEFINE_integer("warmup", 3, f"Untimed {timed} first (tracing, XLA).", lower_bound=1)
    define_path_flag("records", GOLDEN_RECORDS,
                     "Pretraining records (seq 128, 20 predictions) whose first batch is read.")
    define_peak_flags(default=["8192"])


def frameworks(implementations):
    """The frameworks of `implementations` ("ours", "hf")."""
    return {FRAMEWORK[name] for name in implementations}


def use_gpu(implementations):
    """Readies the GPU for each framework timed; exits with a message where one lacks it."""
    if "tensorflow" in frameworks(implementations):
        gpus = tf.config.list_physical_devices("GPU")
        if not gpus:
            sys.exit("needs a CUDA GPU that TensorFlow sees; it sees none")
        for gpu in gpus:  # PyTorch may need the rest
            tf.config.experimental.set_memory_growth(gpu, True)
    else:  # reading the records would otherwise take the whole GPU's memory for TensorFlow
        tf.config.set_visible_devices([], "GPU")
    if "torch" in frameworks(implementations):
        if not torch.cuda.is_available():
            sys.exit("needs a CUDA GPU that PyTorch sees; it sees none")
        torch.backends.cuda.matmul.allow_tf32 = True


def gpu_name(implementations):
    """The GPU's name, asked of a framework this run times."""
    if "torch" in frameworks(implementations):
        return torch.cuda.get_device_name()
    details = tf.config.experimental.get_device_details(tf.config.list_physical_devices("GPU")[0])
    return details.get("device_name", "unknown")


def check_matmuls(implementations):
    """Each framework's strict float32 GPU matmul against numpy's float64: relative errors."""
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal((512, 512)).astype("float32") for _ in range(2))
    exact = a.astype("float64") @ b
    products = {}
    if "tensorflow" in frameworks(implementations):
        tf.config.experimental.enable_tensor_float_32_execution(False)
        products["tensorflow"] = tf.matmul(a, b).numpy()
        tf.config.experimental.enable_tensor_float_32_execution(True)
    if "torch" in frameworks(implementations):
        torch.backends.cuda.matmul.allow_tf32 = False
        products["torch"] = (torch.from_numpy(a).cuda() @ torch.from_numpy(b).cuda()).cpu().numpy()
        torch.backends.cuda.matmul.allow_tf32 = True
    return {name: float(np.linalg.norm(value - exact) / np.linalg.norm(exact))
            for name, value in products.items()}


def start(implementations, precisions, peak_sizes):
    """Readies the GPU, prints what runs and the check, returns `{precision: Peak}`.

    Each peak is the best rate of a square matmul of `peak_sizes` that a
    timed framework reaches on the GPU in that precision (TF32 for float32).
    """
    use_gpu(implementations)
    with peers.needed():
        import transformers
    print(f"GPU: {gpu_name(implementations)}; TensorFlow {tf.__version__}, "
          f"PyTorch {torch.__version__}, transformers {transformers.__version__}")
    print("strict float32 512-matmul, relative error against float64:",
          check_matmuls(implementations))
    peaks = {policy: measure(PEAK_DTYPE[policy], [int(size) for size in peak_sizes],
                             repeats=20, gpu_frameworks=sorted(frameworks(implementations)))
             for policy in precisions}
    for policy, peak in peaks.items():
        print(f"peak {PEAK_DTYPE[policy]}: {peak.gflops / 1000:.0f} TFLOP/s ({peak.framework}, "
              f"{peak.size}x{peak.size})", flush=True)
    return peaks
