"""One training step applies the global-norm-clipped gradient of the batch's loss,
checked against a gradient taken here with a plain tape and clipped in numpy."""

import dataclasses

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.training.objective import batch_loss
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.training.trainer import Trainer
from training.tiny_training import BATCH, CONFIG, dataset_fn, examples

# No dropout: the step's forward pass is then the one taken here.
DETERMINISTIC = dataclasses.replace(CONFIG, hidden_dropout_prob=0.0,
                                    attention_probs_dropout_prob=0.0)
LEARNING_RATE = 0.5


def _reference_gradient(model, objective):
    batch = {k: v[:BATCH] for k, v in examples().items()}
    with tf.GradientTape() as tape:
        outputs = model({k: batch[k] for k in model.input}, training=True)
        loss = batch_loss(objective, outputs, batch)[0]
    grads = tape.gradient(loss, model.trainable_variables)
    return [np.zeros(v.shape, "float32") if g is None else tf.convert_to_tensor(g).numpy()
            for v, g in zip(model.trainable_variables, grads)]


def _clip_factor(grads, clip_norm):
    """What clipping `grads` to the global norm `clip_norm` multiplies them by (None: 1)."""
    norm = np.sqrt(sum(float(np.sum(g.astype("float64") ** 2)) for g in grads))
    assert norm > 2.0  # large enough for clipping at 0.5 to change every update 4-fold
    return min(1.0, clip_norm / norm) if clip_norm else 1.0


def _assert_one_sgd_step(model, before, grads, factor):
    """`model`'s weights are `before` moved by one SGD step on `factor` x `grads`."""
    for variable, old, grad in zip(model.trainable_variables, before, grads):
        np.testing.assert_allclose(variable.numpy(), old - LEARNING_RATE * factor * grad,
                                   rtol=1e-5, atol=1e-6, err_msg=variable.path)


@pytest.mark.parametrize("clip_norm", [0.5, None])
def test_step_applies_the_clipped_gradient(tmp_path, clip_norm):
    model = BertPretrainer(DETERMINISTIC)
    objective = pretraining_objective()
    grads = _reference_gradient(model, objective)
    before = [v.numpy() for v in model.trainable_variables]
    trainer = Trainer(model, keras.optimizers.SGD(LEARNING_RATE), objective,
                      tf.distribute.get_strategy(), str(tmp_path), BATCH, clip_norm=clip_norm)
    trainer.train(dataset_fn(), num_steps=1)
    _assert_one_sgd_step(model, before, grads, _clip_factor(grads, clip_norm))


def test_compiled_update_clips_and_skips_overflowing_steps(tmp_path):
    """The update XLA-compiled (as on a GPU), on `OneDeviceStrategy` (as there), loss-scaled.

    A finite step applies the clipped gradient; at a loss scale of 2^120
    every gradient's norm overflows, and a skipped step moves no weight,
    keeps the step count and halves the scale. (The forward and backward
    pass stay uncompiled: their XLA form is tested in test_distribution.py.)
    """
    strategy = tf.distribute.OneDeviceStrategy("/cpu:0")
    with strategy.scope():
        model = BertPretrainer(DETERMINISTIC)
        optimizer = keras.optimizers.LossScaleOptimizer(keras.optimizers.SGD(LEARNING_RATE))
    objective = pretraining_objective()
    grads = _reference_gradient(model, objective)
    before = [v.numpy() for v in model.trainable_variables]
    trainer = Trainer(model, optimizer, objective, strategy, str(tmp_path), BATCH,
                      clip_norm=0.5, update_jit_compile=True)
    trainer.train(dataset_fn(), num_steps=1)
    assert trainer.steps._compiled_update.experimental_get_tracing_count() == 1
    _assert_one_sgd_step(model, before, grads, _clip_factor(grads, 0.5))
    after_one = [v.numpy() for v in model.weights]
    optimizer.dynamic_scale.assign(2.0**120)
    trainer.train(dataset_fn(), num_steps=3)  # to step 3: two more steps, both skipped
    assert int(optimizer.iterations.numpy()) == 1
    assert float(optimizer.dynamic_scale.numpy()) == 2.0**118
    for old, new in zip(after_one, [v.numpy() for v in model.weights]):
        np.testing.assert_array_equal(old, new)
