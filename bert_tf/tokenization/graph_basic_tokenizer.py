"""`GraphBasicTokenizer`: the original's basic tokenizer as vectorised TF ops.

Given a batch of strings, it returns their words exactly as
`BasicTokenizer.tokenize` would, in two batch-wide steps and no loop:

1. fold: decode to code points, look each up in the table of
   `unicode_tables` (cleaning, and when lower-casing, `str.lower()`, NFD
   and accent stripping, all precomputed per code point with Python's own
   functions), re-encode; ASCII strings take a short cut;
2. split: spaces around each punctuation mark and CJK ideograph (one
   `regex_replace` with a character class also built from the rules), then
   split on spaces.

Only a capital sigma needs context (`str.lower()` makes it final at the end
of a word); it is handled apart, when a batch has one.

Working on code points rather than with TF's string ops is what makes it
exact: `tf.strings.lower` and tensorflow-text's normalisers use ICU builds
whose Unicode versions differ from Python's, and tensorflow-text's BERT
normaliser case-folds (`ß` -> `ss`), which the original does not.

One known difference remains: NFD puts combining marks in canonical order
across a whole word, while the table decomposes characters one at a time.
After accents (Mn) are dropped, this only matters for two or more spacing
combining marks (Mc) with non-zero combining classes out of canonical order,
e.g. the musical symbols U+1D16D U+1D165; `tests/tokenization` pins it.
"""

import tensorflow as tf

from bert_tf.tokenization import unicode_tables as ut


def _has_flag(entries, flag):
    return tf.not_equal(tf.bitwise.bitwise_and(entries, flag), 0)


