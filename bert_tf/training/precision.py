"""Mixed precision: the Keras dtype policy a run computes in.

`--mixed_precision` names a Keras policy: `float32`, `mixed_bfloat16`
(TPUs, recent GPUs and CPUs: no loss scaling needed) or `mixed_float16`
(GPUs: needs loss scaling, which `create_optimizer(loss_scale=True)` adds
with Keras' `LossScaleOptimizer`). Variables stay float32 in every policy;
the layers of `bert_tf.modeling` keep attention softmax, LayerNorm and the
output logits (hence the losses) in float32.
"""

import contextlib

import keras

POLICIES = ("float32", "mixed_bfloat16", "mixed_float16")


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
