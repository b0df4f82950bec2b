"""`BertPacker` and `BertPreprocessor` against HuggingFace's slow BertTokenizer:
truncation of every length combination, and real GLUE sentences and pairs."""

import pytest
import tensorflow as tf
import transformers

from bert_tf.tokenization import BertPacker, BertPreprocessor
from tokenization_corpora import glue_sentences
from tokenization_support import hf_deviates

CLS, SEP = 101, 102


@pytest.fixture(scope="module", autouse=True)
def quiet_huggingface():
    # HF warns on every pair truncated with `longest_first`.
    transformers.logging.set_verbosity_error()


def _hf_packed(hf, a, b, seq_length):
    """HF's truncation (`longest_first`: the original's, ties cut from B) and layout."""
    remove = max(0, len(a) + len(b or []) - (seq_length - (3 if b is not None else 2)))
    a, b, _ = hf.truncate_sequences(list(a), pair_ids=None if b is None else list(b),
                                    num_tokens_to_remove=remove,
                                    truncation_strategy="longest_first")
    b = b or None  # a B cut away whole is A alone in the original (`if tokens_b:`); HF keeps it
    ids = hf.build_inputs_with_special_tokens(a, b)
    segments = hf.create_token_type_ids_from_sequences(a, b)
    padding = [0] * (seq_length - len(ids))
    return ids + padding, [1] * len(ids) + padding, segments + padding


@pytest.mark.parametrize("seq_length", range(3, 16))
def test_truncation_of_every_length_pair_matches_huggingface(hf_slow, seq_length):
    lengths = [(la, lb) for la in range(10) for lb in range(10)]
    a = [list(range(1000, 1000 + la)) for la, _ in lengths]
    b = [list(range(2000, 2000 + lb)) for _, lb in lengths]
    packer = BertPacker(seq_length, cls_id=CLS, sep_id=SEP)
    pairs = packer((tf.ragged.constant(a, tf.int32), tf.ragged.constant(b, tf.int32)))
    singles = packer(tf.ragged.constant(a, tf.int32))
    for packed, bs in ((pairs, b), (singles, [None] * len(a))):
        got = list(zip(*(packed[k].numpy().tolist()
                         for k in ("input_ids", "input_mask", "segment_ids"))))
        # A B without ids is A alone in the original (`if tokens_b:`); HF adds an empty B.
        expected = [_hf_packed(hf_slow, x, y or None, seq_length) for x, y in zip(a, bs)]
        assert [tuple(map(list, g)) for g in got] == expected


def test_a_pair_whose_b_has_no_ids_is_packed_as_a_alone():
    """As the original's `if tokens_b:`: `[CLS] A [SEP]`, A keeping `seq_length - 2` ids;
    not `[CLS] A [SEP] [SEP]` (an empty B) beside the other rows' pairs."""
    packer = BertPacker(6, cls_id=CLS, sep_id=SEP)
    a = tf.ragged.constant([[1, 2, 3, 4, 5], [1, 2, 3, 4, 5]], tf.int32)
    b = tf.ragged.constant([[], [6]], tf.int32)
    packed = packer((a, b))
    assert packed["input_ids"].numpy().tolist() == [[CLS, 1, 2, 3, 4, SEP],
                                                    [CLS, 1, 2, SEP, 6, SEP]]
    assert packed["input_mask"].numpy().tolist() == [[1] * 6, [1] * 6]
    assert packed["segment_ids"].numpy().tolist() == [[0] * 6, [0, 0, 0, 0, 1, 1]]


@pytest.mark.parametrize("seq_length, kept_a", [(3, []), (4, [1])])
def test_a_pair_whose_b_is_cut_away_whole_is_packed_as_a_alone(seq_length, kept_a):
    """At `seq_length` 3 or 4 the cut to `seq_length - 3` may leave B no ids: the original's
    `if tokens_b:` (after the cut) packs `[CLS] A [SEP]`, not `[CLS] A [SEP] [SEP]`."""
    packed = BertPacker(seq_length, cls_id=CLS, sep_id=SEP)(
        (tf.ragged.constant([[1, 2, 3]], tf.int32), tf.ragged.constant([[6]], tf.int32)))
    layout = [CLS, *kept_a, SEP]
    padding = [0] * (seq_length - len(layout))
    assert packed["input_ids"].numpy().tolist() == [layout + padding]
    assert packed["input_mask"].numpy().tolist() == [[1] * len(layout) + padding]
    assert packed["segment_ids"].numpy().tolist() == [[0] * seq_length]


def test_one_example_and_dtypes():
    packer = BertPacker(6, cls_id=CLS, sep_id=SEP)
    packed = packer(([1, 2, 3], [4, 5, 6]))
    assert packed["input_ids"].numpy().tolist() == [CLS, 1, 2, SEP, 4, SEP]
    assert packed["segment_ids"].numpy().tolist() == [0, 0, 0, 0, 1, 1]
    assert {v.dtype for v in packed.values()} == {tf.int32}


def test_packer_refuses_bad_arguments():
    with pytest.raises(ValueError, match="at least 3"):
        BertPacker(2, cls_id=CLS, sep_id=SEP)
    packer = BertPacker(8, cls_id=CLS, sep_id=SEP)
    with pytest.raises(ValueError, match="one or two segments, got 3"):
        packer([tf.ragged.constant([[1]])] * 3)
    with pytest.raises(ValueError, match="dense tensor of shape"):
        packer(tf.constant([[1, 2]]))


def _hf_encoded(hf, texts, seq_length):
    encoded = hf(*texts, max_length=seq_length, truncation="longest_first",
                 padding="max_length")
    return [encoded["input_ids"], encoded["attention_mask"], encoded["token_type_ids"]]


def _ours(preprocessor, texts):
    packed = preprocessor(tuple(tf.constant(t) for t in texts))
    return [packed[k].numpy().tolist() for k in ("input_ids", "input_mask", "segment_ids")]


@pytest.mark.parametrize("seq_length", [16, 48])
def test_real_pairs_and_sentences_match_huggingface(uncased_vocab_file, hf_slow, seq_length):
    mrpc = [t for t in glue_sentences("MRPC", every=7) if not hf_deviates(t)]
    pairs = [mrpc[0::2][:300], mrpc[1::2][:300]]
    cola = [[t for t in glue_sentences("CoLA", every=20) if not hf_deviates(t)]]
    preprocessor = BertPreprocessor(uncased_vocab_file, seq_length=seq_length)
    for texts in (pairs, cola):
        assert _ours(preprocessor, texts) == _hf_encoded(hf_slow, texts, seq_length)
