"""Word-piece alignment (vs HF's tokenizer), windows and max-context choice, and the inverse."""

import numpy as np
import pytest
import transformers

from bert_tf.tasks import conll_data, tagging_features
from bert_tf.tasks.entity_metrics import entity_scores
from bert_tf.tokenization import FullTokenizer
from tests_shared import shared_path

LABELS = conll_data.bio_labels()
SOME = 1000  # sentences for the slower checks


@pytest.fixture(scope="module")
def dev_sentences():
    return conll_data.read_conll(shared_path("conll2003", "eng.testa"), "dev")


@pytest.fixture(scope="module")
def tokenizer():
    return FullTokenizer(str(shared_path("vocab", "bert-base-uncased-vocab.txt")))


@pytest.fixture(scope="module")
def hf_pieces(dev_sentences):
    """Per sentence, HF's ids and the word index of every token ([CLS]/[SEP] None)."""
    hf = transformers.BertTokenizerFast(
        vocab_file=str(shared_path("vocab", "bert-base-uncased-vocab.txt")), do_lower_case=True)
    encoded = hf([list(s.words) for s in dev_sentences], is_split_into_words=True)
    return [(encoded["input_ids"][i], encoded.word_ids(i)) for i in range(len(dev_sentences))]


def test_whole_sentences_align_like_hf(dev_sentences, tokenizer, hf_pieces):
    windows = tagging_features.tagging_windows(dev_sentences, tokenizer, LABELS, 512,
                                               doc_stride=64)
    assert len(windows) == len(dev_sentences)
    for window, sentence, (ids, word_ids) in zip(windows, dev_sentences, hf_pieces):
        assert list(window.input_ids) == ids
        first = [word_ids.index(word) for word in range(len(sentence.words))]
        assert list(window.first_pieces) == first
        assert [window.label_ids[p] for p in first] == [LABELS.index(t) for t in sentence.tags]
        assert [window.label_weights[p] for p in first] == [1.0] * len(first)
        assert sum(window.label_weights) == len(first)
        assert sum(window.label_ids) == sum(window.label_ids[p] for p in first)


def _context_score(position, window_start, window_length):
    """The SQuAD runner's rule, in piece coordinates of the whole sentence."""
    left, right = position - window_start, window_start + window_length - 1 - position
    return min(left, right) + 0.01 * window_length


@pytest.mark.parametrize("max_seq_length, doc_stride", [(16, 5), (24, 128), (13, 1)])
def test_windows_of_long_sentences(dev_sentences, tokenizer, hf_pieces, max_seq_length,
                                   doc_stride):
    dev_sentences = dev_sentences[:SOME]
    windows = tagging_features.tagging_windows(dev_sentences, tokenizer, LABELS,
                                               max_seq_length, doc_stride)
    by_sentence = [[] for _ in dev_sentences]
    for window in windows:
        by_sentence[window.sentence_index].append(window)
    assert sum(len(w) > 1 for w in by_sentence) > 50
    for sentence, sentence_windows, (ids, word_ids) in zip(dev_sentences, by_sentence, hf_pieces):
        words = len(sentence.words)
        pieces = [[i for i, w in zip(ids, word_ids) if w == word] for word in range(words)]
        offsets = np.cumsum([0] + [len(p) for p in pieces])
        assert sentence_windows[0].word_start == 0 and sentence_windows[-1].word_end == words
        spans = []
        for window in sentence_windows:
            start, end = window.word_start, window.word_end
            assert list(window.input_ids) == [101] + sum(pieces[start:end], []) + [102]
            assert len(window.input_ids) <= max_seq_length
            # Greedy: the next word would not have fitted.
            assert end == words or offsets[end + 1] - offsets[start] > max_seq_length - 2
            spans.append((offsets[start], offsets[end] - offsets[start]))
        for before, after in zip(sentence_windows, sentence_windows[1:]):
            assert before.word_start < after.word_start <= before.word_end
            # The start moved at least doc_stride pieces (or a whole window), at most one word more.
            step = min(doc_stride, offsets[before.word_end] - offsets[before.word_start])
            assert offsets[after.word_start] - offsets[before.word_start] >= step
            assert offsets[after.word_start - 1] - offsets[before.word_start] < step
        for word in range(words):
            scored_in = [i for i, w in enumerate(sentence_windows)
                         if w.word_start <= word < w.word_end
                         and w.label_weights[w.first_pieces[word - w.word_start]] == 1.0]
            candidates = [(_context_score(offsets[word], s, n), -i)
                          for i, (s, n) in enumerate(spans)
                          if s <= offsets[word] < s + n]
            assert scored_in == [-max(candidates)[1]]


def test_word_logits_read_each_word_from_its_scoring_window(dev_sentences, tokenizer):
    dev_sentences = dev_sentences[:SOME]
    windows = tagging_features.tagging_windows(dev_sentences, tokenizer, LABELS, 16, 5)
    columns = tagging_features.window_columns(windows, 16)
    assert columns["input_mask"].sum() == sum(len(w.input_ids) for w in windows)
    assert not columns["segment_ids"].any()
    # The gold label where a word is scored, a wrong one everywhere else.
    weights, labels = columns["label_weights"], columns["label_ids"]
    shown = np.where(weights == 1.0, labels, (labels + 1) % len(LABELS))
    logits = np.eye(len(LABELS), dtype=np.float32)[shown]
    lengths = [len(s.words) for s in dev_sentences]
    tags = tagging_features.predicted_tags(windows, logits, lengths, LABELS)
    assert tags == [s.tags for s in dev_sentences]
    assert entity_scores([s.tags for s in dev_sentences], tags).overall.f1 == 1.0
    with pytest.raises(ValueError, match="rows of logits"):
        tagging_features.word_logits(windows, logits[:-1], lengths)


def test_word_without_pieces_becomes_unk(tokenizer):
    sentence = conll_data.TaggedSentence("s", ("Hi", "\u200b", "Bob"), ("O", "O", "B-PER"), 1)
    (window,) = tagging_features.tagging_windows([sentence], tokenizer, LABELS, 8, doc_stride=4)
    assert window.input_ids == (101, 7632, 100, 3960, 102)
    assert window.label_weights == (0.0, 1.0, 1.0, 1.0, 0.0)


def test_word_longer_than_a_window_is_an_error(tokenizer):
    sentences = [conll_data.TaggedSentence("s", ("a",), ("O",), 1),
                 conll_data.TaggedSentence("t", ("a", "antidisestablishmentarianism"),
                                           ("O", "B-MISC"), 3)]
    with pytest.raises(tagging_features.WindowError,
                       match=r"sentence t \(line 3\): word 1 has \d+ word pieces, more than "
                             r"the 4 a window holds; raise max_seq_length above 6"):
        tagging_features.tagging_windows(sentences, tokenizer, LABELS, 6, doc_stride=2)
