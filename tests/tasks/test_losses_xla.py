"""The masked LM's cross-entropy in its XLA-compiled form: PyTorch's values and gradients."""

import numpy as np
import tensorflow as tf
import torch

from bert_tf.tasks import losses
from tests_shared import xla_compiled_functions

VOCAB = 2 * losses.XLA_CROSS_ENTROPY_MIN_CLASSES


def test_values_and_gradients_match_pytorch():
    rng = np.random.default_rng(0)
    logits = (3 * rng.standard_normal((2, 5, VOCAB))).astype("float32")
    labels = rng.integers(0, VOCAB, (2, 5)).astype("int32")
    upstream = rng.random((2, 5)).astype("float32")

    @tf.function
    def loss_and_gradient(x):
        with tf.GradientTape() as tape:
            tape.watch(x)
            loss = losses.cross_entropy(x, labels)
        return loss, tape.gradient(loss, x, output_gradients=upstream)

    loss, gradient = loss_and_gradient(tf.constant(logits))
    if not tf.config.list_logical_devices("GPU"):
        assert xla_compiled_functions(
            loss_and_gradient.get_concrete_function(tf.constant(logits)).graph)
    x64 = torch.from_numpy(logits.astype("float64")).requires_grad_()
    expected = torch.nn.functional.cross_entropy(
        x64.reshape(-1, VOCAB), torch.from_numpy(labels).long().reshape(-1), reduction="none")
    expected.backward(torch.from_numpy(upstream.astype("float64")).reshape(-1))
    np.testing.assert_allclose(loss, expected.detach().numpy().reshape(2, 5), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(gradient, x64.grad.numpy(), rtol=1e-5, atol=1e-6)
    # Eagerly (scoring), and over a few classes (classification), Keras' op serves.
    np.testing.assert_allclose(losses.cross_entropy(logits, labels), loss, rtol=1e-5, atol=1e-5)
    few = tf.function(lambda x: losses.cross_entropy(x, labels[:, :1]))
    assert not xla_compiled_functions(
        few.get_concrete_function(tf.constant(logits[:, :1, :8])).graph)
