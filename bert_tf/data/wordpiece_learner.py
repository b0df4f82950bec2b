"""tensorflow-text's WordPiece vocabulary learner, with the same output, many times faster.

tensorflow-text's learner (`wordpiece_tokenizer_learner_lib.learn`, the
algorithm behind `bert_vocab_from_dataset`) bisects a count threshold; for
each threshold it runs four rounds, and a round

1. splits every word at its split points (every character in the first
   round, then greedy longest-match against the previous round's tokens),
2. counts every substring that begins at a split point (with `##` when it
   does not begin the word),
3. walks the substrings from longest to shortest, subtracting each one's
   count from every shorter substring it begins with,
4. keeps the substrings whose count is still at least the threshold.

Step 3 leaves each substring with exactly the count of the words whose
remainder, from one of their split points to their end, is that substring:
a substring's count in step 2 sums the remainders it begins, and step 3
takes away all but the remainder equal to it. So a round only has to count
each word's remainders, one per split point, instead of every substring
(quadratic in the word's length); and the first round, which splits at
every character whatever the threshold, is counted once for all
thresholds. The input filters, the threshold's bounds and the final
ordering are tensorflow-text's own functions, called as they are.
`tests/data/test_wordpiece_learner.py` holds the output equal to
tensorflow-text's on real text; `bench/vocab_learning_speed.py` times both.
"""

import collections
import math

from absl import logging
from tensorflow_text.tools.wordpiece_vocab import wordpiece_tokenizer_learner_lib as tf_text

JOINER = "##"
# tensorflow-text's defaults for what this module does not expose.
_ROUNDS = 4
_UPPER_THRESHOLD = int(1e7)
_MAX_INPUT_WORDS = int(5e6)
_MAX_TOKEN_LENGTH = 50
_SLACK_RATIO = 0.05


def learn(word_counts, vocab_size, reserved_tokens, min_count=10, max_unique_chars=1000):
    """The vocabulary tensorflow-text's `learn` returns for the same arguments.

    Example:

    >>> counts = {"walking": 4, "talking": 4, "jumping": 4, "walked": 4, "talked": 4,
    ...           "jumped": 4, "the": 30}
    >>> vocab = learn(counts, vocab_size=40, reserved_tokens=["[PAD]"], min_count=8)
    >>> vocab[:5], vocab[16:19], vocab[-2:]
    (['[PAD]', 'a', 'd', 'e', 'g'], ['the', '##alked', '##alking'], ['##u', '##w'])

    Args:
        word_counts: `{word: count}` or `(word, count)` pairs.
        vocab_size: the most entries; the threshold search stops within 5%
            below it (or when it runs out of thresholds).
        reserved_tokens: entries that come first, in this order.
        min_count: the lowest threshold tried (tensorflow-text's
            `lower_thresh`); at least 1.
        max_unique_chars: alphabet size; words with rarer characters are
            left out.

    Returns:
        The vocabulary, a list of tokens: the reserved ones, every character
        of the kept words, then every kept piece (the learned ones and the
        characters' `##` forms) by decreasing count, ties alphabetical.

    Raises:
        ValueError: `min_count` below 1.
    """
    # Below 1, substrings counted zero times would be kept too; only
    # remainders are counted here, so that case would differ.
    if min_count < 1:
        raise ValueError(f"min_count must be at least 1, got {min_count}")
    if isinstance(word_counts, dict):
        word_counts = list(word_counts.items())
    upper, lower = tf_text.get_search_threshs(word_counts, _UPPER_THRESHOLD, min_count)
    words = tf_text.get_input_words(word_counts, reserved_tokens, _MAX_TOKEN_LENGTH)
    words = tf_text.filter_input_words(
        words, tf_text.get_allowed_chars(words, max_unique_chars), _MAX_INPUT_WORDS)
    # An empty word has no pieces: tensorflow-text counts nothing for it.
    words = [(word, count) for word, count in words if word]
    characters = tf_text.extract_char_tokens(words)
    first_round = _remainder_counts(words, _every_remainder)

    def vocab_for(threshold):
        tokens = _kept(first_round, threshold, characters)
        for _ in range(_ROUNDS - 1):
            tokens = _kept(_remainder_counts(words, _greedy_remainders(tokens)), threshold,
                           characters)
        return tf_text.generate_final_vocabulary(reserved_tokens, characters, tokens)

    return _bisect_threshold(vocab_for, lower, upper, vocab_size)


def _bisect_threshold(vocab_for, lower, upper, vocab_size):
    """tensorflow-text's search: bisects until a vocabulary is within the slack."""
    slack = max(_SLACK_RATIO * vocab_size, 0)
    while True:
        threshold = (upper + lower) // 2
        vocab = vocab_for(threshold)
        logging.info("pieces counted at least %d times: %d entries (wanted %d-%d)",
                     threshold, len(vocab), math.ceil(vocab_size - slack), vocab_size)
        if (vocab_size - slack <= len(vocab) <= vocab_size or lower >= upper
                or threshold <= 1):
            return vocab
        if len(vocab) > vocab_size:
            lower = threshold + 1
        else:
            upper = threshold - 1


def _remainder_counts(words, remainders):
    """`{piece: count}`: each word's count added to each of its `remainders(word)`."""
    counts = collections.defaultdict(int)
    for word, count in words:
        for piece in remainders(word):
            counts[piece] += count
    return counts


def _every_remainder(word):
    """The first round's split points, every character: `word`, `##ord`, `##rd`, `##d`."""
    return [word] + [JOINER + word[start:] for start in range(1, len(word))]


def _greedy_remainders(tokens):
    """`remainders(word)`: its remainders at greedy longest-match split points.

    Every character of every word is a token both ways, so the match never
    fails. A word's split after its first piece depends only on what is
    left, so each distinct rest is split once.
    """
    splits_of_rest = {}

    def split(text, joiner):
        end = len(text)
        while joiner + text[:end] not in tokens:
            end -= 1
        rest = text[end:]
        if not rest:
            return (joiner + text,)
        if rest not in splits_of_rest:
            splits_of_rest[rest] = split(rest, JOINER)
        return (joiner + text,) + splits_of_rest[rest]

    return lambda word: split(word, "")


def _kept(counts, threshold, characters):
    """The pieces counted at least `threshold` times, plus every character both ways."""
    kept = {piece: count for piece, count in counts.items() if count >= threshold}
    return tf_text.ensure_all_tokens_exist(characters, kept, True, JOINER)
