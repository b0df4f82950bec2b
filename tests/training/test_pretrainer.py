"""BertPretrainer and its ablations; left-to-right batches from real records."""

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import tf1_variable_map
from bert_tf.data import readers
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.tasks.pretraining_inputs import left_to_right_batch
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.training.objective import batch_loss
from tests_shared import random_inputs, shared_path


def _inputs(config, positions):
    inputs = random_inputs(config, batch=2, length=12, pad_from=10)
    return dict(inputs, masked_lm_positions=np.array(positions, "int32"))


def test_outputs_and_original_variable_names(tiny_config):
    model = BertPretrainer(tiny_config)
    outputs = model(_inputs(tiny_config, [[1, 4, 0], [2, 3, 9]]))
    assert outputs["masked_lm_logits"].shape == (2, 3, tiny_config.vocab_size)
    assert outputs["next_sentence_logits"].shape == (2, 2)
    assert outputs["masked_lm_logits"].dtype == "float32"
    names = tf1_variable_map(model)
    assert {"cls/predictions/output_bias", "cls/predictions/transform/dense/kernel",
            "cls/seq_relationship/output_weights", "bert/pooler/dense/kernel"} <= set(names)
    # The decoder is the word-embedding table itself, not a copy.
    assert len(model.trainable_variables) == len(names)


def test_tied_decoder_logits_by_hand(tiny_config):
    model = BertPretrainer(tiny_config)
    inputs = _inputs(tiny_config, [[1, 4, 0], [2, 3, 9]])
    sequence = model.encoder({k: inputs[k] for k in model.encoder.input})["sequence_output"]
    head = model.masked_lm
    gathered = np.take_along_axis(np.asarray(sequence), inputs["masked_lm_positions"][..., None],
                                  axis=1)
    hidden = np.asarray(head.layer_norm(head.transform(gathered)))
    expected = hidden @ model.encoder.embeddings.word_embeddings.embeddings.numpy().T
    expected += head.output_bias.numpy()
    np.testing.assert_allclose(model(inputs)["masked_lm_logits"], expected, atol=1e-5)


def _full_last_block(model):
    """The same layers with the encoder's last block over every position, heads gathering."""
    inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name) for name in model.input}
    encoded = model.encoder({name: inputs[name] for name in model.encoder.input})
    outputs = {"masked_lm_logits": model.masked_lm(encoded["sequence_output"],
                                                   inputs["masked_lm_positions"])}
    if model.nsp:
        outputs["next_sentence_logits"] = model.next_sentence(encoded["pooled_output"])
    return keras.Model(inputs, outputs)


@pytest.mark.parametrize("nsp, causal", [(True, False), (False, True)])
def test_loss_and_gradients_are_the_full_encoders(tiny_config, nsp, causal):
    # The pretrainer's last block runs only at the heads' positions.
    model = BertPretrainer(tiny_config, nsp=nsp, causal=causal)
    full = _full_last_block(model)
    inputs = _inputs(tiny_config, [[1, 4, 0], [11, 3, 3]])
    labels = {"masked_lm_ids": np.array([[5, 6, 0], [7, 8, 8]], "int32"),
              "masked_lm_weights": np.array([[1, 1, 0], [1, 1, 1]], "float32"),
              "next_sentence_labels": np.array([[0], [1]], "int32")}
    results = []
    for network in (model, full):
        with tf.GradientTape() as tape:
            loss, _ = batch_loss(pretraining_objective(nsp), network(inputs), labels)
        results.append((loss, tape.gradient(loss, model.trainable_variables)))
    (loss, gradients), (full_loss, full_gradients) = results
    np.testing.assert_allclose(loss, full_loss, rtol=1e-6)
    for variable, gradient, expected in zip(model.trainable_variables, gradients, full_gradients):
        if expected is None:  # the pooler, without the next-sentence head
            assert gradient is None and not nsp and "pooler" in variable.path
            continue
        gradient = tf.convert_to_tensor(gradient)  # the table's gradients are sparse
        np.testing.assert_allclose(gradient, tf.convert_to_tensor(expected), atol=1e-6,
                                   err_msg=variable.path)
        assert np.any(gradient != 0), variable.path


def test_ablations(tiny_config):
    no_nsp = BertPretrainer(tiny_config, nsp=False)
    assert set(no_nsp(_inputs(tiny_config, [[1], [2]]))) == {"masked_lm_logits"}
    assert "cls/seq_relationship/output_weights" not in tf1_variable_map(no_nsp)
    causal = BertPretrainer(tiny_config, nsp=False, causal=True)
    assert causal.encoder.causal
    with pytest.raises(ValueError, match="nsp=False"):
        BertPretrainer(tiny_config, causal=True)


def test_keras_round_trip(tiny_config, tmp_path):
    model = BertPretrainer(tiny_config, nsp=False, causal=True)
    path = str(tmp_path / "pretrainer.keras")
    model.save(path)
    restored = keras.saving.load_model(path)
    assert restored.causal and not restored.nsp
    inputs = _inputs(tiny_config, [[1, 4], [2, 3]])
    np.testing.assert_array_equal(model(inputs)["masked_lm_logits"],
                                  restored(inputs)["masked_lm_logits"])


def test_left_to_right_batch_restores_tokens_and_shifts_targets():
    records = str(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))
    batch = next(iter(readers.pretraining_dataset(records, 128, 20, 16, is_training=False)))
    out = {k: v.numpy() for k, v in left_to_right_batch(batch).items()}
    original = {k: v.numpy() for k, v in batch.items()}
    for row in range(16):
        real = original["masked_lm_weights"][row] > 0
        positions = original["masked_lm_positions"][row][real]
        # The records' masked tokens ([MASK], random or kept) are put back.
        np.testing.assert_array_equal(out["input_ids"][row][positions],
                                      original["masked_lm_ids"][row][real])
        others = np.setdiff1d(np.arange(128), positions)
        np.testing.assert_array_equal(out["input_ids"][row][others],
                                      original["input_ids"][row][others])
    assert not np.any(out["input_ids"] == 103)  # no [MASK] left
    np.testing.assert_array_equal(out["masked_lm_positions"][0], np.arange(127))
    np.testing.assert_array_equal(out["masked_lm_ids"], out["input_ids"][:, 1:])
    np.testing.assert_array_equal(out["masked_lm_weights"], original["input_mask"][:, 1:])
    assert out["masked_lm_weights"].dtype == np.float32
    for name in ("segment_ids", "input_mask", "next_sentence_labels"):
        np.testing.assert_array_equal(out[name], original[name])
