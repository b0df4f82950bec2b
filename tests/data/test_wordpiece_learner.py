"""Our WordPiece learner gives tensorflow-text's learner's vocabulary, entry for entry."""

import pytest
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as tf_text

from tests_shared import corpus_head
from bert_tf.data import vocab_learning, wordpiece_learner


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    """The first 1000 lines of the Gutenberg pretraining corpus."""
    return str(corpus_head(tmp_path_factory.mktemp("corpus")))


@pytest.mark.parametrize("lower_case,vocab_size,min_count,max_unique_chars", [
    (True, 1000, 2, 1000),  # lands within the slack
    (False, 3000, 3, 40),  # runs out of thresholds; rare characters drop their words
])
def test_real_words_give_tensorflow_texts_vocabulary(corpus, lower_case, vocab_size,
                                                     min_count, max_unique_chars):
    counts = vocab_learning.count_words(corpus, lower_case)
    reserved = vocab_learning.reserved_tokens(99)
    ours = wordpiece_learner.learn(counts, vocab_size, reserved, min_count=min_count,
                                   max_unique_chars=max_unique_chars)
    theirs = tf_text.learn(counts, vocab_size, reserved, lower_thresh=min_count,
                           max_unique_chars=max_unique_chars)
    assert len(ours) > len(reserved) + 200
    assert ours == theirs


def test_shared_prefixes_and_suffixes_near_the_threshold():
    """Words that share pieces, with counts on both sides of the thresholds tried."""
    stems = ["walk", "talk", "jump", "play", "stay", "say", "un", "re", "a", "aa", "aaa"]
    endings = ["", "s", "ed", "ing", "ings", "er", "ers", "aa", "a"]
    counts = {stem + ending: 1 + (7 * i + 3 * j) % 23
              for i, stem in enumerate(stems) for j, ending in enumerate(endings)}
    counts.update({"reaaaa": 40, "aaaaaa": 17, "x": 1, "yy": 2, "": 9})
    for vocab_size, min_count in ((60, 1), (80, 3), (120, 2), (200, 5)):
        ours = wordpiece_learner.learn(counts, vocab_size, ["[PAD]"], min_count=min_count)
        assert ours == tf_text.learn(counts, vocab_size, ["[PAD]"], lower_thresh=min_count)


def test_min_count_below_one_is_refused():
    with pytest.raises(ValueError, match="min_count must be at least 1, got 0"):
        wordpiece_learner.learn({"word": 3}, 100, ["[PAD]"], min_count=0)
