"""The per-replica computations of one training or evaluation step.

`StepFunctions` holds what runs inside `strategy.run` for any task:

* `train(batches)`: the micro-batches of one optimizer step (gradient
  accumulation happens here, summed in the loop rather than in the
  optimizer, whose `gradient_accumulation_steps` fails under
  `MirroredStrategy`); loss and gradients of each micro-batch come from a
  `tf.function` that is XLA-compiled with `jit_compile=True` (XLA cannot see
  variables on other devices, so only the per-replica part is compiled);
  then the gradients are summed over replicas, clipped to the global norm,
  unscaled and applied with the Keras optimizer (`gradient_update`). On
  one replica that update can be XLA-compiled too (`update_jit_compile`;
  `compilation.update_use_xla` says where it is faster). With several
  replicas it runs through the strategy's cross-replica machinery and
  stays uncompiled.
* `evaluate(batch)`: the same loss and metrics, without gradients.

Both return this replica's share of the step's loss (the shares sum to the
loss of the whole global batch, see `objective`) and its metric sums;
`train` also says whether the step's gradient was finite. A finite loss can
come with an infinite gradient (an overflow in the backward pass), and
applying it poisons every weight; the trainer stops on either. (Under loss
scaling a non-finite gradient is routine: the optimizer skips that update
and lowers the scale, so it is reported as finite.)
"""

import keras
import tensorflow as tf

from bert_tf.training import objective as objectives
from bert_tf.training.gradient_update import apply_summed_gradient


def model_inputs(model, batch):
    """The features of `batch` that `model` takes (Keras maps extra dict keys wrongly)."""
    names = model.input if isinstance(model.input, dict) else None
    return {name: batch[name] for name in names} if names else batch


class StepFunctions:
    """Per-replica train and eval steps of `model` under `objective`.

    Args:
        model: a Keras model built under the strategy's scope.
        optimizer: a Keras optimizer (possibly a `LossScaleOptimizer`) built on
            `model.trainable_variables`; it must not clip (we clip after the
            cross-replica sum, Keras before it).
        objective: the task's `Objective`.
        clip_norm: global gradient norm to clip to (None: no clipping).
        jit_compile: XLA-compile the training step's forward and backward pass.
        eval_jit_compile: XLA-compile the evaluation forward pass.
        update_jit_compile: XLA-compile the optimizer update, where the
            strategy has one replica.
    """

    def __init__(self, model, optimizer, objective, clip_norm=1.0, jit_compile=False,
                 eval_jit_compile=False, update_jit_compile=False):
        self.model = model
        self.optimizer = optimizer
        self.objective = objective
        self.clip_norm = clip_norm
        self.loss_scaling = isinstance(optimizer, keras.optimizers.LossScaleOptimizer)
        inner = optimizer.inner_optimizer if self.loss_scaling else optimizer
        if inner.clipnorm or inner.global_clipnorm or inner.clipvalue:
            raise ValueError("the optimizer clips gradients itself (before the sum over "
                             "replicas); leave clipping to the trainer's clip_norm")
        self._loss_and_grads = tf.function(self._loss_and_grads_fn, jit_compile=jit_compile,
                                           autograph=False)
        self._loss_and_metrics = tf.function(self._loss_and_metrics_fn,
                                             jit_compile=eval_jit_compile, autograph=False)
        self._compiled_update = tf.function(self._update_fn, jit_compile=True,
                                            autograph=False) if update_jit_compile else None

    def _forward(self, batch, scales, training):
        outputs = self.model(model_inputs(self.model, batch), training=training)
        loss = objectives.scaled_loss(self.objective, outputs, batch, scales)
        metrics = self.objective.metrics_fn(outputs, batch)
        return loss, {name: tf.stack([tf.cast(total, tf.float32), tf.cast(count, tf.float32)])
                      for name, (total, count) in metrics.items()}

    def _loss_and_grads_fn(self, batch, scales):
        variables = self.model.trainable_variables
        with tf.GradientTape() as tape:
            loss, metrics = self._forward(batch, scales, training=True)
            scaled = self.optimizer.scale_loss(loss) if self.loss_scaling else loss
        grads = tape.gradient(scaled, variables)
        # {variable index: gradient}, leaving out variables the loss does not
        # reach (the pooler of a model without NSP), which must not move.
        return loss, {i: tf.convert_to_tensor(g) for i, g in enumerate(grads) if g is not None}, \
            metrics

    def _update_fn(self, grads, indices, num_replicas):
        variables = [self.model.trainable_variables[i] for i in indices]
        return apply_summed_gradient(self.optimizer, grads, variables, self.clip_norm,
                                     num_replicas)

    def _loss_and_metrics_fn(self, batch, scales):
        return self._forward(batch, scales, training=False)

    def _global_scales(self, batches):
        context = tf.distribute.get_replica_context()
        totals = objectives.weight_totals(self.objective, batches)
        totals = context.all_reduce(tf.distribute.ReduceOp.SUM, totals)
        return objectives.loss_scales(self.objective, batches[0], totals)

    def train(self, batches):
        """One optimizer step over the micro-batches `batches` (a tuple); replica context.

        Returns:
            `(loss share, metric sums, gradient finite)`: the last as float32
            1.0 or 0.0, the same on every replica (the gradient is all-reduced).
        """
        context = tf.distribute.get_replica_context()
        scales = self._global_scales(batches)
        loss = grads = metrics = None
        for batch in batches:
            # One micro-batch after the other, so only one is in memory at a time.
            with tf.control_dependencies(tf.nest.flatten(grads) if grads else []):
                result = self._loss_and_grads(batch, scales)
            loss, grads, metrics = result if grads is None else tf.nest.map_structure(
                tf.add, (loss, grads, metrics), result)
        indices = tuple(sorted(grads))
        grads = context.all_reduce(tf.distribute.ReduceOp.SUM, [grads[i] for i in indices])
        single_replica = context.num_replicas_in_sync == 1
        update = self._compiled_update if self._compiled_update is not None and single_replica \
            else self._update_fn
        finite = update(grads, indices, context.num_replicas_in_sync)
        # Under loss scaling a non-finite gradient is routine: the step was skipped.
        finite = tf.constant(1.0) if self.loss_scaling else tf.cast(finite, tf.float32)
        return loss, metrics, finite

    def evaluate(self, batch):
        """Loss share and metric sums of one evaluation batch; replica context."""
        return self._loss_and_metrics(batch, self._global_scales((batch,)))
