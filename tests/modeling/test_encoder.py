"""BertEncoder: outputs, masking, causal attention, dropout, serialisation."""

import keras
import numpy as np
import pytest

from bert_tf.config_uses import as_causal
from bert_tf.modeling import BertEncoder
from tests_shared import random_inputs


@pytest.fixture
def encoder(tiny_config):
    return BertEncoder(tiny_config)


def _run(model, inputs, **kwargs):
    return keras.tree.map_structure(np.asarray, model(inputs, **kwargs))


def test_outputs_cover_every_layer(encoder, tiny_config):
    outputs = _run(encoder, random_inputs(tiny_config))
    assert outputs["sequence_output"].shape == (3, 9, 32)
    assert outputs["pooled_output"].shape == (3, 32)
    assert outputs["embedding_output"].shape == (3, 9, 32)
    assert len(outputs["encoder_outputs"]) == tiny_config.num_hidden_layers
    np.testing.assert_array_equal(outputs["encoder_outputs"][-1], outputs["sequence_output"])
    assert np.all(np.abs(outputs["pooled_output"]) <= 1.0)  # tanh


def test_padding_does_not_leak_into_real_positions(encoder, tiny_config):
    inputs = random_inputs(tiny_config, pad_from=5)
    changed = dict(inputs, input_ids=np.where(inputs["input_mask"] == 1,
                                              inputs["input_ids"], 7).astype("int32"))
    a, b = _run(encoder, inputs), _run(encoder, changed)
    np.testing.assert_allclose(a["sequence_output"][:, :5], b["sequence_output"][:, :5], atol=1e-6)
    np.testing.assert_allclose(a["pooled_output"], b["pooled_output"], atol=1e-6)


def test_causal_position_ignores_later_tokens(tiny_config):
    causal = BertEncoder(tiny_config, causal=True)
    inputs = random_inputs(tiny_config, pad_from=9)
    changed = dict(inputs, input_ids=inputs["input_ids"].copy())
    changed["input_ids"][:, 6:] = 3
    a, b = _run(causal, inputs), _run(causal, changed)
    np.testing.assert_allclose(a["sequence_output"][:, :6], b["sequence_output"][:, :6], atol=1e-6)
    assert not np.allclose(a["sequence_output"][:, 6:], b["sequence_output"][:, 6:])


def test_a_causal_config_builds_a_causal_encoder_pooling_its_last_real_token(tiny_config):
    """A left-to-right model's [CLS] sees only itself: its pooler reads the last real token,
    the one that has seen the whole text (the fine-tuned classifiers' input)."""
    encoder = BertEncoder(as_causal(tiny_config))  # as every model built from its config
    assert encoder.causal
    inputs = random_inputs(tiny_config)  # rows of 9, 8 and 7 real tokens
    outputs = _run(encoder, inputs)
    last = outputs["sequence_output"][np.arange(3), inputs["input_mask"].sum(1) - 1]
    np.testing.assert_allclose(outputs["pooled_output"], encoder.pooler(last), atol=1e-6)
    changed = dict(inputs, input_ids=inputs["input_ids"].copy())
    changed["input_ids"][:, 1] = 3  # the first word: only a summary of the whole text sees it
    assert not np.allclose(_run(encoder, changed)["pooled_output"], outputs["pooled_output"],
                           atol=1e-4)
    with pytest.raises(ValueError, match=r"^a left-to-right model's config .* cannot build "
                                         r"an encoder that attends both ways"):
        BertEncoder(as_causal(tiny_config), causal=False)


@pytest.mark.parametrize("causal", [False, True])
def test_encode_at_equals_the_full_output_gathered(tiny_config, causal):
    encoder = BertEncoder(tiny_config, causal=causal)
    inputs = random_inputs(tiny_config)  # rows of 9, 8 and 7 real tokens
    # Any order, repeats, and padded positions (7, 8 in the last row).
    positions = np.array([[0, 3, 3, 8], [5, 1, 0, 0], [7, 2, 8, 4]], "int32")
    full = _run(encoder, inputs)["sequence_output"]
    at = np.asarray(encoder.encode_at(inputs, positions))
    assert at.shape == (3, 4, tiny_config.hidden_size)
    np.testing.assert_allclose(at, np.take_along_axis(full, positions[..., None], 1),
                               atol=1e-5)


def test_bidirectional_position_sees_later_tokens(encoder, tiny_config):
    inputs = random_inputs(tiny_config, pad_from=9)
    changed = dict(inputs, input_ids=inputs["input_ids"].copy())
    changed["input_ids"][:, 6:] = 3
    assert not np.allclose(_run(encoder, inputs)["sequence_output"][:, 0],
                           _run(encoder, changed)["sequence_output"][:, 0])


def test_dropout_only_when_training(encoder, tiny_config):
    inputs = random_inputs(tiny_config)
    first, second = _run(encoder, inputs), _run(encoder, inputs)
    np.testing.assert_array_equal(first["sequence_output"], second["sequence_output"])
    trained = _run(encoder, inputs, training=True)
    assert not np.allclose(first["sequence_output"], trained["sequence_output"])


def test_initialisation_is_truncated_normal(tiny_config):
    kernel = BertEncoder(tiny_config).blocks[0].intermediate.kernel.numpy()
    assert abs(kernel.std() - 0.02 * 0.88) < 0.002  # std of N(0, s) truncated at 2s
    assert np.abs(kernel).max() <= 0.04 + 1e-7
    np.testing.assert_array_equal(BertEncoder(tiny_config).pooler.bias.numpy(), 0.0)


def test_keras_file_round_trip(encoder, tiny_config, tmp_path):
    inputs = random_inputs(tiny_config)
    path = str(tmp_path / "encoder.keras")
    encoder.save(path)
    restored = keras.saving.load_model(path)
    assert restored.config == tiny_config
    np.testing.assert_array_equal(_run(encoder, inputs)["pooled_output"],
                                  _run(restored, inputs)["pooled_output"])


def test_jit_compiled_forward_matches_eager(encoder, tiny_config):
    import tensorflow as tf
    inputs = random_inputs(tiny_config)
    compiled = tf.function(lambda x: encoder(x)["sequence_output"], jit_compile=True)
    np.testing.assert_allclose(np.asarray(compiled(inputs)),
                               _run(encoder, inputs)["sequence_output"], atol=1e-5)


def test_sequences_longer_than_the_position_table_and_a_config_path_are_named(encoder,
                                                                              tiny_config):
    """Both stopped in TensorFlow or Python internals: "Incompatible shapes: [1,17,128] vs.
    [1,16,128]", "'str' object has no attribute 'extra'"."""
    length = tiny_config.max_position_embeddings + 1
    ids = np.ones((1, length), "int32")
    with pytest.raises(ValueError, match=f"sequences of {length} tokens, but the model has "
                                         f"max_position_embeddings={length - 1} positions"):
        encoder({"input_ids": ids, "input_mask": ids, "segment_ids": 0 * ids})
    with pytest.raises(TypeError, match="config must be a BertConfig .*got str; read a file "
                                        "with BertConfig.from_json_file"):
        BertEncoder("bert_config.json")
