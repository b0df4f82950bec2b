"""Statistics of exact-mode output on the real corpus (gutenberg_pretrain.txt).

Each check reads the TFRecords back with `tf.io.parse_example` and measures
what the original algorithm promises: every sequence gets
min(20, max(1, round(0.15 * length))) predictions (at most that with
whole-word masking), 80% of them [MASK], 10% random, 10% kept; [CLS], [SEP]
and padding are never masked; whole words are masked whole; segments are
[CLS] A [SEP] (0) then B [SEP] (1); the next-sentence coin is fair.
"""

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.data.pretraining_data import create_exact
from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.tokenization.vocab import load_vocab
from tests_shared import shared_path

SEQ, PRED = 128, 20


def read_records(path, seq_length=SEQ, max_predictions=PRED):
    """All records of a TFRecord file as a dict of numpy arrays."""
    spec = {name: tf.io.FixedLenFeature([seq_length], tf.int64)
            for name in ("input_ids", "input_mask", "segment_ids")}
    spec.update({name: tf.io.FixedLenFeature([max_predictions], tf.int64)
                 for name in ("masked_lm_positions", "masked_lm_ids")})
    spec["masked_lm_weights"] = tf.io.FixedLenFeature([max_predictions], tf.float32)
    spec["next_sentence_labels"] = tf.io.FixedLenFeature([1], tf.int64)
    batches = [tf.io.parse_example(batch, spec)
               for batch in tf.data.TFRecordDataset(str(path)).batch(4096)]
    return {name: np.concatenate([b[name].numpy() for b in batches]) for name in spec}


@pytest.fixture(scope="module")
def vocab(uncased_vocab_file):
    return load_vocab(uncased_vocab_file)


def _make(tmp_path_factory, vocab_file, text, **flags):
    output = tmp_path_factory.mktemp("records") / "out.tfrecord"
    create_exact([str(text)], [str(output)], vocab_file,
                 PretrainingDataOptions(max_seq_length=SEQ, max_predictions_per_seq=PRED, **flags))
    return read_records(output)


@pytest.fixture(scope="module")
def per_piece(tmp_path_factory, uncased_vocab_file):
    return _make(tmp_path_factory, uncased_vocab_file,
                 shared_path("corpus", "gutenberg_pretrain.txt"), dupe_factor=1)


@pytest.fixture(scope="module")
def whole_word(tmp_path_factory, uncased_vocab_file):
    return _make(tmp_path_factory, uncased_vocab_file,
                 shared_path("corpus", "gutenberg_pretrain.txt"), dupe_factor=1,
                 do_whole_word_mask=True)


def _masked(records):
    """(row, position, label, fed id) of every real prediction."""
    rows, slots = np.nonzero(records["masked_lm_weights"])
    positions = records["masked_lm_positions"][rows, slots]
    fed = records["input_ids"][rows, positions]
    return rows, positions, records["masked_lm_ids"][rows, slots], fed


def _expected_counts(records):
    lengths = records["input_mask"].sum(axis=1)
    return np.minimum(PRED, np.maximum(1, np.round(lengths * 0.15))).astype(int)


def test_predictions_per_sequence(per_piece, whole_word):
    counts = per_piece["masked_lm_weights"].sum(axis=1).astype(int)
    assert counts.sum() >= 50_000
    np.testing.assert_array_equal(counts, _expected_counts(per_piece))
    wwm_counts = whole_word["masked_lm_weights"].sum(axis=1).astype(int)
    expected = _expected_counts(whole_word)
    assert np.all(wwm_counts <= expected) and np.all(wwm_counts >= 1)
    # A skipped word leaves the budget unfilled only when no later word fits.
    assert wwm_counts.sum() / expected.sum() > 0.97


@pytest.mark.parametrize("mode", ["per_piece", "whole_word"])
def test_80_10_10(mode, request, vocab):
    records = request.getfixturevalue(mode)
    _, _, labels, fed = _masked(records)
    masked = np.mean(fed == vocab["[MASK]"])
    kept = np.mean(fed == labels)
    assert abs(masked - 0.8) < 0.01
    assert abs(kept - 0.1) < 0.01
    assert abs(1 - masked - kept - 0.1) < 0.01


