"""Served exports, loaded by a client without our code, against our models called directly.

The Python path tokenizes with the reference `FullTokenizer` and packs with
`pack_tokens` (the original's truncation), then calls the Keras models; the
client sent raw strings to SavedModels whose checkpoints and vocabularies
were deleted. Inputs: empty strings, a text far longer than max_seq_length
(truncated to it), non-ASCII text, pairs, and batches of mixed lengths.
An encoder exported from all-MiniLM-L6-v2's HuggingFace folder is also held
against HuggingFace transformers with its own fast tokenizer, and TensorFlow's
`saved_model_cli` lists what an export offers. (Every test of the session
fixture `served` is in this file, so `make test`'s pytest-xdist workers,
which take whole files, build it once.)
"""

import json

import numpy as np
import pytest

from bert_tf.tasks.packing import pack_tokens, stack_inputs
from bert_tf.tokenization import FullTokenizer
from serving_support import (HF_TEXTS, LABELS, MASKED, MASKED_A, MASKED_B, MAX_SEQ_LENGTH,
                             TEXTS, TEXTS_A, TEXTS_B, TOP_K, assert_compiled_answers_equal,
                             saved_model_cli_show)

TOLERANCE = 1e-5


def _packed(vocab_file, texts, texts_b=None, keep_special_tokens=False):
    tokenizer = FullTokenizer(vocab_file, do_lower_case=True,
                              keep_special_tokens=keep_special_tokens)
    texts_b = texts_b or [None] * len(texts)
    packed = [pack_tokens(tokenizer.tokenize(a), b and tokenizer.tokenize(b), tokenizer,
                          MAX_SEQ_LENGTH) for a, b in zip(texts, texts_b)]
    return packed, stack_inputs(packed)


def _softmax(logits):
    exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return exp / exp.sum(axis=-1, keepdims=True)


@pytest.mark.parametrize("run,texts,texts_b", [
    ("texts", TEXTS, None), ("pairs", TEXTS_A, TEXTS_B)])
def test_encoder_matches_the_python_path(served, uncased_vocab_file, run, texts, texts_b):
    _, inputs = _packed(uncased_vocab_file, texts, texts_b)
    expected = served.pretrainer.encoder(inputs, training=False)
    got = {key.split("/")[-1]: value for key, value in served.outputs.items()
           if key.startswith(f"encoder/{run}/")}
    np.testing.assert_array_equal(got["input_mask"], inputs["input_mask"])
    np.testing.assert_allclose(got["pooled_output"], expected["pooled_output"], atol=TOLERANCE)
    np.testing.assert_allclose(got["sequence_output"], expected["sequence_output"],
                               atol=TOLERANCE)
    layers = [np.asarray(layer) for layer in expected["encoder_outputs"]]
    np.testing.assert_allclose(got["encoder_outputs"], np.stack(layers, 1), atol=TOLERANCE)
    np.testing.assert_allclose(got["last_four_layers"], np.concatenate(layers[::-1], -1),
                               atol=TOLERANCE)


def test_an_export_from_huggingface_weights_matches_huggingface(served, hf_minilm,
                                                               minilm_dir):
    import torch
    import transformers
    tokenizer = transformers.BertTokenizerFast.from_pretrained(str(minilm_dir))
    inputs = tokenizer(HF_TEXTS, padding="max_length", truncation=True,
                       max_length=MAX_SEQ_LENGTH, return_tensors="pt")
    with torch.no_grad():
        expected = hf_minilm(**inputs, output_hidden_states=True)
    mask = inputs["attention_mask"].numpy()
    np.testing.assert_array_equal(served.outputs["minilm/texts/input_mask"], mask)
    np.testing.assert_allclose(served.outputs["minilm/texts/pooled_output"],
                               expected.pooler_output.numpy(), atol=TOLERANCE)
    real = mask.astype(bool)
    np.testing.assert_allclose(served.outputs["minilm/texts/sequence_output"][real],
                               expected.last_hidden_state.numpy()[real], atol=TOLERANCE)
    # Its 6 layers: the last four, last first (the tiny models have fewer than four).
    last_four = np.concatenate([layer.numpy() for layer in expected.hidden_states[:-5:-1]], -1)
    np.testing.assert_allclose(served.outputs["minilm/texts/last_four_layers"][real],
                               last_four[real], atol=TOLERANCE)


def test_a_compiled_export_answers_as_the_plain_one(served):
    assert_compiled_answers_equal(served.outputs, "masked_lm", "masked_lm_xla")


def test_truncation_and_empty_text_as_documented(served):
    mask = served.outputs["encoder/texts/input_mask"]
    assert mask.shape == (len(TEXTS), MAX_SEQ_LENGTH)
    assert mask[1].sum() == 2  # "": [CLS] [SEP]
    assert mask[2].sum() == MAX_SEQ_LENGTH  # the long text fills the whole length
    pair_mask = served.outputs["encoder/pairs/input_mask"]
    assert pair_mask[1].sum() == 2 + 4  # "" and "Only B.": [CLS] [SEP] only b . [SEP]
    assert pair_mask[2].sum() == pair_mask[3].sum() == MAX_SEQ_LENGTH
    assert pair_mask[4].sum() == 6  # "The cat sat." and "": [CLS] the cat sat . [SEP]
    assert pair_mask[5].sum() == 5  # "Only A." and "\u200b": [CLS] only a . [SEP]


