"""What every export shares: one trace of the model, a SavedModel of its variables only, and
XLA-compiled answers equal to the plain ones on lengths rounded up to buckets."""

import pathlib
import re

import numpy as np
import pytest
import tensorflow as tf
from tensorflow.core.protobuf import saved_model_pb2

from bert_tf import serving
from bert_tf.config import BertConfig
from bert_tf.modeling import BertEncoder, build_span_model
from bert_tf.modeling.classifier import build_classifier, build_token_classifier
from bert_tf.serving.encoder_export import EncoderServing
from bert_tf.serving.multiple_choice_export import MultipleChoiceServing
from bert_tf.serving.ner_export import NerServing
from bert_tf.serving.span_qa_export import SpanQAServing
from serving_support import assert_compiled_answers_equal

VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "!"]


def _config(num_hidden_layers=2):
    return BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=num_hidden_layers,
                      num_attention_heads=2, intermediate_size=24, max_position_embeddings=32)


def _encoder():
    return BertEncoder(_config())


def test_every_signature_calls_one_trace_of_the_model(tmp_path):
    module = EncoderServing(_encoder(), VOCAB, str(tmp_path), max_seq_length=16)
    signatures = module.signatures()
    assert sorted(signatures) == ["metadata", "pairs", "serving_default"]
    assert module.inference.tracing_count() == 1
    signatures["serving_default"](tf.constant(["hello world!", "hello"]))
    signatures["pairs"](text_a=tf.constant(["hello"]), text_b=tf.constant(["world !"]))
    assert module.inference.tracing_count() == 1


def test_the_savedmodel_keeps_the_variables_not_the_keras_objects(tmp_path):
    encoder = _encoder()
    vocab_file = tmp_path / "vocab.txt"
    vocab_file.write_text("".join(f"{token}\n" for token in VOCAB))
    path = serving.export("encoder", encoder, tmp_path / "served", vocab_file=str(vocab_file),
                          max_seq_length=16)
    saved = saved_model_pb2.SavedModel.FromString(
        (pathlib.Path(path) / "saved_model.pb").read_bytes())
    nodes = saved.meta_graphs[0].object_graph_def.nodes
    variables = [node for node in nodes if node.WhichOneof("kind") == "variable"]
    assert len(variables) == len(encoder.variables)
    # Besides the variables: the root, the variables' list, the vocabulary
    # asset, the preprocessor's layers and the signatures, 42 nodes. With the
    # encoder's Keras objects it was 403 (a node for every layer and tracker).
    assert len(nodes) - len(variables) < 60, [node.WhichOneof("kind") for node in nodes]
    loaded = tf.saved_model.load(path)
    texts = tf.constant(["hello world!"])
    expected = encoder({"input_ids": tf.constant([[2, 4, 5, 6, 3]]),
                        "input_mask": tf.ones([1, 5], tf.int32),
                        "segment_ids": tf.zeros([1, 5], tf.int32)}, training=False)
    np.testing.assert_allclose(loaded.signatures["serving_default"](texts)["pooled_output"],
                               expected["pooled_output"], atol=1e-6)


def test_a_compiled_module_answers_as_the_plain_one_on_length_buckets(tmp_path):
    encoder = _encoder()
    texts = tf.constant(["hello world!", "", "hello " * 20])
    outputs = {}
    for name, jit_compile in (("plain", False), ("compiled", True)):
        module = EncoderServing(encoder, VOCAB, str(tmp_path), max_seq_length=32,
                                jit_compile=jit_compile)
        for run, batch in (("texts", texts), ("alone", texts[:1])):
            outputs.update({f"{name}/{run}/{key}": value.numpy()
                            for key, value in module.serve_texts(batch).items()})
    assert_compiled_answers_equal(outputs, "plain", "compiled")
    # "hello world!" alone is 5 pieces, run as 16; the batch's longest is 22, run as 32.
    assert outputs["plain/alone/sequence_output"].shape[1] == 5
    assert outputs["compiled/alone/sequence_output"].shape[1] == 16
    assert outputs["compiled/texts/sequence_output"].shape[1] == 32


@pytest.fixture(scope="module")
def every_signature(tmp_path_factory):
    """The signatures of every input layout, as a SavedModel would hold them (of one-layer
    models: the inputs' shapes are checked before the model)."""
    folder = str(tmp_path_factory.mktemp("signatures"))
    config = _config(num_hidden_layers=1)
    modules = {
        "texts": EncoderServing(BertEncoder(config), VOCAB, folder, max_seq_length=16),
        "questions": SpanQAServing(build_span_model(config), VOCAB, folder, max_seq_length=16,
                                   max_query_length=4, doc_stride=4),
        "entities": NerServing(build_token_classifier(config, 3), VOCAB, folder,
                               max_seq_length=16, labels=["O", "B-X", "I-X"]),
        "choices": MultipleChoiceServing(build_classifier(config, 1), VOCAB, folder,
                                         max_seq_length=16),
    }
    return {f"{name}_{key}": function for name, module in modules.items()
            for key, function in module.answer_signatures().items()}


# signature -> its inputs with one of the wrong shape, that input's name and shape.
WRONG_SHAPES = {
    "texts_serving_default": [({"text": [["hello", "world"]]}, "text", "[1,2]"),
                              ({"text": "hello"}, "text", "[]")],
    "texts_pairs": [({"text_a": [["hello"], ["world"]], "text_b": ["a", "b"]}, "text_a",
                     "[2,1]")],
    "questions_serving_default": [
        ({"question": "hello?", "context": ["hello world"]}, "question", "[]"),
        ({"question": ["a"], "context": [["hello", "world"]]}, "context", "[1,2]")],
    "entities_serving_default": [({"text": [["hello world"], ["world"]]}, "text", "[2,1]")],
    "choices_serving_default": [
        ({"context": ["hello"], "endings": ["world", "!"]}, "endings", "[2]"),
        ({"context": [["hello"]], "endings": [["world", "!"]]}, "context", "[1,1]")],
}


@pytest.mark.parametrize("name", WRONG_SHAPES)
def test_an_input_of_another_shape_is_named_in_the_error(every_signature, name):
    # A signature, loaded or not, does not check shapes itself: a 2-D text was
    # read as that many texts (outputs of mixed shapes), a scalar question answered.
    # One test per signature: each test's seeding clears TensorFlow's kernel cache, so
    # every test would set the signature's graph up again (seconds for span QA's).
    for inputs, wrong, shape in WRONG_SHAPES[name]:
        expected = "[?,?]" if wrong == "endings" else "[?]"
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=rf"Shape of tensor {wrong} {re.escape(shape)} is not "
                                 rf"compatible with expected shape {re.escape(expected)}"):
            every_signature[name](**{key: tf.constant(value) for key, value in inputs.items()})
