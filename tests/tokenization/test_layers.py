"""The Keras layers as layers: config round trips, `.keras` files, tf.data,
tf.function and a SavedModel signature taking tf.string."""

import keras
import pytest
import tensorflow as tf

from bert_tf.tokenization import (BertPacker, BertPreprocessor, BertTokenizerLayer,
                                  FullTokenizer)

TEXTS = ["The quick brown fox [MASK] over the lazy dog.", "Ünïcödé ΟΔΟΣ 中文 straße",
         "", "tabs\tand\nnewlines"]
PAIRS = (["Is this a question?", "Short"], ["Yes, it is a question about [MASK].", "B"])


@pytest.fixture(scope="module")
def preprocessor(uncased_vocab_file):
    return BertPreprocessor(uncased_vocab_file, seq_length=16, keep_special_tokens=True)


def _numpy(packed):
    return {key: value.numpy().tolist() for key, value in packed.items()}


def test_preprocessor_is_tokenizer_then_packer(uncased_vocab_file, preprocessor):
    reference = FullTokenizer(uncased_vocab_file, keep_special_tokens=True)
    ids = reference.convert_tokens_to_ids(reference.tokenize(TEXTS[0]))
    packed = _numpy(preprocessor([TEXTS[0]]))
    padding = [0] * (14 - len(ids))
    assert packed["input_ids"] == [[101] + ids + [102] + padding]
    assert packed["input_mask"] == [[1] * (len(ids) + 2) + padding]
    assert packed["segment_ids"] == [[0] * 16]
    # A scalar is one example; a list of Python strings is a batch.
    assert _numpy(preprocessor(TEXTS[0]))["input_ids"] == packed["input_ids"][0]
    assert len(_numpy(preprocessor(TEXTS))["input_ids"]) == len(TEXTS)
    with pytest.raises(ValueError, match="one text or a pair, got 3"):
        preprocessor((TEXTS, TEXTS, TEXTS))


def _wordpiece_ops(function, *specs):
    """How many WordPiece ops the traced `function` holds, its library's included."""
    graph = tf.function(function).get_concrete_function(*specs).graph.as_graph_def()
    nodes = [*graph.node, *(node for f in graph.library.function for node in f.node_def)]
    return sum("Wordpiece" in node.op for node in nodes)


def test_both_texts_of_a_pair_go_through_one_tokenizer(preprocessor):
    strings = tf.TensorSpec([None], tf.string)
    single = _wordpiece_ops(lambda text: preprocessor(text), strings)
    assert single > 0
    assert _wordpiece_ops(lambda a, b: preprocessor((a, b)), strings, strings) == single
    # A pair of scalars is one example, the batch's first.
    first = _numpy(preprocessor((PAIRS[0][0], PAIRS[1][0])))
    assert first["input_ids"] == _numpy(preprocessor(PAIRS))["input_ids"][0]
    assert 1 in first["segment_ids"]


@pytest.mark.parametrize("make", [
    lambda vocab: BertTokenizerLayer(vocab, do_lower_case=False, keep_special_tokens=True),
    lambda vocab: BertPacker(12, cls_id=101, sep_id=102),
    lambda vocab: BertPreprocessor(vocab, seq_length=12, do_lower_case=False),
], ids=["tokenizer", "packer", "preprocessor"])
def test_config_round_trip(uncased_vocab_file, make):
    layer = make(uncased_vocab_file)
    config = layer.get_config()
    clone = type(layer).from_config(config)
    assert clone.get_config() == config
    if isinstance(layer, BertPacker):
        inputs = tf.ragged.constant([[5, 6, 7], [8]])
        assert _numpy(clone(inputs)) == _numpy(layer(inputs))
    elif isinstance(layer, BertTokenizerLayer):
        assert clone(TEXTS).to_list() == layer(TEXTS).to_list()
    else:
        assert _numpy(clone(TEXTS)) == _numpy(layer(TEXTS))


def test_keras_file_round_trip(tmp_path, preprocessor):
    text = keras.Input(shape=(), dtype="string")
    model = keras.Model(text, preprocessor(text))
    path = str(tmp_path / "preprocessor.keras")
    model.save(path)
    restored = keras.models.load_model(path)
    batch = tf.constant(TEXTS)
    assert _numpy(restored(batch)) == _numpy(preprocessor(batch))


def test_inside_tf_data(layer, preprocessor):
    texts = tf.data.Dataset.from_tensor_slices(TEXTS)
    batched = [layer(b).to_list() for b in texts.batch(3)]
    assert [x.to_list() for x in texts.batch(3).map(layer)] == batched
    # Unbatched elements (scalar strings) and pairs.
    one_by_one = [x.numpy().tolist() for x in texts.map(layer)]
    assert one_by_one == layer(TEXTS).to_list()
    pairs = tf.data.Dataset.from_tensor_slices(PAIRS).map(lambda a, b: preprocessor((a, b)))
    assert [_numpy(x)["input_ids"] for x in pairs] == _numpy(preprocessor(PAIRS))["input_ids"]


def test_saved_model_signature_takes_strings(tmp_path, preprocessor):
    class Serving(tf.Module):
        def __init__(self):
            super().__init__()
            self.preprocessor = preprocessor

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string),
                                      tf.TensorSpec([None], tf.string)])
        def serve(self, a, b):
            return self.preprocessor((a, b))

    path = str(tmp_path / "saved_model")
    tf.saved_model.save(Serving(), path)
    restored = tf.saved_model.load(path)
    got = restored.serve(tf.constant(PAIRS[0]), tf.constant(PAIRS[1]))
    assert _numpy(got) == _numpy(preprocessor(PAIRS))