@pytest.mark.parametrize("kind", ["encoder", "classifier", "masked_lm"])
def test_a_text_gets_the_same_answer_alone_and_in_a_mixed_batch(served, kind):
    texts = MASKED if kind == "masked_lm" else TEXTS
    names = {"encoder": ["pooled_output", "sequence_output", "input_mask"],
             "classifier": ["probabilities"], "masked_lm": ["top_scores", "top_ids"]}[kind]
    for name in names:
        batch = served.outputs[f"{kind}/texts/{name}"]
        for i in range(len(texts)):
            alone = served.outputs[f"{kind}/alone{i}/{name}"][0]
            # Alone, a text is padded to its own length only (the batch is longer).
            np.testing.assert_allclose(alone, batch[i][:len(alone)], atol=TOLERANCE)
    if kind == "encoder":
        lengths = [served.outputs[f"encoder/alone{i}/input_mask"].shape[1]
                   for i in range(len(texts))]
        assert lengths == served.outputs["encoder/texts/input_mask"].sum(1).tolist()
        assert lengths[:2] == [6, 2]  # [CLS] hello , world ! [SEP] and [CLS] [SEP]


@pytest.mark.parametrize("run,texts,texts_b", [
    ("texts", TEXTS, None), ("pairs", TEXTS_A, TEXTS_B)])
def test_classifier_matches_the_python_path(served, uncased_vocab_file, run, texts, texts_b):
    _, inputs = _packed(uncased_vocab_file, texts, texts_b)
    expected = _softmax(np.asarray(served.classifier(inputs, training=False)))
    got = served.outputs[f"classifier/{run}/probabilities"]
    np.testing.assert_allclose(got, expected, atol=TOLERANCE)
    assert list(served.outputs[f"classifier/{run}/label"]) == \
        [LABELS[i] for i in expected.argmax(-1)]
    np.testing.assert_array_equal(served.outputs[f"classifier/{run}/label_id"],
                                  expected.argmax(-1))


@pytest.mark.parametrize("run,texts,texts_b", [
    ("texts", MASKED, None), ("pairs", MASKED_A, MASKED_B)])
def test_masked_lm_matches_the_python_path(served, uncased_vocab_file, run, texts, texts_b):
    packed, inputs = _packed(uncased_vocab_file, texts, texts_b, keep_special_tokens=True)
    positions = [[i for i, token in enumerate(p.tokens) if token == "[MASK]"] for p in packed]
    most = max(map(len, positions))
    got = {key.split("/")[-1]: value for key, value in served.outputs.items()
           if key.startswith(f"masked_lm/{run}/")}
    assert got["num_masks"].tolist() == [len(p) for p in positions]
    assert got["mask_positions"].tolist() == [p + [-1] * (most - len(p)) for p in positions]
    padded = np.array([p + [0] * (most - len(p)) for p in positions], "int32")
    logits = served.pretrainer({**inputs, "masked_lm_positions": padded},
                               training=False)["masked_lm_logits"]
    probabilities = _softmax(np.asarray(logits))
    vocab = open(uncased_vocab_file, encoding="utf-8").read().split("\n")
    for row, row_positions in enumerate(positions):
        for slot in range(most):
            ids, scores = got["top_ids"][row, slot], got["top_scores"][row, slot]
            tokens = got["top_tokens"][row, slot]
            if slot >= len(row_positions):
                assert ids.tolist() == [-1] * TOP_K and scores.tolist() == [0.0] * TOP_K
                assert tokens.tolist() == [""] * TOP_K
                continue
            best = np.sort(probabilities[row, slot])[::-1][:TOP_K]
            np.testing.assert_allclose(scores, best, atol=TOLERANCE)
            np.testing.assert_allclose(probabilities[row, slot][ids], scores, atol=TOLERANCE)
            assert tokens.tolist() == [vocab[i] for i in ids]


@pytest.mark.parametrize("kind", ["encoder", "classifier", "masked_lm"])
def test_an_empty_batch_gets_empty_answers(served, kind):
    answers = {key: value for key, value in served.outputs.items()
               if key.startswith(f"{kind}/empty/")}
    assert len(answers) >= 4
    assert all(value.shape[0] == 0 for value in answers.values())
    if kind == "encoder":
        assert answers["encoder/empty/sequence_output"].shape == (0, 2, 32)


def test_metadata_records_what_the_export_was_made_with(served):
    outputs = served.outputs
    for kind in ("encoder", "classifier", "masked_lm"):
        assert str(outputs[f"{kind}/metadata/kind"]) == kind
        assert int(outputs[f"{kind}/metadata/max_seq_length"]) == MAX_SEQ_LENGTH
        assert bool(outputs[f"{kind}/metadata/do_lower_case"]) is True
        config = json.loads(str(outputs[f"{kind}/metadata/bert_config"]))
        assert config == served.pretrainer.config.to_dict()
    assert outputs["classifier/metadata/labels"].tolist() == LABELS
    assert int(outputs["masked_lm/metadata/top_k"]) == TOP_K


def test_saved_model_cli_lists_every_signature(served):
    shown = saved_model_cli_show(served.exports["classifier"])
    for signature in ("serving_default", "pairs", "metadata"):
        assert f"signature_def['{signature}']" in shown
    for name in ("text", "text_a", "text_b"):
        assert f"inputs['{name}'] tensor_info:" in shown
    for name in ("probabilities", "logits", "label", "label_id", "labels", "bert_config"):
        assert f"outputs['{name}'] tensor_info:" in shown
