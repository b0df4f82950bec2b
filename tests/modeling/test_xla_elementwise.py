"""Inference with XLA-fused element-wise work: same outputs, only in traced graphs, never exported."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.cpu_features import onednn_enabled
from bert_tf.modeling.token_dense import (TokenDense, onednn_layer_norm_is_faster,
                                          xla_elementwise_is_faster, xla_layer_norm_is_faster)
from bert_tf.modeling.xla_elementwise import (bias_residual_layer_norm, residual_layer_norm,
                                              without_xla)
from tests_shared import (random_inputs, random_weight_encoder, saved_xla_functions, write_cpuinfo,
                          xla_compiled_functions)


def _encoder(hidden_act, fused, mixed_precision="float32"):
    """`random_weight_encoder`, fusion set by hand."""
    encoder, config = random_weight_encoder(hidden_act, mixed_precision)
    bfloat16 = mixed_precision == "mixed_bfloat16"
    for layer in encoder._flatten_layers():
        if isinstance(layer, TokenDense):  # the blocks' residual layers decide for them
            # bfloat16 runs the fused oneDNN kernel on every CPU; float32 here tests
            # the XLA path whatever the CPU (AMX machines run the kernel there too).
            layer.fused_inference = bfloat16
            layer.xla_elementwise = fused and not bfloat16
            layer.xla_layer_norm = fused and bfloat16
    return encoder, config


def _traced(encoder):
    """The encoder's per-layer outputs in a `tf.function` for any batch and length, and its graph."""
    function = tf.function(lambda inputs: encoder(inputs)["encoder_outputs"])
    spec = {name: tf.TensorSpec((None, None), tf.int32)
            for name in ("input_ids", "input_mask", "segment_ids")}
    return function, function.get_concrete_function(spec).graph


@pytest.mark.parametrize("hidden_act", ["gelu", "gelu_exact", "relu"])
def test_fused_inference_computes_what_the_plain_layers_compute(hidden_act):
    fused, config = _encoder(hidden_act, fused=True)
    plain, _ = _encoder(hidden_act, fused=False)
    fused_call, graph = _traced(fused)
    plain_call, plain_graph = _traced(plain)
    assert xla_compiled_functions(graph) and not xla_compiled_functions(plain_graph)
    inputs = random_inputs(config, batch=3, length=11)
    for ours, reference in zip(fused_call(inputs), plain_call(inputs)):
        np.testing.assert_allclose(ours, reference, rtol=0, atol=1e-5)


def test_the_fused_layer_norm_is_layer_normalization_in_float64():
    rng = np.random.default_rng(1)
    x, residual = rng.normal(0.0, 3.0, (2, 2, 5, 16)).astype("float32")
    bias, gamma, beta = rng.normal(0.0, 1.0, (3, 16)).astype("float32")
    layer_norm = keras.layers.LayerNormalization(epsilon=1e-12)
    layer_norm.build((None, 16))
    layer_norm.set_weights([gamma, beta])
    summed = x.astype("float64") + bias + residual
    expected = ((summed - summed.mean(-1, keepdims=True))
                / np.sqrt(summed.var(-1, keepdims=True) + 1e-12) * gamma + beta)
    np.testing.assert_allclose(bias_residual_layer_norm(x, bias, residual, layer_norm),
                               expected, rtol=0, atol=1e-5)


def _bfloat16(values):
    return tf.constant(values, tf.bfloat16)


def test_the_bfloat16_layer_norm_rounds_the_sum_as_tensorflow_does():
    rng = np.random.default_rng(2)
    # Around 64 a bfloat16 step is 0.5, twice the spread: the sum's rounding shows in every output.
    x = _bfloat16(rng.normal(60.0, 0.25, (3, 5, 16)))
    residual = _bfloat16(rng.normal(4.0, 0.25, (3, 5, 16)))
    gamma, beta = (tf.cast(_bfloat16(rng.normal(1.0, 0.5, 16)), tf.float32) for _ in range(2))
    layer_norm = keras.layers.LayerNormalization(epsilon=1e-12)
    layer_norm.build((None, 16))
    layer_norm.set_weights([gamma, beta])

    def normalized(summed):
        summed = np.asarray(summed, "float64")
        return ((summed - summed.mean(-1, keepdims=True))
                / np.sqrt(summed.var(-1, keepdims=True) + 1e-12) * gamma + beta)

    expected = normalized(tf.cast(x + residual, tf.float32))  # TensorFlow's bfloat16 add
    unrounded = normalized(tf.cast(x, tf.float32) + tf.cast(residual, tf.float32))
    ours = residual_layer_norm(x, residual, layer_norm)
    assert ours.dtype == tf.bfloat16
    # One bfloat16 step of the result apart at most; a sum kept in float32 is far from it.
    step = 2.0 ** -7 * np.maximum(np.abs(expected), 1.0)
    assert np.all(np.abs(tf.cast(ours, tf.float32) - expected) <= step)
    assert np.mean(np.abs(unrounded - expected) > step) > 0.5
    # Keras' own layer in a bfloat16 policy computes the same.
    keras_layer = keras.layers.LayerNormalization(epsilon=1e-12, dtype="mixed_bfloat16")
    keras_layer.build((None, 16))
    keras_layer.set_weights([gamma, beta])
    keras_result = keras_layer(x + residual)
    assert np.mean(keras_result.numpy() == ours.numpy()) > 0.9
    np.testing.assert_allclose(tf.cast(keras_result, tf.float32), tf.cast(ours, tf.float32),
                               rtol=2.0 ** -7, atol=2.0 ** -7)


