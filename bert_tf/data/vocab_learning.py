"""Learning a WordPiece vocabulary from a corpus, laid out like the original's.

To pretrain on a new language or domain, a vocabulary must first be learned
from its text. This module splits the corpus into words exactly as the
original basic tokenizer does (`GraphBasicTokenizer`, in tf.data), counts
them in the graph, and hands the counts to `wordpiece_learner`:
tensorflow-text's WordPiece learner (the algorithm behind
`bert_vocab_from_dataset`), with its output, about 7x faster. We do not use
`bert_vocab_from_dataset` because it splits words with tensorflow-text's
own basic tokenizer, whose lower-casing case-folds (`ß` becomes `ss`, see
docs/ORIGINAL_BEHAVIOUR.md) and so learns pieces the original tokenizer
never produces.

The reserved entries come first, as in the released vocabularies:

    0            [PAD]
    1 .. 99      [unused0] .. [unused98]
    100 .. 103   [UNK] [CLS] [SEP] [MASK]
    104 ..       [unused99] ..   (only when num_unused > 99)
    then         every character of the corpus, its `##` form, and the
                 learned pieces by decreasing count.

With num_unused=994 the first 999 entries equal those of the released
uncased vocabulary. Unused entries let users add tokens later without
resizing the embedding table.
"""

import collections

import tensorflow as tf
from absl import logging

from bert_tf.atomic_files import write_text
from bert_tf.data import wordpiece_learner
from bert_tf.data.input_files import check_text_file, expand_input_patterns
from bert_tf.errors import UsageError
from bert_tf.text_files import NotUtf8Error, utf8_lines
from bert_tf.tokenization.graph_basic_tokenizer import GraphBasicTokenizer
from bert_tf.work_progress import WorkProgress

# The original layout puts this many [unused*] entries before [UNK].
_UNUSED_BEFORE_SPECIALS = 99
SPECIAL_TOKENS = ("[UNK]", "[CLS]", "[SEP]", "[MASK]")


def reserved_tokens(num_unused=99):
    """The vocabulary's first entries: [PAD], [unused*], [UNK], [CLS], [SEP], [MASK].

    The first 99 unused entries go before [UNK] (so [UNK] is id 100 as in the
    original), the rest after [MASK].
    """
    if num_unused < 0:
        raise ValueError(f"num_unused must be >= 0, got {num_unused}")
    unused = [f"[unused{i}]" for i in range(num_unused)]
    before = unused[:_UNUSED_BEFORE_SPECIALS]
    after = unused[_UNUSED_BEFORE_SPECIALS:]
    return ["[PAD]"] + before + list(SPECIAL_TOKENS) + after


def count_words(text_files, lower_case=True, batch_size=4096):
    """Counts the basic-tokenizer words of text files.

    Logs the megabytes read, the rate and the time left about every 10 s
    (`work_progress`): 14 MB/s on 2 cores, so a 10 GB corpus takes some 12 min.

    Args:
      text_files: comma-separated globs or a list of globs.
      lower_case: lower-case and strip accents, as the tokenizer will.
      batch_size: lines per tokenizer call.

    Returns:
      `collections.Counter` of word (str) -> occurrences.

    Raises:
      ValueError: naming the files, if a pattern matches no file, a file is
        not text, or the files hold no word (blank lines only).
    """
    files = expand_input_patterns(text_files)
    for path in files:
        check_text_file(path)
    tokenizer = GraphBasicTokenizer(do_lower_case=lower_case)

    def unique_words(lines):
        words, _, counts = tf.unique_with_counts(tokenizer(lines).flat_values)
        line_bytes = tf.reduce_sum(tf.strings.length(lines)) + tf.size(lines)  # "\n"s too
        decoded = tf.strings.unicode_transcode(lines, "UTF-8", "UTF-8", errors="replace")
        return words, counts, line_bytes, tf.reduce_sum(tf.cast(decoded != lines, tf.int64))

    lines = tf.data.TextLineDataset(files).batch(batch_size)
    total_bytes = sum(tf.io.gfile.stat(path).length for path in files)
    progress = WorkProgress("counting words", total=total_bytes / 1e6, unit="MB")
    counts = collections.Counter()
    not_utf8 = 0
    for words, word_counts, line_bytes, bad_lines in lines.map(
            unique_words, num_parallel_calls=tf.data.AUTOTUNE):
        counts.update(dict(zip(words.numpy().tolist(), word_counts.numpy().tolist())))
        progress.advance(int(line_bytes) / 1e6)
        not_utf8 += int(bad_lines)
    progress.close()
    if not_utf8:
        _warn_not_utf8(files, not_utf8)
    if not counts:
        named = ", ".join(files[:3]) + (f" and {len(files) - 3} more" if len(files) > 3 else "")
        raise ValueError(f"{named}: no words to learn from (the text is blank)")
    return collections.Counter(
        {word.decode("utf-8"): count for word, count in counts.items()})


