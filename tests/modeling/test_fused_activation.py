"""The XLA-fused GELU of training calls: same values and gradients, and only in training."""

import numpy as np
import pytest
import tensorflow as tf
import torch

from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.fused_activation import get_training_activation
from bert_tf.modeling.transformer_block import TransformerBlock
from bert_tf.modeling.xla_elementwise import without_xla
from tests_shared import xla_compiled_functions

X = np.linspace(-6.0, 6.0, 4801, dtype="float32")


@pytest.mark.parametrize("name,approximate", [("gelu", "tanh"), ("gelu_exact", "none")])
def test_values_and_gradients_match_pytorch(name, approximate):
    fused = get_training_activation(name)
    x = tf.constant(X)
    with tf.GradientTape() as tape:
        tape.watch(x)
        y = fused(x)
    gradient = tape.gradient(y, x, output_gradients=tf.constant(X[::-1].copy()))
    reference = torch.from_numpy(X.astype("float64")).requires_grad_()
    expected = torch.nn.functional.gelu(reference, approximate=approximate)
    expected.backward(torch.from_numpy(X[::-1].astype("float64")))
    np.testing.assert_allclose(y, expected.detach().numpy(), rtol=0, atol=2e-6)
    np.testing.assert_allclose(gradient, reference.grad.numpy(), rtol=0, atol=2e-5)


def test_activations_without_a_fused_form_are_the_plain_ones():
    assert get_training_activation("relu") is get_activation("relu")


def _functions_compiled_by_xla(block, inputs, bias, training):
    with without_xla():  # as exports trace: no XLA-fused inference (test_xla_elementwise.py)
        return xla_compiled_functions(tf.function(lambda x: block(x, bias, training=training))
                                      .get_concrete_function(tf.TensorSpec(inputs.shape)).graph)


def test_only_training_calls_take_the_fused_activation():
    """An exported inference graph must run where XLA is off."""
    block = TransformerBlock(num_heads=2, intermediate_size=32, hidden_act="gelu",
                             hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                             initializer_range=0.5)
    rng = np.random.default_rng(0)
    inputs = rng.standard_normal((2, 5, 8)).astype("float32")
    bias = np.zeros((2, 1, 1, 5), "float32")
    assert _functions_compiled_by_xla(block, inputs, bias, training=False) == []
    assert _functions_compiled_by_xla(block, inputs, bias, training=True)
    np.testing.assert_allclose(block(inputs, bias, training=True),
                               block(inputs, bias, training=False), rtol=0, atol=1e-5)
