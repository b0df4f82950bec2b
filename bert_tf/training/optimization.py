"""The original's optimizer recipe with Keras' own optimizers and schedules.

The original trains with Adam plus decoupled weight decay 0.01 (beta1 0.9,
beta2 0.999, epsilon 1e-6), no decay on LayerNorm and bias variables, a
learning rate that rises linearly from 0 to its peak over the warmup steps
and then follows `peak * (1 - step / num_train_steps)` down to 0, and
gradients clipped to global norm 1.0 (docs/ORIGINAL_BEHAVIOUR.md).

Here: `keras.optimizers.AdamW` with its Adam step in one fused kernel
(`fused_adamw.FusedAdamW`, the same formula), or `keras.optimizers.Lamb`;
`PolynomialDecay` for the linear decay, a three-line warmup wrapper (Keras
has no linear warmup in front of an arbitrary schedule), and
`exclude_from_weight_decay` on the Keras names of LayerNorm (`gamma`,
`beta`) and bias (`bias`, `output_bias`) variables. Clipping is not set on
the optimizer: Keras clips each replica's gradient before summing over
replicas, so the training loop clips the summed gradient itself
(`bert_tf.training.trainer`).

Two known differences from the original: Keras' Adam has bias correction
(the original's omission is a documented oversight), and decay is applied as
`w -= lr * decay * w` before the Adam step rather than folded into it, which
is the same update to first order.
"""

import keras
import tensorflow as tf

from bert_tf.training.fused_adamw import FusedAdamW

OPTIMIZERS = ("adamw", "lamb")
# Leaf names of Keras LayerNormalization weights and of biases: not decayed.
NO_DECAY_NAMES = ("gamma", "beta", "bias")


@keras.saving.register_keras_serializable(package="bert_tf")
class WarmupThenDecay(keras.optimizers.schedules.LearningRateSchedule):
    """`peak * step / warmup_steps` during warmup, then `decay(step)`.

    As in the original, the decay schedule is indexed by the global step
    (not by steps since warmup), so the rate after warmup is whatever
    `decay` gives at that step.

    Example:

    >>> decay = keras.optimizers.schedules.PolynomialDecay(1e-4, 100, 0.0)
    >>> schedule = WarmupThenDecay(1e-4, warmup_steps=10, decay=decay)
    >>> [round(float(schedule(s)), 8) for s in (0, 5, 10, 55, 100)]
    [0.0, 5e-05, 9e-05, 4.5e-05, 0.0]
    """

    def __init__(self, peak, warmup_steps, decay):
        self.peak = peak
        self.warmup_steps = warmup_steps
        self.decay = decay

    def __call__(self, step):
        step = keras.ops.cast(step, "float32")
        if not self.warmup_steps:
            return self.decay(step)
        warmup = self.peak * step / float(self.warmup_steps)
        return keras.ops.where(step < self.warmup_steps, warmup, self.decay(step))

    def get_config(self):
        return {"peak": self.peak, "warmup_steps": self.warmup_steps,
                "decay": keras.saving.serialize_keras_object(self.decay)}

    @classmethod
    def from_config(cls, config):
        config = dict(config, decay=keras.saving.deserialize_keras_object(config["decay"]))
        return cls(**config)


def learning_rate_schedule(peak, num_train_steps, num_warmup_steps):
    """Linear warmup to `peak`, then linear decay reaching 0 at `num_train_steps`."""
    if num_train_steps < 1:
        raise ValueError(f"num_train_steps must be positive, got {num_train_steps}")
    if not 0 <= num_warmup_steps <= num_train_steps:
        raise ValueError(f"num_warmup_steps {num_warmup_steps} must lie in "
                         f"[0, num_train_steps={num_train_steps}]")
    decay = keras.optimizers.schedules.PolynomialDecay(
        peak, decay_steps=num_train_steps, end_learning_rate=0.0, power=1.0)
    return WarmupThenDecay(peak, num_warmup_steps, decay)


def create_optimizer(learning_rate, num_train_steps, num_warmup_steps, optimizer="adamw",
                     weight_decay=0.01, loss_scale=False):
    """The original's optimizer recipe as a Keras optimizer.

    Create it inside the distribution strategy's scope.

    Args:
        learning_rate: peak learning rate.
        num_train_steps: steps at which the rate reaches 0.
        num_warmup_steps: steps of linear warmup from 0.
        optimizer: "adamw" (the original's) or "lamb" (You et al., 2019, for
            large batches).
        weight_decay: decoupled weight decay, not applied to LayerNorm and bias.
        loss_scale: wrap in `keras.optimizers.LossScaleOptimizer` (dynamic loss
            scaling, needed for float16 training).

    Returns:
        A `keras.optimizers.Optimizer`; gradients must be clipped by the caller.

    Example:

    >>> opt = create_optimizer(1e-4, num_train_steps=1000, num_warmup_steps=100)
    >>> type(opt).__name__, opt.epsilon, opt.weight_decay
    ('FusedAdamW', 1e-06, 0.01)
    """
    schedule = learning_rate_schedule(learning_rate, num_train_steps, num_warmup_steps)
    common = dict(learning_rate=schedule, weight_decay=weight_decay, beta_1=0.9,
                  beta_2=0.999, epsilon=1e-6)
    if optimizer == "adamw":
        result = FusedAdamW(**common)
    elif optimizer == "lamb":
        result = keras.optimizers.Lamb(**common)
    else:
        raise ValueError(f"--optimizer={optimizer!r}: choose one of {', '.join(OPTIMIZERS)}")
    result.exclude_from_weight_decay(var_names=list(NO_DECAY_NAMES))
    if loss_scale:
        result = keras.optimizers.LossScaleOptimizer(result)
    return result


def last_learning_rate(optimizer):
    """The learning rate `optimizer`'s last update used (its first one's before any).

    Keras' `optimizer.learning_rate` is the schedule at the update count,
    which an update raises after it has read its rate: read after a step,
    it is the next step's. The original's warmup gives its first step the
    rate 0, and the log said the second step's.

    >>> opt = create_optimizer(1e-4, num_train_steps=10, num_warmup_steps=5)
    >>> _ = opt.iterations.assign(1)  # after the first update
    >>> last_learning_rate(opt), round(float(opt.learning_rate), 9)
    (0.0, 2e-05)
    """
    inner = getattr(optimizer, "inner_optimizer", optimizer)  # a LossScaleOptimizer's
    schedule = inner._learning_rate  # Keras keeps no public handle on the schedule
    # Read through tensors: under a distribution strategy the variables are mirrored.
    if not isinstance(schedule, keras.optimizers.schedules.LearningRateSchedule):
        return float(tf.convert_to_tensor(inner.learning_rate))
    updates = int(tf.convert_to_tensor(inner.iterations))
    return float(schedule(max(updates - 1, 0)))