class GraphBasicTokenizer:
    """Splits strings into the original's basic-tokenizer words, in the graph.

    Args:
        do_lower_case: lower-case and strip accents, as the reference does.

    Example:

    >>> words = GraphBasicTokenizer()(tf.constant(["HeLLo!how", "ah\\u535a"]))
    >>> words.to_list()
    [[b'hello', b'!', b'how'], [b'ah', b'\\xe5\\x8d\\x9a']]
    """

    def __init__(self, do_lower_case=True):
        self.do_lower_case = do_lower_case
        table = ut.char_table(do_lower_case)
        self._entries = tf.constant(table.entries)
        self._expansions = tf.constant(table.expansions)
        self._solo_pattern = f"({ut.solo_class()})"
        self._ascii_drop_class = ut.ascii_drop_class()

    def __call__(self, text):
        """Returns the words of `text` (tf.string [N]) as a ragged [N, None]."""
        spaced = tf.strings.regex_replace(self._fold(text), self._solo_pattern, r" \1 ")
        # Folded text has no whitespace but ASCII's, so TF's ASCII-whitespace
        # split is the original's `str.split()`.
        return tf.strings.split(spaced)

    def _fold(self, text):
        """Cleans (and lower-cases) each string; words stay unsplit.

        ASCII strings, the bulk of most corpora, take a short cut through
        two string ops; the others go through the code point table.
        """
        is_ascii = tf.cast(tf.strings.regex_full_match(text, "[\\x00-\\x7f]*"), tf.int32)
        parts = tf.dynamic_partition(text, is_ascii, 2)
        indices = tf.dynamic_partition(tf.range(tf.size(text)), is_ascii, 2)
        return tf.dynamic_stitch(
            indices, [self._fold_code_points(parts[0]), self._fold_ascii(parts[1])])

    def _fold_ascii(self, text):
        """The fold of ASCII strings: controls deleted, A-Z lowered if asked."""
        text = tf.strings.regex_replace(text, self._ascii_drop_class, "")
        return tf.strings.lower(text) if self.do_lower_case else text

    def _fold_code_points(self, text):
        """The fold of any strings, one table lookup per code point."""
        return tf.strings.unicode_encode(self.fold_code_points(text)[0], "UTF-8")

    def fold_code_points(self, text):
        """The folded code points of each string, and where each one comes from.

        Returns:
            (folded, sources): int32 ragged [N, None] of the same shape; the
            folded code points (cleaned, and lower-cased when asked), and for
            each one the index, in code points of its (UTF-8 decoded) string,
            of the character it was folded from. Words are not split yet.

        >>> folded, sources = GraphBasicTokenizer().fold_code_points(
        ...     tf.constant(["A\u0130\u200bb"]))
        >>> folded.to_list(), sources.to_list()
        ([[97, 105, 98]], [[0, 1, 3]])
        """
        decoded = tf.strings.unicode_decode(text, "UTF-8", errors="ignore")
        chars = decoded.flat_values
        rows = decoded.value_rowids()
        positions = (tf.range(tf.size(chars, tf.int64))
                     - tf.gather(decoded.row_splits, rows))
        entries = tf.gather(self._entries, chars)
        if self.do_lower_case:
            entries = tf.cond(
                tf.reduce_any(tf.equal(chars, ut.CAPITAL_SIGMA)),
                lambda: self._mark_final_sigmas(chars, rows, entries),
                lambda: entries)
        folded, sources = tf.cond(
            tf.reduce_any(_has_flag(entries, ut.FLAG_MULTI)),
            lambda: self._expand(entries, positions, decoded.row_splits),
            lambda: (decoded.with_flat_values(tf.bitwise.right_shift(entries, ut.FOLD_SHIFT)),
                     decoded.with_flat_values(tf.cast(positions, tf.int32))))
        return folded, sources

    def _expand(self, entries, positions, row_splits):
        """(folds, sources) of `entries` when some are not exactly one character."""
        multi = _has_flag(entries, ut.FLAG_MULTI)
        targets = tf.bitwise.right_shift(entries, ut.FOLD_SHIFT)
        width = self._expansions.shape[1]
        single = tf.pad(targets[:, None], [[0, 0], [0, width - 1]], constant_values=-1)
        padded = tf.where(multi[:, None],
                          tf.gather(self._expansions, tf.where(multi, targets, 0)),
                          single)
        present = tf.greater_equal(padded, 0)
        ends = tf.concat([[0], tf.cumsum(tf.reduce_sum(tf.cast(present, tf.int64), 1))], 0)
        splits = tf.gather(ends, row_splits)
        sources = tf.boolean_mask(
            tf.broadcast_to(tf.cast(positions, tf.int32)[:, None], tf.shape(padded)), present)
        return (tf.RaggedTensor.from_row_splits(tf.boolean_mask(padded, present), splits,
                                                validate=False),
                tf.RaggedTensor.from_row_splits(sources, splits, validate=False))

    def _mark_final_sigmas(self, chars, rows, entries):
        """Gives the entry of U+03C2 to capital sigmas that `str.lower()` makes final.

        Python lowers a capital sigma to final sigma when, skipping
        case-ignorable characters, a cased character precedes it and none
        follows it, within the string (spaces are neither).
        """
        sigma_at = tf.where(tf.equal(chars, ut.CAPITAL_SIGMA))[:, 0]
        solid = tf.logical_not(_has_flag(entries, ut.FLAG_CASE_IGNORABLE))
        solid_at = tf.where(solid)[:, 0]
        # Rank of each sigma (itself solid) among the solid characters.
        rank = tf.gather(tf.cumsum(tf.cast(solid, tf.int64), exclusive=True), sigma_at)
        num_solid = tf.size(solid_at, tf.int64)

        def cased(neighbour_rank):
            exists = (neighbour_rank >= 0) & (neighbour_rank < num_solid)
            at = tf.gather(solid_at, tf.clip_by_value(neighbour_rank, 0, num_solid - 1))
            return (exists & tf.equal(tf.gather(rows, at), tf.gather(rows, sigma_at))
                    & _has_flag(tf.gather(entries, at), ut.FLAG_CASED))

        final = cased(rank - 1) & tf.logical_not(cased(rank + 1))
        final_at = tf.boolean_mask(sigma_at, final)[:, None]
        return tf.tensor_scatter_nd_update(
            entries, final_at,
            tf.fill(tf.shape(final_at)[:1], self._entries[ut.FINAL_SIGMA]))
