"""Dynamic masking over real corpus text.

Statistics are held against the original's rules (docs/ORIGINAL_BEHAVIOUR.md);
pairs are checked against the corpus as tokenized by HuggingFace's
`BertTokenizer` (the slow one, which mirrors the original's algorithm).
"""

import collections

import numpy as np
import pytest
import tensorflow as tf
import transformers

from tests_shared import corpus_head, shared_path
from bert_tf.data import dynamic_pairs
from bert_tf.data import readers
from bert_tf.data.dynamic_masker import DynamicMasker
from bert_tf.data.dynamic_masking import DynamicPretrainingData
from bert_tf.data.pretraining_options import PretrainingDataOptions

SEQ, PRED = 128, 20
OPTIONS = PretrainingDataOptions(max_seq_length=SEQ, max_predictions_per_seq=PRED)
CLS, SEP, MASK = 101, 102, 103


def _rows(dataset, num_batches=None):
    """Batches -> dict of stacked numpy arrays."""
    batches = list(dataset if num_batches is None else dataset.take(num_batches))
    return {k: np.concatenate([b[k].numpy() for b in batches]) for k in batches[0]}


def _unmasked(rows):
    """input_ids with the masked-LM targets put back."""
    ids = rows["input_ids"].copy()
    weights = rows["masked_lm_weights"] > 0
    for r, c in zip(*np.nonzero(weights)):
        ids[r, rows["masked_lm_positions"][r, c]] = rows["masked_lm_ids"][r, c]
    return ids


@pytest.fixture(scope="module")
def corpus_part(tmp_path_factory):
    """The first 12000 lines (~1.5 MB, 160 books' worth of chapters) of the corpus."""
    return str(corpus_head(tmp_path_factory.mktemp("corpus"), lines=12000))


@pytest.fixture(scope="module")
def training(corpus_part, uncased_vocab_file):
    """The training pipeline over the corpus part, and 10240 of its pairs."""
    ds = DynamicPretrainingData(uncased_vocab_file, OPTIONS).dataset(
        corpus_part, batch_size=64, is_training=True, seed=7)
    return ds, _rows(ds, 160)  # about three passes over the text


@pytest.fixture(scope="module")
def training_rows(training):
    return training[1]