@pytest.mark.parametrize("mode", ["per_piece", "whole_word"])
def test_special_tokens_and_padding_never_masked(mode, request, vocab):
    records = request.getfixturevalue(mode)
    rows, positions, labels, _ = _masked(records)
    assert not np.isin(labels, [vocab["[CLS]"], vocab["[SEP]"], vocab["[PAD]"]]).any()
    assert np.all(records["input_mask"][rows, positions] == 1) and np.all(positions > 0)
    slots = records["masked_lm_positions"]
    real = records["masked_lm_weights"] > 0
    assert np.all(np.diff(np.where(real, slots, SEQ + np.arange(PRED)), axis=1) > 0)
    assert np.all(slots[~real] == 0) and np.all(records["masked_lm_ids"][~real] == 0)


def test_segment_layout(per_piece, vocab):
    ids, mask, segments = per_piece["input_ids"], per_piece["input_mask"], per_piece["segment_ids"]
    lengths = mask.sum(axis=1)
    assert np.all(mask == (np.arange(SEQ) < lengths[:, None]))
    assert np.all(lengths <= SEQ) and np.all(lengths >= 5)
    assert np.all(ids[:, 0] == vocab["[CLS]"])
    assert np.all(ids[np.arange(len(ids)), lengths - 1] == vocab["[SEP]"])
    num_a = (segments == 0).sum(axis=1) - (SEQ - lengths)  # zeros also pad
    assert np.all(ids[np.arange(len(ids)), num_a - 1] == vocab["[SEP]"])
    assert np.all(segments == ((np.arange(SEQ) >= num_a[:, None]) & mask.astype(bool)))
    assert np.all(num_a >= 3) and np.all(lengths - num_a >= 2)


def test_whole_words_masked_whole(whole_word, vocab):
    pieces = np.zeros(max(vocab.values()) + 1, bool)
    pieces[[i for t, i in vocab.items() if t.startswith("##")]] = True
    sep = vocab["[SEP]"]
    for row in range(len(whole_word["input_ids"])):
        length = whole_word["input_mask"][row].sum()
        real = whole_word["masked_lm_weights"][row] > 0
        labels = dict(zip(whole_word["masked_lm_positions"][row][real],
                          whole_word["masked_lm_ids"][row][real]))
        chosen = set(labels)
        tokens = [labels.get(p, whole_word["input_ids"][row][p]) for p in range(length)]
        for p in range(2, length - 1):
            if pieces[tokens[p]]:
                before = p - 2 if tokens[p - 1] == sep else p - 1
                if tokens[before] != vocab["[CLS]"]:
                    assert (p in chosen) == (before in chosen), (row, p)


def test_next_sentence_coin_is_fair(tmp_path_factory, uncased_vocab_file):
    # One-sentence chunks always take a random next: document ends, and
    # sentences as long as the target (docs/ORIGINAL_BEHAVIOUR.md). Joining the corpus into
    # 4 long documents of sentences under 300 characters, with full-length
    # targets, leaves only the coin.
    lines = [l.strip() for l in
             shared_path("corpus", "gutenberg_pretrain.txt").read_text("utf-8").splitlines()]
    sentences = [l for l in lines if 0 < len(l) < 300]
    quarter = len(sentences) // 4 + 1
    text = "\n\n".join("\n".join(sentences[i:i + quarter])
                       for i in range(0, len(sentences), quarter))
    path = tmp_path_factory.mktemp("text") / "four_documents.txt"
    path.write_text(text, encoding="utf-8")
    records = _make(tmp_path_factory, uncased_vocab_file, path, dupe_factor=2, short_seq_prob=0.0)
    labels = records["next_sentence_labels"][:, 0]
    assert len(labels) > 15_000
    assert abs(labels.mean() - 0.5) < 0.015
