"""The optimizer recipe: schedule, weight-decay exclusions and one AdamW step by hand."""

import keras
import numpy as np
import pytest

from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.training.fused_adamw import FusedAdamW
from bert_tf.training.optimization import (NO_DECAY_NAMES, create_optimizer,
                                           learning_rate_schedule)


def original_learning_rate(step, peak, num_train_steps, num_warmup_steps):
    """The original optimization.py's formula, written out in numpy."""
    decayed = peak * (1.0 - min(step, num_train_steps) / num_train_steps)
    if step < num_warmup_steps:
        return peak * step / num_warmup_steps
    return decayed


@pytest.mark.parametrize("warmup", [0, 10, 100])
def test_schedule_is_the_originals(warmup):
    schedule = learning_rate_schedule(2e-4, num_train_steps=100, num_warmup_steps=warmup)
    for step in (0, 1, 5, 9, 10, 11, 50, 99, 100, 150):
        expected = original_learning_rate(step, 2e-4, 100, warmup)
        assert float(schedule(step)) == pytest.approx(expected, abs=1e-10), step


def test_schedule_rejects_bad_steps():
    with pytest.raises(ValueError, match="num_warmup_steps"):
        learning_rate_schedule(1e-4, num_train_steps=10, num_warmup_steps=20)
    with pytest.raises(ValueError, match="num_train_steps"):
        learning_rate_schedule(1e-4, num_train_steps=0, num_warmup_steps=0)
    with pytest.raises(ValueError, match="--optimizer='sgd'"):
        create_optimizer(1e-4, 10, 1, optimizer="sgd")


def test_decay_skips_layer_norm_and_bias_only(tiny_config):
    """With zero gradients, AdamW moves a variable only by its weight decay."""
    model = BertPretrainer(tiny_config)
    optimizer = create_optimizer(0.1, num_train_steps=10, num_warmup_steps=0)
    variables = model.trainable_variables
    before = [v.numpy() for v in variables]
    optimizer.apply([np.zeros(v.shape, "float32") for v in variables], variables)
    decayed = {v.path for v, old in zip(variables, before) if not np.array_equal(v.numpy(), old)}
    for v, old in zip(variables, before):
        if v.path in decayed:  # w <- w - lr * 0.01 * w
            np.testing.assert_allclose(v.numpy(), old * (1 - 0.1 * 0.01), rtol=1e-6)
    kept = {v.path for v in variables} - decayed
    assert all(p.endswith(("gamma", "beta", "bias")) for p in kept), sorted(kept)
    assert "masked_lm/output_bias" in kept and "embeddings/layer_norm/gamma" in kept
    assert all(p.endswith(("kernel", "embeddings")) for p in decayed), sorted(decayed)
    assert "embeddings/word_embeddings/embeddings" in decayed


def test_one_adamw_step_by_hand():
    """Adam (beta 0.9/0.999, eps 1e-6, bias-corrected) plus decoupled decay 0.01."""
    variable = keras.Variable(np.array([[0.5, -1.0], [2.0, 0.25]], "float32"), name="kernel")
    gradient = np.array([[0.1, -0.2], [0.3, 0.0]], "float32")
    optimizer = create_optimizer(1e-2, num_train_steps=4, num_warmup_steps=0)
    optimizer.apply([gradient], [variable])
    lr = 1e-2  # step 0 of the linear decay
    w = np.array([[0.5, -1.0], [2.0, 0.25]], "float64")
    w = w - lr * 0.01 * w
    m, v = 0.1 * gradient, 0.001 * gradient.astype("float64") ** 2
    alpha = lr * np.sqrt(1 - 0.999) / (1 - 0.9)
    w = w - alpha * m / (np.sqrt(v) + 1e-6)
    np.testing.assert_allclose(variable.numpy(), w, rtol=1e-5)


def test_fused_adamw_steps_are_keras_adamw_steps(tiny_config):
    """Three steps of the recipe on every pretrainer weight, against Keras' own AdamW."""
    weights = {}
    for fused in (True, False):
        keras.utils.set_random_seed(1)
        model = BertPretrainer(tiny_config)
        variables = model.trainable_variables
        if fused:
            optimizer = create_optimizer(1e-2, num_train_steps=10, num_warmup_steps=2)
        else:
            optimizer = keras.optimizers.AdamW(
                learning_rate_schedule(1e-2, 10, 2), weight_decay=0.01, beta_1=0.9,
                beta_2=0.999, epsilon=1e-6)
            optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY_NAMES))
        gradients = np.random.default_rng(2)
        for _ in range(3):
            optimizer.apply([gradients.standard_normal(v.shape).astype("float32")
                             for v in variables], variables)
        weights[fused] = {v.path: v.numpy() for v in variables}
    assert weights[True].keys() == weights[False].keys()
    for path, value in weights[True].items():
        np.testing.assert_allclose(value, weights[False][path], rtol=1e-6, atol=1e-7,
                                   err_msg=path)


def test_fused_adamw_has_no_amsgrad():
    with pytest.raises(ValueError, match="AMSGrad"):
        FusedAdamW(amsgrad=True)


def test_lamb_and_loss_scaling_wrap_keras_optimizers():
    assert type(create_optimizer(1e-3, 10, 1, optimizer="lamb")).__name__ == "Lamb"
    scaled = create_optimizer(1e-3, 10, 1, loss_scale=True)
    assert isinstance(scaled, keras.optimizers.LossScaleOptimizer)
    assert isinstance(scaled.inner_optimizer, keras.optimizers.AdamW)


@pytest.mark.parametrize("loss_scale", [False, True])
def test_the_rate_reported_is_the_last_updates_under_a_strategy(loss_scale):
    """Logged one update ahead (the warmup's first update uses 0, the log said 2e-5); and a
    constant rate under a strategy failed to read (a mirrored variable)."""
    import tensorflow as tf

    from bert_tf.training.optimization import last_learning_rate
    strategy = tf.distribute.MirroredStrategy(["/cpu:0"])
    with strategy.scope():
        weight = tf.Variable(1.0)
        scheduled = create_optimizer(1e-4, num_train_steps=10, num_warmup_steps=5,
                                     loss_scale=loss_scale)
        constant = keras.optimizers.Adam(3e-4)
        for optimizer in (scheduled, constant):
            optimizer.build([weight])
    assert last_learning_rate(scheduled) == 0.0  # before any update: the first one's
    strategy.run(lambda: scheduled.apply_gradients([(tf.constant(1.0), weight)]))
    assert last_learning_rate(scheduled) == 0.0  # the warmup's first update
    strategy.run(lambda: scheduled.apply_gradients([(tf.constant(1.0), weight)]))
    assert last_learning_rate(scheduled) == pytest.approx(2e-5)
    assert last_learning_rate(constant) == pytest.approx(3e-4)
