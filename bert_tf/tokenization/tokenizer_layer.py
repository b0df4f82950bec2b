"""`BertTokenizerLayer`: raw strings -> WordPiece ids, inside the TF graph.

The in-graph twin of `FullTokenizer`, with the same ids for every input:
`GraphBasicTokenizer` folds the text (cleaning, lower-casing, accents)
exactly as the original's basic tokenizer does, then tensorflow-text's
`FastWordpieceTokenizer` (which implements the same greedy
longest-match-first algorithm) splits it into pieces. Its own lower-casing
is never used: it differs from the original's (see `graph_basic_tokenizer`).

Its own split into words (on whitespace and punctuation) is used where it is
the original's: on folded text that is all ASCII, most of any corpus. There
its whitespace and punctuation are the original's (the same ASCII ranges),
and its word limit, in bytes, is the original's 200 characters. Other text
is split into words by `GraphBasicTokenizer` first: beyond ASCII,
tensorflow-text's Unicode version, not Python's, would decide what is
punctuation. Strings of clean ASCII go to tensorflow-text whole, others
chunk by chunk between spaces, so that one accented letter sends its chunk,
not its paragraph, through the code point fold and the slower word split.

Being TF ops throughout, it runs in `tf.function`, `tf.data.Dataset.map` and
SavedModel signatures, where no Python tokenizer can.
"""

import types

import keras
import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.tokenization import special_tokens
from bert_tf.tokenization.fast_wordpiece import (UNK_TOKEN, fast_wordpiece,
                                                 fast_wordpiece_on_ascii_text)
from bert_tf.tokenization.graph_basic_tokenizer import GraphBasicTokenizer
from bert_tf.tokenization.string_batch_function import StringBatchFunction
from bert_tf.tokenization.vocab import vocabulary_list
from bert_tf.tokenization.wordpiece import MAX_INPUT_CHARS_PER_WORD


def _route(values, mask, if_false, if_true):
    """`if_true` of the `values` where `mask` holds, `if_false` of the others,
    back in the order of `values` (both return tensors of rows, e.g. ragged)."""
    group = tf.cast(mask, tf.int32)
    parts = tf.dynamic_partition(values, group, 2)
    rows = tf.dynamic_partition(tf.range(tf.size(values)), group, 2)
    results = tf.concat([if_false(parts[0]), if_true(parts[1])], axis=0)
    return tf.gather(results, tf.math.invert_permutation(tf.concat(rows, axis=0)))


