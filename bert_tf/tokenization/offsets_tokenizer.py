"""`OffsetsTokenizer`: WordPiece ids in the graph, with where each piece is in the raw text.

Span answers and entity spans must be cut from the text the user sent, not
from its lower-cased, accent-stripped form, so every piece carries the
character span of the original string it comes from. The tokens are the
same as `BertTokenizerLayer`'s (and `FullTokenizer`'s); the offsets are
tracked through each step:

1. fold (`GraphBasicTokenizer.fold_code_points`): each folded code point
   keeps the stretch of the original it stands for: the character it was
   folded from (a character may fold to none, one or several) and the
   accents lower-casing strips after it;
2. split the folded text on spaces and around punctuation and CJK (one
   regex split with byte offsets into the folded text);
3. WordPiece each word (`FastWordpieceTokenizer.tokenize_with_offsets`; a
   word over 200 characters is one `[UNK]` spanning it);
4. map each piece's first and last folded byte back to the original
   characters they were folded from.

Offsets count Unicode code points of the UTF-8 decoded string (Python `str`
indices); `text[start:end]` is the piece's stretch of the original. An
accent written as a combining mark, which lower-casing strips, belongs to
the piece before it, as to its letter: `"Jose\u0301"` is one piece
spanning all five characters. Deleted controls (a zero-width space, say)
at a piece's edges are left out. Invalid UTF-8 bytes are dropped before
counting.
"""

import collections

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.tokenization import unicode_tables
from bert_tf.tokenization.fast_wordpiece import UNK_TOKEN, fast_wordpiece
from bert_tf.tokenization.graph_basic_tokenizer import GraphBasicTokenizer
from bert_tf.tokenization.string_batch_function import StringBatchFunction
from bert_tf.tokenization.vocab import vocabulary_list
from bert_tf.tokenization.wordpiece import MAX_INPUT_CHARS_PER_WORD

PieceOffsets = collections.namedtuple("PieceOffsets", ["ids", "starts", "ends", "words"])
PieceOffsets.__doc__ = """WordPiece ids, the [start, end) character span of each piece, its word.

All four are ragged tensors [N, None] of the same shape: `ids`, `starts`
and `ends` int32, `words` int64: the index of the piece's word (the basic tokenizer's
whitespace- and punctuation-split word) within its text.
"""


class OffsetsTokenizer:
    """Tokenizes strings like `FullTokenizer`, keeping each piece's span in the input.

    Args:
        vocabulary: path of a vocabulary file, or the list of its tokens.
        do_lower_case: lower-case and strip accents (uncased models).

    Example:

    >>> vocab = ["[UNK]", "[CLS]", "[SEP]", "un", "##want", "##ed", ",", "caf", "##e"]
    >>> text = "UNwant\\u00e9d, Cafe\\u0301!"
    >>> pieces = OffsetsTokenizer(vocab)(tf.constant([text]))
    >>> pieces.ids.to_list()
    [[3, 4, 5, 6, 7, 8, 0]]
    >>> print(ascii([text[s:e] for s, e in zip(pieces.starts[0].numpy(),
    ...                                           pieces.ends[0].numpy())]))
    ['UN', 'want', '\\xe9d', ',', 'Caf', 'e\\u0301', '!']
    >>> pieces.words.to_list()
    [[0, 0, 0, 1, 2, 2, 3]]
    """

    def __init__(self, vocabulary, do_lower_case=True):
        self.vocabulary = vocabulary_list(vocabulary)
        self.do_lower_case = bool(do_lower_case)
        self._basic = GraphBasicTokenizer(self.do_lower_case)
        self._wordpiece = fast_wordpiece(self.vocabulary)
        solo = unicode_tables.solo_class()
        self._split = (f"\\s|{solo}", solo)
        self._offsets_of_batch = StringBatchFunction(self._offsets)

    def __call__(self, text):
        """The `PieceOffsets` of `text` (tf.string [N]), traced once whatever calls it."""
        return self._offsets_of_batch(text)

    def _offsets(self, text):
        folded, sources, source_ends = self._basic.fold_code_points(text)
        words, word_starts, _ = tf_text.regex_split_with_offsets(
            tf.strings.unicode_encode(folded, "UTF-8"), *self._split)
        flat = words.flat_values
        too_long = tf.strings.length(flat, unit="UTF8_CHAR") > MAX_INPUT_CHARS_PER_WORD
        ids, starts, ends = self._wordpiece.tokenize_with_offsets(
            tf.where(too_long, UNK_TOKEN, flat))
        # Byte offsets of each piece in its row's folded string; an [UNK]
        # for a long word spans the word, not the string "[UNK]".
        piece_word = ids.value_rowids()
        word_start = tf.gather(word_starts.flat_values, piece_word)
        piece_starts = starts.values + word_start
        piece_ends = word_start + tf.where(tf.gather(too_long, piece_word),
                                           tf.gather(tf.cast(tf.strings.length(flat), tf.int64),
                                                     piece_word),
                                           ends.values)
        piece_rows = tf.gather(words.value_rowids(), piece_word)
        first = self._folded_char_at(folded, piece_rows, piece_starts)
        last = self._folded_char_at(folded, piece_rows, piece_ends - 1)
        per_piece = words.with_values(ids).merge_dims(1, 2)
        word_in_text = piece_word - tf.gather(words.row_starts(), piece_rows)
        return PieceOffsets(per_piece,
                            per_piece.with_values(tf.gather(sources.flat_values, first)),
                            per_piece.with_values(tf.gather(source_ends.flat_values, last)),
                            per_piece.with_values(word_in_text))

    @staticmethod
    def _folded_char_at(folded, rows, byte_offsets):
        """Flat index into `folded.flat_values` of the code point holding each byte.

        `byte_offsets[i]` is an offset into the folded string of row `rows[i]`.
        """
        code_points = folded.flat_values
        utf8_length = (1 + tf.cast(code_points >= 0x80, tf.int64)
                       + tf.cast(code_points >= 0x800, tf.int64)
                       + tf.cast(code_points >= 0x10000, tf.int64))
        # Each code point's first byte, counting all rows end to end.
        char_starts = tf.cumsum(utf8_length, exclusive=True)
        row_starts = tf.gather(tf.concat([char_starts, [tf.reduce_sum(utf8_length)]], 0),
                               folded.row_splits)
        absolute = byte_offsets + tf.gather(row_starts, rows)
        return tf.searchsorted(char_starts, absolute, side="right") - 1
