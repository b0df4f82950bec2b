"""`extract_features`' batching: every line once, in order, and no call wider than needed."""

import numpy as np
import pytest

from bert_tf.errors import UsageError
from bert_tf.tasks.feature_extraction import (TextExample, extract_features,
                                              resolve_layer_indexes)


class _Tokenizer:
    """Splits on spaces; a token's id is its length."""

    def tokenize(self, text):
        return text.split()

    def convert_tokens_to_ids(self, tokens):
        return [len(t) for t in tokens]


class _RecordingLayers:
    """Stands for `LayerFeatures`: one layer whose values are each row's input ids."""

    def __init__(self):
        self.rows = []

    def __call__(self, inputs):
        self.rows.append(len(inputs["input_ids"]))
        return inputs["input_ids"][:, None, :, None].astype(np.float32)


def _extract(num_lines, batch_size):
    examples = [TextExample(i, "w" * (i + 1)) for i in range(num_lines)]
    layers = _RecordingLayers()
    results = list(extract_features(examples, _Tokenizer(), layers, 8, batch_size))
    return results, layers.rows


def test_fewer_lines_than_a_batch_run_unpadded():
    """Three lines with --batch_size=100000 ran as 100000 rows (54 s for a tiny model)."""
    results, rows = _extract(3, 100000)
    assert rows == [3]
    assert [example.unique_id for example, _, _ in results] == [0, 1, 2]


def test_the_last_partial_batch_has_the_full_batches_shape():
    results, rows = _extract(5, 2)
    assert rows == [2, 2, 2]
    assert [example.unique_id for example, _, _ in results] == [0, 1, 2, 3, 4]
    for example, tokens, features in results:  # each row's own values, not the padding's
        assert tokens == ["[CLS]", "w" * (example.unique_id + 1), "[SEP]"]
        assert features[0, :, 0].tolist() == [5, example.unique_id + 1, 5]


def test_several_layers_out_of_range_are_named_together():
    """The default --layers on a 2-layer model (it read "-3, -4 is not a layer")."""
    with pytest.raises(UsageError) as error:
        resolve_layer_indexes("-1,-2,-3,-4", 2)
    assert str(error.value) == ("--layers=-1,-2,-3,-4: -3, -4 are not layers of a 2-layer "
                                "model (use indexes in [-2, 1])")


def test_examples_cut_to_the_length_and_an_empty_input_are_counted(caplog):
    """Both passed without a word: a 200-token line's features stopped at 64 tokens."""
    examples = [TextExample(0, "a " * 6), TextExample(1, "b " * 7), TextExample(2, "c d",
                                                                            "e " * 4)]
    with caplog.at_level("WARNING"):
        results = list(extract_features(examples, _Tokenizer(), _RecordingLayers(), 8, 2))
    assert [len(tokens) for _, tokens, _ in results] == [8, 8, 8]
    assert "2 of 3 examples were cut to max_seq_length 8 pieces" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        assert list(extract_features([], _Tokenizer(), _RecordingLayers(), 8, 2)) == []
    assert "no example to extract: the input has no line of text" in caplog.text


def test_a_json_lines_file_named_npz_is_refused(tmp_path):
    from bert_tf.tasks.feature_writers import JsonLinesWriter
    with pytest.raises(UsageError, match=r"x.npz: a name ending in .npz, but "
                                         r"--output_format=jsonl"):
        JsonLinesWriter(str(tmp_path / "x.npz"), [-1])
    assert list(tmp_path.iterdir()) == []