def _warn_not_utf8(files, num_lines):
    """Warns, naming the first file and line, that `num_lines` lines hold bytes that are not UTF-8.

    The tokenizer drops such bytes (`caf\\xe9` counts as `caf`), so a corpus
    in another encoding would lose its accented letters without a word;
    `check_text_file` sees only the start of each file.
    """
    for path in files:
        try:
            collections.deque(utf8_lines(path), maxlen=0)
        except NotUtf8Error as error:
            logging.warning("%s; %d lines in all hold bytes that are not UTF-8, left out of "
                            "the words learned", error, num_lines)
            return


def learn_wordpiece_vocab(text_files, vocab_size, lower_case=True, num_unused=99,
                          min_count=10, max_unique_chars=1000):
    """Learns a WordPiece vocabulary from text files.

    Example:

    >>> import os, tempfile
    >>> corpus = os.path.join(tempfile.mkdtemp(), "corpus.txt")
    >>> _ = open(corpus, "w").write("The cat sat on the mat.\\nThe dog sat too.\\n" * 20)
    >>> vocab = learn_wordpiece_vocab(corpus, vocab_size=150, min_count=2)
    >>> vocab[0], vocab[100], vocab[103], "the" in vocab, len(vocab) <= 150
    ('[PAD]', '[UNK]', '[MASK]', True, True)

    Args:
      text_files: comma-separated globs or a list of globs; any text, though
        the pretraining format (one sentence per line) is the usual input.
      vocab_size: the most entries, reserved ones included. The learner
        searches a count threshold that lands within 5% below it; a small
        corpus may give fewer entries (lower `min_count`).
      lower_case: lower-case and strip accents (an uncased vocabulary).
      num_unused: [unused*] entries reserved for later use (994 in the
        released vocabularies).
      min_count: lowest piece count the learner's threshold search tries
        (at least 1).
      max_unique_chars: alphabet size; words with rarer characters are left
        out of learning (they tokenize to [UNK]).

    Returns:
      The vocabulary as a list of tokens, id order.

    Raises:
      UsageError: vocab_size leaves no room beyond the reserved entries and
        the corpus' characters (each with its `##` form), which every
        vocabulary keeps so that every word can be spelled.
      ValueError: as `count_words` (bad input files), or min_count is below 1.
    """
    reserved = reserved_tokens(num_unused)
    if vocab_size <= len(reserved):
        raise UsageError(f"vocab_size={vocab_size} leaves no room after the "
                         f"{len(reserved)} reserved entries")
    counts = count_words(text_files, lower_case)
    vocab = wordpiece_learner.learn(counts, vocab_size, reserved, min_count=min_count,
                                    max_unique_chars=max_unique_chars)
    if len(vocab) > vocab_size:
        logging.warning("learner returned %d entries for vocab_size=%d; dropping "
                        "the rarest pieces", len(vocab), vocab_size)
        vocab = _drop_rarest_pieces(vocab, vocab_size, len(reserved))
    if len(vocab) > vocab_size:  # the reserved entries and the alphabet alone are too many
        raise UsageError(f"vocab_size={vocab_size} is too small for this corpus: the "
                         f"{len(reserved)} reserved entries, its characters and their ## forms "
                         f"take {len(vocab)}; give at least that, or a lower max_unique_chars")
    logging.info("learned %d entries (%d reserved) from %d distinct words",
                 len(vocab), len(reserved), len(counts))
    return vocab


def _drop_rarest_pieces(vocab, size, num_reserved):
    """Shortens `vocab` to `size` by its last multi-character pieces.

    The learner lists pieces by decreasing count, so these are the rarest;
    reserved entries, characters and their `##` forms all stay, so every
    word the alphabet can spell still tokenizes.
    """
    excess = len(vocab) - size
    dropped = set()
    for index in range(len(vocab) - 1, num_reserved - 1, -1):
        if len(dropped) == excess:
            break
        if len(vocab[index].removeprefix("##")) > 1:
            dropped.add(index)
    return [token for i, token in enumerate(vocab) if i not in dropped]


def write_vocab(vocab, path):
    """Writes one token per line, as the original's vocab.txt."""
    write_text(path, "".join(token + "\n" for token in vocab))
