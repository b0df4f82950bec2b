"""One optimizer update from a gradient summed over replicas: clip, unscale, apply.

Every training step ends here (`steps.StepFunctions.train`). Three things
must happen to the summed gradient before the optimizer sees it: clipping
to a global norm, removing the loss scale (float16 training), and cutting
it into each replica's share (Keras' optimizer sums over replicas once
more). Done one after the other (`tf.clip_by_global_norm`, Keras'
`LossScaleOptimizer.apply`, a division) they cost five passes over every
weight's gradient after the norm: the clipping multiply, the share's
division, and the loss scaler's finite test, its reduction and its
unscaling division. Each pass is one op per weight, which on a GPU is
one small kernel launch per weight (398 for BERT-Large). Here they are
one multiply by one scalar factor:

    factor = min(1 / scale, clip_norm / norm) / replicas

where `norm` is the global norm of the scaled, summed gradient, which the
clipping needs anyway. The gradient is finite exactly when that norm is
(an overflow of the sum of squares counts as non-finite, as it does for
`tf.clip_by_global_norm`, whose output is then NaN).

Loss scaling keeps Keras' `LossScaleOptimizer` as the owner of its state,
so checkpoints are unchanged: its `dynamic_scale` and `step_counter`
follow Keras' rule. A finite step updates the weights and doubles the
scale after `dynamic_growth_steps` finite steps in a row; a non-finite
one updates nothing and halves the scale.

Example: a clipped and unscaled update equals clipping the unscaled
gradient.

>>> import keras, numpy as np
>>> weight = keras.Variable(np.zeros(2, "float32"))
>>> scaler = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(1.0),
...                                              initial_scale=8.0)
>>> scaler.build([weight])
>>> finite = apply_summed_gradient(scaler, [tf.constant([24.0, 32.0])], [weight],
...                                clip_norm=1.0)
>>> bool(finite), weight.numpy().tolist()  # the gradient [3, 4] / 8 clipped to norm 1
(True, [-0.6000000238418579, -0.800000011920929])
"""

import keras
import tensorflow as tf


def apply_summed_gradient(optimizer, grads, variables, clip_norm=None, num_replicas=1):
    """Clips, unscales and applies `grads`, summed over replicas; replica context.

    Args:
        optimizer: a Keras optimizer, or a `keras.optimizers.LossScaleOptimizer`
            (then `grads` are of the scaled loss).
        grads: dense gradients of `variables`, summed over all replicas.
        variables: the variables to update.
        clip_norm: the global norm to clip the unscaled gradient to (None:
            no clipping).
        num_replicas: replicas in sync: the optimizer receives each one's share.

    Returns:
        A scalar bool tensor: whether the gradient was finite. Under loss
        scaling a non-finite gradient updated nothing and halved the scale.
    """
    loss_scaling = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
    norm = tf.linalg.global_norm(grads)
    finite = tf.math.is_finite(norm)
    inverse_scale = 1.0 / tf.convert_to_tensor(optimizer.dynamic_scale) if loss_scaling else 1.0
    factor = tf.minimum(inverse_scale, clip_norm / norm) if clip_norm else inverse_scale
    factor = factor / num_replicas
    if loss_scaling or clip_norm or num_replicas > 1:
        grads = [grad * factor for grad in grads]
    if loss_scaling:
        _apply_if_finite(optimizer, grads, variables, finite)
    else:
        optimizer.apply(grads, variables)
    return finite


def _apply_if_finite(scaler, grads, variables, finite):
    """Keras' dynamic loss scaling, with the finite test already done.

    A `tf.cond` whose branch calls the optimizer cannot run in a replica
    context on strategies that merge replicas through `merge_call`
    (`MirroredStrategy`): there the condition runs in the cross-replica
    context and the update in each replica, as Keras' own
    `LossScaleOptimizer` does it.
    """
    def update(grads, variables):
        scaler.inner_optimizer.apply(grads, variables)

    def count_and_grow():
        counter, scale = scaler.step_counter, scaler.dynamic_scale
        grow = tf.equal(counter, scaler.dynamic_growth_steps - 1)
        scale.assign(tf.where(grow, scale * 2.0, scale))
        counter.assign(tf.where(grow, tf.zeros_like(counter), counter + 1))

    def skip_and_shrink():
        scaler.step_counter.assign(tf.zeros_like(scaler.step_counter))
        scaler.dynamic_scale.assign(scaler.dynamic_scale * 0.5)

    if tf.__internal__.distribute.strategy_supports_no_merge_call():
        def update_and_count():
            update(grads, variables)
            count_and_grow()
        tf.cond(finite, update_and_count, skip_and_shrink)
        return

    def in_cross_replica_context(strategy, finite, grads, variables):
        def update_each_replica():
            strategy.extended.call_for_each_replica(update, args=(grads, variables))
            count_and_grow()
        # Every replica has the same flag: the gradient was summed over them.
        tf.cond(strategy.experimental_local_results(finite)[0], update_each_replica,
                skip_and_shrink)

    tf.distribute.get_replica_context().merge_call(in_cross_replica_context,
                                                   args=(finite, grads, variables))
