"""`apply_summed_gradient` against TensorFlow's clipping and Keras' own loss scaling.

The reference is the form it replaced, on one replica: `tf.clip_by_global_norm`
at the scaled norm, then Keras' `LossScaleOptimizer.apply` (its finite
test, unscaling, skip and scale rule). Both run the same gradients, some
above the clip norm and one with an infinity, through twin weights and
optimizers; ours also runs XLA-compiled once. The skipped step must leave
the weights, the Adam slots and the step count as they were. The
replicas' shares are tested on their own.
"""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.training.fused_adamw import FusedAdamW
from bert_tf.training.gradient_update import apply_summed_gradient

SHAPES = [(3, 4), (4,), (2, 3, 2)]


def _gradients():
    """Six steps' random gradients of varied norm (clipping changes some); step 3 overflows."""
    rng = np.random.default_rng(0)
    result = []
    for step, size in enumerate([0.05, 3.0, 0.4, 10.0, 1.5, 0.2]):
        grads = [rng.normal(0.0, size, shape).astype("float32") for shape in SHAPES]
        if step == 3:
            grads[1][2] = np.inf
        result.append(grads)
    return result


def _twins(loss_scaling):
    rng = np.random.default_rng(1)
    start = [rng.normal(size=shape).astype("float32") for shape in SHAPES]
    pairs = []
    for _ in range(2):
        weights = [keras.Variable(value) for value in start]
        optimizer = FusedAdamW(learning_rate=0.01, weight_decay=0.01)
        if loss_scaling:
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer, initial_scale=1024.0,
                                                            dynamic_growth_steps=2)
        optimizer.build(weights)
        pairs.append((weights, optimizer))
    return pairs


def _ours(optimizer, weights, clip_norm, jit_compile):
    return tf.function(lambda grads: apply_summed_gradient(optimizer, grads, weights, clip_norm),
                       autograph=False, jit_compile=jit_compile)


def _reference(optimizer, weights, clip_norm):
    def apply(grads):
        scale = optimizer.dynamic_scale if isinstance(
            optimizer, keras.optimizers.LossScaleOptimizer) else 1.0
        if clip_norm:
            grads, _ = tf.clip_by_global_norm(grads, clip_norm * scale)
        optimizer.apply(grads, weights)
    return tf.function(apply, autograph=False)


@pytest.mark.parametrize("loss_scaling,clip_norm,jit_compile", [
    (True, 1.0, False), (True, 1.0, True), (True, None, False), (False, 1.0, False)])
def test_same_weights_and_scale_as_clipping_then_keras_loss_scaling(loss_scaling, clip_norm,
                                                                    jit_compile):
    (ours, our_optimizer), (theirs, their_optimizer) = _twins(loss_scaling)
    our_step = _ours(our_optimizer, ours, clip_norm, jit_compile)
    their_step = _reference(their_optimizer, theirs, clip_norm)
    scales, skipped = [], 0
    for step, grads in enumerate(_gradients()):
        if step == 3 and not loss_scaling:
            continue  # without loss scaling an overflow stops the run (test_trainer)
        scale = float(our_optimizer.dynamic_scale.numpy()) if loss_scaling else 1.0
        held = ours + (our_optimizer.inner_optimizer.variables if loss_scaling else [])
        before = [variable.numpy() for variable in held]
        finite = our_step([tf.constant(g * scale) for g in grads])
        their_step([tf.constant(g * scale) for g in grads])
        assert bool(finite) == (step != 3)
        if step == 3:
            skipped += 1
            for variable, old in zip(held, before):  # weights, slots and step count
                np.testing.assert_array_equal(variable.numpy(), old, err_msg=variable.path)
        for a, b in zip(ours + our_optimizer.variables, theirs + their_optimizer.variables):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=2e-6, atol=1e-7,
                                       err_msg=f"step {step}: {a.path}")
        if loss_scaling:
            scales.append(float(our_optimizer.dynamic_scale.numpy()))
    if loss_scaling:
        # Doubled after each 2 finite steps in a row, halved at the overflow.
        assert scales == [1024.0, 2048.0, 2048.0, 1024.0, 1024.0, 2048.0]
        assert int(our_optimizer.iterations.numpy()) == 5 and skipped == 1


def test_each_replica_gets_its_share():
    """Keras' optimizer sums the replicas' gradients: one replica of two applies half."""
    weight = keras.Variable(np.zeros(2, "float32"))
    optimizer = keras.optimizers.SGD(1.0)
    optimizer.build([weight])
    apply_summed_gradient(optimizer, [tf.constant([0.6, 0.8])], [weight], clip_norm=0.5,
                          num_replicas=2)
    np.testing.assert_allclose(weight.numpy(), [-0.15, -0.2], rtol=1e-6)
