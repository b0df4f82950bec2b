"""The tied decoder's hand-written gradient against float64 algebra and against autodiff."""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.training.precision import dtype_policy

from bert_tf.modeling import masked_lm_head
from bert_tf.modeling.masked_lm_head import tied_decoder_logits
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.training.objective import batch_loss
from tests_shared import random_inputs


@pytest.mark.parametrize("jit_compile", [None, False, True], ids=["eager", "graph", "xla"])
def test_gradients_equal_the_products_of_the_chain_rule(jit_compile):
    rng = np.random.default_rng(0)
    hidden, table, upstream = (rng.standard_normal(shape).astype("float32")
                               for shape in ((6, 8), (11, 8), (6, 11)))

    def gradients(hidden, table):
        with tf.GradientTape() as tape:
            tape.watch([hidden, table])
            logits = tied_decoder_logits(hidden, table)
            total = tf.reduce_sum(logits * upstream)
        return (logits,) + tuple(tape.gradient(total, [hidden, table]))

    if jit_compile is not None:
        gradients = tf.function(gradients, jit_compile=jit_compile)
    logits, d_hidden, d_table = gradients(tf.constant(hidden), tf.constant(table))
    h, t, u = (x.astype("float64") for x in (hidden, table, upstream))
    np.testing.assert_allclose(logits, h @ t.T, rtol=0, atol=1e-5)
    np.testing.assert_allclose(d_hidden, u @ t, rtol=0, atol=1e-5)
    np.testing.assert_allclose(d_table, u.T @ h, rtol=0, atol=1e-5)


def _pretraining_gradients(model, inputs, batch):
    with tf.GradientTape() as tape:
        loss, _ = batch_loss(pretraining_objective(), model(inputs, training=False), batch)
    variables = model.trainable_variables
    return {v.path: tf.convert_to_tensor(g)
            for v, g in zip(variables, tape.gradient(loss, variables))}


def test_pretrainer_gradients_equal_autodiffs_of_the_plain_product(tiny_config, monkeypatch):
    """The table's gradient sums the look-up's rows and the decoder's product, as autodiff's."""
    inputs = dict(random_inputs(tiny_config, batch=3, length=12, pad_from=9),
                  masked_lm_positions=np.array([[1, 4, 0], [2, 3, 8], [5, 6, 7]], "int32"))
    rng = np.random.default_rng(1)
    batch = {"masked_lm_ids": rng.integers(0, tiny_config.vocab_size, (3, 3)),
             "masked_lm_weights": np.array([[1, 1, 0], [1, 1, 1], [1, 0, 0]], "float32"),
             "next_sentence_labels": np.array([[0], [1], [1]])}
    model = BertPretrainer(tiny_config)
    ours = _pretraining_gradients(model, inputs, batch)
    monkeypatch.setattr(masked_lm_head, "tied_decoder_logits",
                        lambda hidden, table: tf.matmul(hidden, table, transpose_b=True))
    autodiff = _pretraining_gradients(model, inputs, batch)
    assert ours.keys() == autodiff.keys()
    table = next(path for path in ours if path.endswith("word_embeddings/embeddings"))
    assert np.abs(ours[table]).max() > 1e-3
    for path, gradient in ours.items():
        np.testing.assert_allclose(gradient, autodiff[path], rtol=0, atol=1e-6, err_msg=path)


def test_mixed_bfloat16_logits_are_float32_eagerly_and_traced(tiny_config):
    # The weights come from the seed that conftest.py sets before every test.
    with dtype_policy("mixed_bfloat16"):
        model = BertPretrainer(tiny_config)
    inputs = dict(random_inputs(tiny_config, batch=2, length=8, pad_from=6),
                  masked_lm_positions=np.array([[1, 2], [3, 4]], "int32"))
    eager = model(inputs)["masked_lm_logits"]
    traced = tf.function(model)(inputs)["masked_lm_logits"]
    assert eager.dtype == traced.dtype == "float32"
    # A traced graph adds each dense layer's bias inside its bfloat16 matmul (TensorFlow fuses
    # them, token_dense.py), rounding once where eager ops round twice. Those one-step differences
    # in the hidden states add up in each logit's dot product, so the bound is on the scale of
    # the largest logit, not element by element: over 200 random initialisations the largest
    # difference was 2**-7.04 of it. A wrong computation is off by the logits' own size.
    bound = 2 ** -6 * np.abs(eager).max()
    np.testing.assert_allclose(eager, traced, rtol=0, atol=bound)