def test_same_features_as_the_tfrecord_reader(training):
    static = readers.pretraining_dataset(
        str(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord")),
        SEQ, PRED, batch_size=64, is_training=True)
    assert training[0].element_spec == static.element_spec


def test_masking_statistics(training_rows):
    rows = training_rows
    length = rows["input_mask"].sum(axis=1)
    weights = rows["masked_lm_weights"] > 0
    predicted = weights.sum(axis=1)
    # The original's count: min(max_predictions, max(1, round(0.15 * len))).
    np.testing.assert_array_equal(
        predicted, np.minimum(PRED, np.maximum(1, np.round(0.15 * length))))
    fraction = predicted.sum() / (length - 3).sum()
    assert 0.145 < fraction < 0.16, fraction
    shown = np.take_along_axis(rows["input_ids"], rows["masked_lm_positions"], 1)[weights]
    target = rows["masked_lm_ids"][weights]
    as_mask = np.mean(shown == MASK)
    unchanged = np.mean(shown == target)
    assert abs(as_mask - 0.8) < 0.01, as_mask
    assert abs(unchanged - 0.1) < 0.01, unchanged
    assert abs(1 - as_mask - unchanged - 0.1) < 0.01


def test_random_next_is_half(training_rows):
    rate = training_rows["next_sentence_labels"].mean()
    assert abs(rate - 0.5) < 0.015, rate


def test_specials_never_masked_and_layout(training_rows):
    rows = training_rows
    ids = _unmasked(rows)
    weights = rows["masked_lm_weights"] > 0
    targets = rows["masked_lm_ids"][weights]
    assert not np.isin(targets, [0, CLS, SEP]).any()
    positions = rows["masked_lm_positions"]
    assert (positions[weights] > 0).all()
    steps = np.diff(positions, axis=1)[weights[:, 1:]]
    assert (steps > 0).all()  # sorted, no repeats
    assert (positions[~weights] == 0).all() and (rows["masked_lm_ids"][~weights] == 0).all()
    lengths = rows["input_mask"].sum(axis=1)
    short = 0
    for row, n in zip(range(2000), lengths):
        seps = np.nonzero(ids[row, :n] == SEP)[0]
        assert ids[row, 0] == CLS and len(seps) == 2 and seps[1] == n - 1
        assert seps[0] >= 2 and seps[1] - seps[0] >= 2  # A and B not empty
        expected_segments = np.r_[np.zeros(seps[0] + 1), np.ones(n - seps[0] - 1),
                                  np.zeros(SEQ - n)]
        np.testing.assert_array_equal(rows["segment_ids"][row], expected_segments)
        np.testing.assert_array_equal(rows["input_mask"][row], np.arange(SEQ) < n)
        assert (ids[row, n:] == 0).all() and (rows["input_ids"][row, n:] == 0).all()
        short += n < SEQ // 2
    # Most pairs fill the sequence; short_seq_prob=0.1 asks for shorter ones.
    assert np.mean(lengths) > 100 and 0.07 < short / 2000 < 0.16


def _pieces_by_document(path, vocab_file):
    """Each document of a corpus file as HuggingFace's token ids, joined as text."""
    tokenizer = transformers.BertTokenizerFast(vocab_file=vocab_file, do_lower_case=True)
    documents = [[]]
    for line in open(path, encoding="utf-8"):
        if line.strip():
            documents[-1].append(line)
        elif documents[-1]:
            documents.append([])
    ids = [tokenizer(doc, add_special_tokens=False)["input_ids"] for doc in documents if doc]
    return [" " + " ".join(str(i) for line in doc for i in line) + " " for doc in ids]


def _offsets(documents, ids):
    """{document index: character offsets} where `ids` occur contiguously."""
    needle = " " + " ".join(map(str, ids)) + " "
    found = {}
    for index, doc in enumerate(documents):
        at = doc.find(needle)
        while at >= 0:
            found.setdefault(index, []).append(at)
            at = doc.find(needle, at + 1)
    return found


def test_pairs_are_contiguous_text_of_the_right_documents(
        training_rows, corpus_part, uncased_vocab_file):
    """A and B are runs of a document; B follows A (label 0) or is elsewhere (1).

    Trimming may cut the end of A or the start of B, so an actual next B
    starts after A's end rather than right at it.
    """
    documents = _pieces_by_document(corpus_part, uncased_vocab_file)
    rows = {name: value[:400] for name, value in training_rows.items()}
    ids = _unmasked(rows)
    checked_random = 0
    for row in range(len(ids)):
        n = rows["input_mask"][row].sum()
        first_sep = int(np.nonzero(ids[row] == SEP)[0][0])
        a, b = ids[row, 1:first_sep], ids[row, first_sep + 1:n - 1]
        found_a, found_b = _offsets(documents, a), _offsets(documents, b)
        assert found_a and found_b, row
        if rows["next_sentence_labels"][row, 0] == 0:
            a_end = len(" ".join(map(str, a)))
            assert any(start_b >= start_a + a_end
                       for doc in found_a.keys() & found_b.keys()
                       for start_a in found_a[doc] for start_b in found_b[doc]), row
        elif len(found_a) == 1 and len(found_b) == 1:
            assert found_a.keys() != found_b.keys(), row
            checked_random += 1
    assert checked_random > 150


def test_fresh_masks_every_epoch(training_rows):
    """The same pair, met again in a later pass, gets other masked positions."""
    rows = training_rows
    occurrences = collections.Counter()
    masks = collections.defaultdict(set)
    for row, ids in enumerate(_unmasked(rows)):
        weights = rows["masked_lm_weights"][row] > 0
        occurrences[ids.tobytes()] += 1
        masks[ids.tobytes()].add(rows["masked_lm_positions"][row][weights].tobytes())
    seen_again = [(len(masks[key]), count) for key, count in occurrences.items()
                  if count >= 2]
    assert len(seen_again) >= 20
    # Static masks (the TFRecord route) would repeat; fresh ones never do.
    assert np.mean([distinct == count for distinct, count in seen_again]) > 0.95


@pytest.fixture(scope="module")
def whole_word_eval(corpus_part, uncased_vocab_file):
    """A seeded evaluation pass with whole-word masking, and its first 1280 pairs."""
    options = PretrainingDataOptions(max_seq_length=SEQ, max_predictions_per_seq=PRED,
                                     do_whole_word_mask=True)
    ds = DynamicPretrainingData(uncased_vocab_file, options).dataset(
        corpus_part, batch_size=64, is_training=False, seed=2)
    return ds, _rows(ds, 20)


def test_seeded_evaluation_is_reproducible(whole_word_eval):
    ds, first = whole_word_eval
    again = _rows(ds, 20)
    for name in first:
        np.testing.assert_array_equal(first[name], again[name])


def test_evaluation_pairs_are_half_random_next(tmp_path, uncased_vocab_file):
    """An evaluation pass mixes documents too: its batches of one long document's
    consecutive pairs had no other document to take a B from (8% random next).
    Every dataset of one pipeline (a run's split checks, training, evaluation)
    reuses its traces: the document function's one and the group function's one,
    whatever the batch size."""
    corpus = str(corpus_head(tmp_path, lines=400))  # 5 documents of 30 to 128 lines
    options = PretrainingDataOptions(max_seq_length=64, max_predictions_per_seq=10)
    data = DynamicPretrainingData(uncased_vocab_file, options)
    rows = _rows(data.dataset(corpus, batch_size=8, is_training=False, seed=2))
    labels = rows["next_sentence_labels"]
    assert len(labels) == 176 and abs(labels.mean() - 0.5) < 0.1, labels.mean()
    next(iter(data.dataset(corpus, batch_size=1, is_training=True, shuffle_buffer_size=1)))
    assert data._pairs_of_document.experimental_get_tracing_count() == 1
    assert data._features_of_group.experimental_get_tracing_count() == 1


@pytest.mark.parametrize("is_training", [True, False])
def test_the_examples_do_not_depend_on_the_batch_size(tmp_path, uncased_vocab_file,
                                                      is_training):
    """A stream's batch of 8 is its two batches of 4, and batches of one sequence are
    half random next too. Drawn per batch, a batch of one (`--gradient_accumulation_steps`
    at the batch size, one sequence per replica, `--eval_batch_size=1`) had no other
    document to take a B from: every label was "is next", and the model learned that."""
    corpus = str(corpus_head(tmp_path, lines=400))
    options = PretrainingDataOptions(max_seq_length=64, max_predictions_per_seq=10)
    data = DynamicPretrainingData(uncased_vocab_file, options)

    def rows(batch_size):
        return _rows(data.dataset(corpus, batch_size, is_training, seed=3), 128 // batch_size)

    by_eight, by_one = rows(8), rows(1)
    for name, values in rows(4).items():
        np.testing.assert_array_equal(values, by_eight[name], err_msg=name)
        np.testing.assert_array_equal(by_one[name], by_eight[name], err_msg=name)
    assert abs(by_one["next_sentence_labels"].mean() - 0.5) < 0.15


def test_whole_word_masking_takes_whole_words(whole_word_eval, uncased_vocab_file):
    vocab = [line.rstrip("\n") for line in open(uncased_vocab_file, encoding="utf-8")]
    continuation = np.array([t.startswith("##") for t in vocab])
    rows = whole_word_eval[1]
    ids = _unmasked(rows)
    lengths = rows["input_mask"].sum(axis=1)
    multi_piece_words, filled = 0, []
    for row in range(len(ids)):
        weights = rows["masked_lm_weights"][row] > 0
        chosen = np.zeros(SEQ, bool)
        chosen[rows["masked_lm_positions"][row][weights]] = True
        budget = min(PRED, max(1, round(0.15 * lengths[row])))
        assert 0 < chosen.sum() <= budget
        filled.append(chosen.sum() / budget)
        special = np.isin(ids[row], [CLS, SEP, 0])
        joins = continuation[ids[row]] & ~special & np.r_[False, ~special[:-1]]
        # A piece joined to the previous token is chosen exactly when it is.
        assert (chosen[1:][joins[1:]] == chosen[:-1][joins[1:]]).all(), row
        multi_piece_words += (chosen[1:] & joins[1:]).sum()
    assert multi_piece_words > 100
    assert np.mean(filled) > 0.97  # skipping words that overflow keeps ~15%
    assert abs(rows["next_sentence_labels"].mean() - 0.5) < 0.06


def test_trimming_follows_the_original_loop():
    """Kept lengths equal the original's loop; cuts split front/back evenly."""
    rng = np.random.default_rng(0)
    la, lb = rng.integers(1, 200, 2000), rng.integers(1, 200, 2000)
    a = tf.RaggedTensor.from_row_lengths(tf.range(la.sum(), dtype=tf.int64), la)
    b = tf.RaggedTensor.from_row_lengths(tf.range(lb.sum(), dtype=tf.int64), lb)
    ta, tb = dynamic_pairs.trim_pair(a, b, 125, 0.0, tf.constant([4, 2]))
    a, b, ta, tb = (np.array(x.to_list(), dtype=object) for x in (a, b, ta, tb))
    fronts, cuts = 0, 0
    for row in range(2000):
        keep_a, keep_b = int(la[row]), int(lb[row])
        while keep_a + keep_b > 125:  # the original: trim the longer, B on ties
            if keep_a > keep_b:
                keep_a -= 1
            else:
                keep_b -= 1
        for kept, original, keep in ((ta[row], a[row], keep_a), (tb[row], b[row], keep_b)):
            kept, original = np.array(kept), np.array(original)
            assert len(kept) == keep
            front = kept[0] - original[0]
            np.testing.assert_array_equal(kept, original[front:front + keep])
            fronts, cuts = fronts + front, cuts + len(original) - keep
    assert cuts > 10000 and abs(fronts / cuts - 0.5) < 0.02


@pytest.mark.parametrize("prob, outcomes", [
    (0.5, {(1, 2, 3, 5)}),      # round(3.5) = 4: both words fit, in either order
    (0.43, {(1, 2, 3), (5,)}),  # round(3.01) = 3: the word drawn second is skipped
])
def test_masker_groups_and_skips_whole_words(prob, outcomes):
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "##b", "c"]
    masker = DynamicMasker(vocab, masked_lm_prob=prob, max_predictions_per_seq=4,
                           do_whole_word_mask=True)
    ids = tf.constant([[2, 5, 6, 6, 3, 7, 3, 0]] * 200)  # [CLS] a ##b ##b [SEP] c [SEP]
    out = {k: v.numpy() for k, v in masker(ids, tf.cast(ids > 0, tf.int32),
                                           tf.constant([0, 1])).items()}
    weights = out["masked_lm_weights"] > 0
    chosen = collections.Counter(tuple(p[w]) for p, w in zip(out["masked_lm_positions"],
                                                            weights))
    assert set(chosen) == outcomes
    assert min(chosen.values()) > 60  # each order about half the time
    np.testing.assert_array_equal(out["masked_lm_ids"][weights],
                                  ids.numpy()[0][out["masked_lm_positions"][weights]])


def test_bad_inputs_are_named(tmp_path, uncased_vocab_file):
    data = DynamicPretrainingData(uncased_vocab_file, OPTIONS)
    with pytest.raises(ValueError, match="nothing-here"):
        data.dataset(str(tmp_path / "nothing-here*.txt"), 8, True)
    bad_vocab = tmp_path / "vocab.txt"
    bad_vocab.write_text("[PAD]\n[UNK]\n[CLS]\n[SEP]\nhello\n")
    with pytest.raises(ValueError, match=r"vocab.txt.*\[MASK\]"):
        DynamicPretrainingData(str(bad_vocab), OPTIONS)
    with pytest.raises(ValueError, match="max_predictions_per_seq"):
        DynamicPretrainingData(uncased_vocab_file, PretrainingDataOptions(
            max_seq_length=16, max_predictions_per_seq=20))
    # The reader of the static modes, with its checks: no binary file passes for text.
    records = tmp_path / "out.tfrecord"
    records.write_bytes(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord").read_bytes())
    with pytest.raises(ValueError, match="out.tfrecord: not a text file"):
        data.dataset(f"{shared_path('corpus', 'sample_text.txt')},{tmp_path}/*", 8, True)
