"""Python-side packing (the original's truncation) and the feature writers' exact values."""

import json
import os

import numpy as np
import pytest

from bert_tf.tasks.feature_writers import WRITERS, JsonLinesWriter
from bert_tf.tasks.packing import pack_tokens, truncate_pair
from tests_shared import file_size_limit


class _Vocab:
    def convert_tokens_to_ids(self, tokens):
        return [len(t) for t in tokens]


def test_pair_truncation_pops_the_longer_side_then_b_on_ties():
    a, b = list("abcdefg"), list("xyz")
    truncate_pair(a, b, 6)
    # 7+3 -> pop a four times (a is longer until 3+3): a keeps its first 3.
    assert (a, b) == (list("abc"), list("xyz"))
    a, b = list("abcd"), list("wxyz")
    truncate_pair(a, b, 5)
    # Ties pop b first: 4+4 -> 4+3 -> 3+3 -> 3+2.
    assert (a, b) == (list("abc"), list("wx"))


def test_packed_pair_keeps_the_front_of_each_side():
    packed = pack_tokens(list("abcdefgh"), list("xy"), _Vocab(), 9)
    assert packed.tokens == ["[CLS]", "a", "b", "c", "d", "[SEP]", "x", "y", "[SEP]"]
    assert packed.segment_ids.tolist() == [0] * 6 + [1] * 3


def test_a_pair_whose_second_text_has_no_tokens_packs_as_one_sentence():
    """The original's `if tokens_b:`: `A ||| \u200b` is `[CLS] A [SEP]`, cut to length - 2."""
    packed = pack_tokens(list("abcdefgh"), [], _Vocab(), 6)
    assert packed.tokens == ["[CLS]", "a", "b", "c", "d", "[SEP]"]
    assert packed.segment_ids.tolist() == [0] * 6
    assert packed.input_mask.tolist() == [1] * 6


def test_a_pair_whose_second_text_is_cut_away_whole_packs_as_one_sentence():
    """At max_seq_length 4 the pair's cut to 1 token takes all of B: the original's
    `if tokens_b:` (after the cut) packs `[CLS] a [SEP]`, not `[CLS] a [SEP] [SEP]`."""
    packed = pack_tokens(list("abc"), list("x"), _Vocab(), 4)
    assert packed.tokens == ["[CLS]", "a", "[SEP]"]
    assert packed.segment_ids.tolist() == [0] * 4
    assert packed.input_mask.tolist() == [1, 1, 1, 0]


def test_json_values_are_rounded_to_six_decimals_exactly(tmp_path):
    features = np.array([[[0.1234567, -2.0000049, 3.1415926]]], "float64")
    path = tmp_path / "f.jsonl"
    with JsonLinesWriter(str(path), [-1]) as writer:
        writer.write(0, ["hi"], features)
    values = json.loads(path.read_text())["features"][0]["layers"][0]["values"]
    assert values == [0.123457, -2.000005, 3.141593]


@pytest.mark.parametrize("output_format", sorted(WRITERS))
def test_a_full_disk_names_the_features_file_and_leaves_nothing(tmp_path, output_format):
    path = tmp_path / f"features.{output_format}"
    features = np.ones((1, 3000, 8), "float32")  # more than a write buffer of JSON
    with file_size_limit(1000), pytest.raises(
            OSError, match=rf"^cannot write {path}: File too large$"):
        with WRITERS[output_format](str(path), [-1]) as writer:
            writer.write(0, ["hi"] * 3000, features)
    assert os.listdir(tmp_path) == []
