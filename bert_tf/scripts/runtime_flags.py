"""Flags every training runner shares: where it runs and how fast.

The original's TPU flags keep their names (`use_tpu`, `tpu_name`,
`tpu_zone`, `gcp_project`, `master`, `num_tpu_cores`, `iterations_per_loop`,
`save_checkpoints_steps`); ours add the strategy, mixed precision, XLA,
gradient accumulation and the optimizer. Each runner calls
`define_runtime_flags()` once at import time.
"""

from absl import flags

from bert_tf.training import distribution, precision
from bert_tf.training.optimization import OPTIMIZERS

FLAGS = flags.FLAGS


def define_runtime_flags():
    """Defines the shared flags on absl's global FLAGS."""
    flags.DEFINE_integer("save_checkpoints_steps", 1000, "How often to save a checkpoint.")
    flags.DEFINE_integer("iterations_per_loop", 1000, "Steps per device loop (the default "
                         "of --steps_per_execution).")
    flags.DEFINE_bool("use_tpu", False, "Run on a TPU (--distribution_strategy=tpu).")
    flags.DEFINE_string("tpu_name", None, "The Cloud TPU to use (same as --tpu).")
    flags.DEFINE_string("tpu_zone", None, "GCE zone of the Cloud TPU.")
    flags.DEFINE_string("gcp_project", None, "Project of the Cloud TPU.")
    flags.DEFINE_string("master", None, "TPU address (grpc://...), same as --tpu.")
    flags.DEFINE_integer("num_tpu_cores", 8, "Kept for the original's command lines; the TPU "
                         "strategy uses every core it finds.")
    flags.DEFINE_enum("distribution_strategy", None, list(distribution.STRATEGIES),
                      "Default: tpu with --use_tpu, else one_device.")
    flags.DEFINE_integer("num_gpus", 0, "GPUs for --distribution_strategy=mirrored (0: all).")
    flags.DEFINE_string("tpu", None, "Cloud TPU name or grpc:// address.")
    flags.DEFINE_enum("optimizer", "adamw", list(OPTIMIZERS), "adamw: the original's; lamb: "
                      "layer-wise adaptive, for large batches.")
    flags.DEFINE_integer("gradient_accumulation_steps", 1, "Micro-batches per optimizer step.",
                         lower_bound=1)
    flags.DEFINE_enum("mixed_precision", "float32", list(precision.POLICIES), "Compute dtype "
                      "policy; mixed_float16 adds dynamic loss scaling.")
    flags.DEFINE_bool("jit_compile", False, "XLA-compile each replica's forward and backward "
                      "pass.")
    flags.DEFINE_integer("steps_per_execution", None, "Training steps per tf.function call "
                         "and progress line (default: --iterations_per_loop).", lower_bound=1)


def strategy_from_flags():
    """The `tf.distribute.Strategy` the flags ask for."""
    name = FLAGS.distribution_strategy or ("tpu" if FLAGS.use_tpu else "one_device")
    return distribution.get_strategy(
        name, num_gpus=FLAGS.num_gpus, tpu=FLAGS.tpu or FLAGS.tpu_name or FLAGS.master,
        tpu_zone=FLAGS.tpu_zone, gcp_project=FLAGS.gcp_project)


def check_batch_split(batch_size, strategy, flag="train_batch_size"):
    """Raises `flags.ValidationError`-style `ValueError` if a batch cannot be split evenly."""
    split = FLAGS.gradient_accumulation_steps * strategy.num_replicas_in_sync
    if batch_size % split:
        raise ValueError(f"--{flag}={batch_size} is not divisible by "
                         f"--gradient_accumulation_steps x replicas = {split}")
