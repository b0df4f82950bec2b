"""Mixed precision: the Keras dtype policy a run computes in.

`--mixed_precision` names a Keras policy: `float32`, `mixed_bfloat16`
(TPUs, recent GPUs and CPUs: no loss scaling needed) or `mixed_float16`
(GPUs: needs loss scaling, which `create_optimizer(loss_scale=True)` adds
with Keras' `LossScaleOptimizer`). Variables stay float32 in every policy;
the layers of `bert_tf.modeling` keep attention softmax, LayerNorm and the
output logits (hence the losses) in float32.

A CPU computes in bfloat16 at speed only with bfloat16 instructions
(`avx512_bf16` or AMX); elsewhere TensorFlow emulates them, and
`mixed_bfloat16` runs several times slower than float32.
`bfloat16_emulation_note` says so before such a run starts.
"""

import contextlib

import keras

from bert_tf.cpu_features import cpu_flags

POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")
# /proc/cpuinfo flags of the x86 instructions that compute in bfloat16.
BFLOAT16_CPU_FLAGS = ("avx512_bf16", "amx_bf16")


def needs_loss_scaling(policy):
    """True for float16 compute, whose small gradients underflow without scaling."""
    return policy == "mixed_float16"


@contextlib.contextmanager
def dtype_policy(policy):
    """Builds models inside this block with `policy`, restoring the previous one after.

    Example:

    >>> with dtype_policy("mixed_bfloat16"):
    ...     keras.layers.Dense(2).compute_dtype
    'bfloat16'
    >>> keras.config.dtype_policy().name
    'float32'
    """
    if policy not in POLICIES:
        raise ValueError(f"--mixed_precision={policy!r}: choose one of {', '.join(POLICIES)}")
    previous = keras.config.dtype_policy()
    keras.config.set_dtype_policy(policy)
    try:
        yield
    finally:
        keras.config.set_dtype_policy(previous)


def bfloat16_emulation_note(policy, devices, cpuinfo="/proc/cpuinfo"):
    """A warning when `policy` would compute in bfloat16 on CPUs without its instructions.

    `devices`: the names of the devices the run computes on (a strategy's
    `extended.worker_devices`); GPUs and TPUs have bfloat16 arithmetic.
    Returns None when there is nothing to say, and also where `cpuinfo`
    cannot be read (not Linux): there is then no way to tell.

    Example:

    >>> bfloat16_emulation_note("float32", ["/device:CPU:0"]) is None
    True
    >>> bfloat16_emulation_note("mixed_bfloat16", ["/device:GPU:0"]) is None
    True
    """
    if policy != "mixed_bfloat16" or any("CPU" not in device for device in devices):
        return None
    flags = cpu_flags(cpuinfo)
    if flags is None or flags.intersection(BFLOAT16_CPU_FLAGS):
        return None
    return ("--mixed_precision=mixed_bfloat16 on a CPU without bfloat16 instructions "
            f"({' or '.join(BFLOAT16_CPU_FLAGS)} in {cpuinfo}): TensorFlow emulates them, "
            "so this run computes several times slower than in float32")