def test_bfloat16_inference_fuses_what_keras_computes():
    fused, config = _encoder("gelu", fused=True, mixed_precision="mixed_bfloat16")
    plain, _ = _encoder("gelu", fused=False, mixed_precision="mixed_bfloat16")
    fused_call, graph = _traced(fused)
    plain_call, plain_graph = _traced(plain)
    assert [name for name in xla_compiled_functions(graph) if "layer_norm" in name]
    assert not xla_compiled_functions(plain_graph)
    inputs = random_inputs(config, batch=3, length=11)
    for ours, reference in zip(fused_call(inputs), plain_call(inputs)):
        ours, reference = (tf.cast(t, tf.float32).numpy() for t in (ours, reference))
        # Rounding flips of the float32 LayerNorm's last step, nothing more.
        assert np.mean(ours == reference) > 0.9
        np.testing.assert_allclose(ours, reference, rtol=0.02, atol=0.02)


def test_only_traced_inference_outside_an_export_fuses():
    encoder, config = _encoder("gelu", fused=True)
    inputs = random_inputs(config)
    _, graph = _traced(encoder)
    assert xla_compiled_functions(graph)
    with without_xla():
        assert not xla_compiled_functions(_traced(encoder)[1])
    training = tf.function(lambda x: encoder(x, training=True)["sequence_output"])
    training_graph = training.get_concrete_function(inputs).graph
    # Training calls keep their own XLA-fused GELU (fused_activation.py), not these.
    assert any("bias_then_activation" in name for name in xla_compiled_functions(graph))
    assert not any("bias_" in name for name in xla_compiled_functions(training_graph))
    # Eager calls never compile: every new shape would compile again.
    eager = encoder(inputs)["sequence_output"]
    np.testing.assert_allclose(eager, _traced(encoder)[0](inputs)[-1], rtol=0, atol=1e-5)


@pytest.mark.parametrize("mixed_precision", ["float32", "mixed_bfloat16"])
def test_an_export_of_a_fusing_model_holds_no_xla(tmp_path, mixed_precision):
    from bert_tf import serving
    encoder, config = _encoder("gelu", fused=True, mixed_precision=mixed_precision)
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello"]
                               + [f"w{i}" for i in range(config.vocab_size - 5)]) + "\n")
    # The check can fail: the same model saved without `export` holds the fused functions.
    module = tf.Module()
    module.encoder = encoder
    module.encode = _traced(encoder)[0]
    tf.saved_model.save(module, str(tmp_path / "direct"))
    assert saved_xla_functions(tmp_path / "direct")
    exported = serving.export("encoder", encoder, tmp_path / "served", vocab_file=str(vocab),
                              max_seq_length=16)
    assert saved_xla_functions(exported) == []


def test_the_choice_follows_the_measurements(tmp_path):
    avx2 = write_cpuinfo(tmp_path, "fpu sse2 avx avx2 fma")
    amx = write_cpuinfo(tmp_path, "avx2 avx512f avx512_bf16 amx_bf16 amx_tile")
    cpu_only = not tf.config.list_logical_devices("GPU")
    assert xla_elementwise_is_faster("float32", avx2) == cpu_only
    # Where the dense layers run as one fused oneDNN kernel (AMX, bfloat16) they stay so.
    assert not xla_elementwise_is_faster("float32", amx)
    assert not xla_elementwise_is_faster("bfloat16", avx2)
    # In bfloat16 the residual sum and LayerNorm after the fused kernel are fused instead.
    assert xla_layer_norm_is_faster("bfloat16") == cpu_only
    assert not xla_layer_norm_is_faster("float32")
    # In float32 on AMX, that LayerNorm is oneDNN's kernel where oneDNN runs
    # (test_onednn_layer_norm.py; without oneDNN, test_onednn_default.py).
    assert onednn_layer_norm_is_faster("float32", amx) == (cpu_only and onednn_enabled())
    assert not onednn_layer_norm_is_faster("float32", avx2)
    assert not onednn_layer_norm_is_faster("bfloat16", amx)
