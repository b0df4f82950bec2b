"""bert_tf's Dropout: the rate, the scale, independent decisions, seeds, XLA, gradients."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.modeling.dropout import Dropout

ELEMENTS = 1_000_000


def dropped(layer, inputs):
    return layer(inputs, training=True).numpy() == 0


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_drops_at_the_rate_and_scales_the_rest(rate):
    inputs = np.random.default_rng(0).uniform(1, 2, (1000, 1000)).astype("float32")
    outputs = Dropout(rate, seed=0)(inputs, training=True).numpy()
    zero = outputs == 0
    sigma = np.sqrt(rate * (1 - rate) / ELEMENTS)
    assert abs(zero.mean() - rate) < 5 * sigma
    np.testing.assert_allclose(outputs[~zero], inputs[~zero] / (1 - rate), rtol=1e-6)


def test_the_two_decisions_of_one_word_are_independent():
    # Elements 2i and 2i+1 share a 32-bit word (16 bits each).
    zero = dropped(Dropout(0.5, seed=0), np.ones(ELEMENTS, "float32")).reshape(-1, 2)
    both = (zero[:, 0] & zero[:, 1]).mean()
    assert abs(both - 0.25) < 5 * np.sqrt(0.25 * 0.75 / (ELEMENTS / 2))


def test_odd_sizes_and_calls_draw_new_masks():
    layer = Dropout(0.5, seed=0)
    first, second = (dropped(layer, np.ones((3, 5, 7), "float32")) for _ in range(2))
    assert first.shape == (3, 5, 7) and not np.array_equal(first, second)


def test_a_seed_gives_the_same_masks_with_and_without_xla():
    inputs = np.ones((64, 33), "float32")
    plain, compiled = Dropout(0.3, seed=7), Dropout(0.3, seed=7)
    run = tf.function(lambda x: compiled(x, training=True), jit_compile=True)
    for _ in range(2):
        np.testing.assert_array_equal(plain(inputs, training=True).numpy(), run(inputs).numpy())


def test_gradient_is_the_mask_times_the_scale():
    inputs = tf.constant(np.random.default_rng(1).normal(size=(50, 40)).astype("float32"))
    with tf.GradientTape() as tape:
        tape.watch(inputs)
        outputs = Dropout(0.2, seed=3)(inputs, training=True)
    gradient = tape.gradient(outputs, inputs).numpy()
    np.testing.assert_allclose(gradient, (outputs.numpy() != 0) / 0.8, rtol=1e-6)


def test_identity_unless_training_and_keeps_bfloat16():
    inputs = np.arange(12, dtype="float32").reshape(3, 4) + 1
    np.testing.assert_array_equal(Dropout(0.5)(inputs).numpy(), inputs)
    np.testing.assert_array_equal(Dropout(0.0)(inputs, training=True).numpy(), inputs)
    half = Dropout(0.5, dtype="mixed_bfloat16")(inputs, training=True)
    assert half.dtype == tf.bfloat16


def test_noise_shape_is_refused():
    with pytest.raises(ValueError, match="noise_shape"):
        Dropout(0.1, noise_shape=(1, 4))


def test_same_distribution_as_keras_dropout():
    inputs = np.ones((1000, 1000), "float32")
    ours = Dropout(0.1, seed=0)(inputs, training=True).numpy()
    theirs = keras.layers.Dropout(0.1, seed=0)(inputs, training=True).numpy()
    assert set(np.unique(ours)) == set(np.unique(theirs))
    assert abs((ours == 0).mean() - (theirs == 0).mean()) < 10 * np.sqrt(0.09 / ELEMENTS)