@keras.saving.register_keras_serializable(package="bert_tf")
class BertTokenizerLayer(keras.layers.Layer):
    """Tokenizes raw strings to WordPiece ids exactly like `FullTokenizer`.

    Args:
        vocabulary: path of a vocabulary file, or the list of its tokens
            (the config keeps the list, so saved models need no file).
        do_lower_case: lower-case and strip accents (uncased models).
        keep_special_tokens: keep `[CLS]`, `[SEP]`, `[MASK]`, `[PAD]`,
            `[UNK]` and `[unusedN]` written in the text as single tokens.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        inputs: strings, shape [batch] (or a scalar string).

    Returns:
        int32 ids, a `tf.RaggedTensor` [batch, None] (a 1-D tensor for a
        scalar input).

    Example:

    >>> tokenizer = BertTokenizerLayer(
    ...     ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##want", "##ed", ","])
    >>> tokenizer(["UNwant\\u00e9d,", "wanted"]).to_list()
    [[4, 5, 6, 7], [1]]
    """

    def __init__(self, vocabulary, do_lower_case=True, keep_special_tokens=False,
                 **kwargs):
        super().__init__(**kwargs)
        # Strings in, ragged ints out: skip Keras' conversion to backend tensors.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        tokens = vocabulary_list(vocabulary)
        self.do_lower_case = bool(do_lower_case)
        self.keep_special_tokens = bool(keep_special_tokens)
        # Read-only, and no list or dict: Keras tracks each item of those when they are
        # set on a layer (0.06 s of the 0.26 s a layer of 30,522 tokens took to build).
        self._ids = types.MappingProxyType({token: index for index, token in enumerate(tokens)})
        self._basic = GraphBasicTokenizer(self.do_lower_case)
        self._wordpiece = fast_wordpiece(tokens)
        self._ascii_wordpiece = fast_wordpiece_on_ascii_text(tokens)
        self._special_pattern = None
        if self.keep_special_tokens:
            self._special_pattern = special_tokens.special_tokens_pattern(
                special_tokens.find_special_tokens(tokens))
        self._ids_of_batch = StringBatchFunction(self._batch_ids)
        self.built = True

    @property
    def vocabulary(self):
        """The tokens, a list in the order of their ids."""
        return list(self._ids)

    def token_id(self, token):
        """The id of `token`; raises KeyError naming it if absent."""
        try:
            return self._ids[token]
        except KeyError:
            raise KeyError(f"token {token!r} is not in the vocabulary") from None

    def call(self, inputs):
        text = tf.convert_to_tensor(inputs, tf.string)
        if text.shape.rank == 0:
            return self.call(text[None])[0]
        if text.shape.rank != 1:
            raise ValueError(f"{self.name} takes strings of shape [batch], "
                             f"got shape {text.shape}")
        return self._ids_of_batch(text)

    def _batch_ids(self, text):
        """Ids of strings [batch]: traced once (`StringBatchFunction`), whatever calls it."""
        if self._special_pattern is None:
            return self._text_ids(text)
        return self._ids_keeping_special_tokens(text)

    def _text_ids(self, text):
        """Ids of `text` (no special tokens to keep).

        Plain strings (clean ASCII) go to tensorflow-text whole; the others
        are cut at spaces first, so that only their chunks with other
        characters take the code point fold. A space ends any word and any
        final-sigma context, so the cut changes no id.
        """
        return _route(text, self._basic.is_plain(text),
                      if_false=self._chunked_ids, if_true=self._plain_ids)

    def _plain_ids(self, text):
        return self._ascii_wordpiece.tokenize(self._basic.fold_plain(text))

    def _chunked_ids(self, text):
        chunks = tf.strings.split(text, sep=" ")
        ids = _route(chunks.flat_values, self._basic.is_plain(chunks.flat_values),
                     if_false=self._table_folded_ids, if_true=self._plain_ids)
        return chunks.with_flat_values(ids).merge_dims(1, 2)

    def _table_folded_ids(self, text):
        """Ids of strings that are not plain: folded by the code point table,
        split into words by us unless the fold is ASCII."""
        folded = self._basic.fold_by_table(text)
        return _route(folded, tf.strings.regex_full_match(folded, "[\\x00-\\x7f]*"),
                      if_false=lambda other: self._wordpiece_ids(self._basic.split(other)),
                      if_true=self._ascii_wordpiece.tokenize)

    def _ids_keeping_special_tokens(self, text):
        # As in `FullTokenizer`: find special tokens in the decoded raw text,
        # then tokenize the text between them. regex_split stops at a NUL;
        # U+0001 is deleted by cleaning just like NUL, and splits nothing.
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="ignore")
        text = tf.strings.regex_replace(text, "\\x00", "\x01")
        pieces = tf_text.regex_split(text, self._special_pattern, self._special_pattern)
        flat = pieces.flat_values
        ids = _route(flat, tf.strings.regex_full_match(flat, self._special_pattern),
                     if_false=self._text_ids, if_true=self._wordpiece.tokenize)
        return pieces.with_flat_values(ids).merge_dims(1, 2)

    def _wordpiece_ids(self, words):
        flat = words.flat_values
        too_long = tf.strings.length(flat, unit="UTF8_CHAR") > MAX_INPUT_CHARS_PER_WORD
        pieces = self._wordpiece.tokenize(tf.where(too_long, UNK_TOKEN, flat))
        return words.with_flat_values(pieces).merge_dims(1, 2)

    def get_config(self):
        config = super().get_config()
        config.update(vocabulary=self.vocabulary,
                      do_lower_case=self.do_lower_case,
                      keep_special_tokens=self.keep_special_tokens)
        return config
