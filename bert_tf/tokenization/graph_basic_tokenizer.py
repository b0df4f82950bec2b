"""`GraphBasicTokenizer`: the original's basic tokenizer as vectorised TF ops.

Given a batch of strings, it returns their words exactly as
`BasicTokenizer.tokenize` would, in two batch-wide steps and no loop:

1. fold (`fold`): decode to code points, look each up in the table of
   `unicode_tables` (cleaning, and when lower-casing, `str.lower()`, NFD
   and accent stripping, all precomputed per code point with Python's own
   functions), re-encode; strings of ASCII characters that cleaning keeps
   take a short cut, ASCII lower-casing;
2. split (`split`): spaces around each punctuation mark and CJK ideograph (one
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


def _row_ids(row_splits):
    """The row of each value of a ragged tensor with these `row_splits`.

    Same as `RaggedTensor.value_rowids()` (as int32), in linear time: TF's
    builds a [rows, longest row] mask, the costliest step of a batch of long
    texts.
    """
    size = tf.cast(row_splits[-1], tf.int32)
    row_starts = tf.math.bincount(tf.cast(row_splits[1:-1], tf.int32),
                                  minlength=size, maxlength=size)
    return tf.cumsum(row_starts)


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
        self._ascii_kept_text = ut.ascii_kept_class() + "*"

    def __call__(self, text):
        """Returns the words of `text` (tf.string [N]) as a ragged [N, None]."""
        return self.split(self.fold(text))

    def split(self, folded):
        """The words of folded strings (see `fold`): ragged [N, None]."""
        spaced = tf.strings.regex_replace(folded, self._solo_pattern, r" \1 ")
        # Folded text has no whitespace but ASCII's, so TF's ASCII-whitespace
        # split is the original's `str.split()`.
        return tf.strings.split(spaced)

    def is_plain(self, text):
        """Whether each string is only ASCII characters that cleaning keeps.

        Such strings, the bulk of most corpora, fold by ASCII lower-casing
        alone (`fold_plain`).
        """
        return tf.strings.regex_full_match(text, self._ascii_kept_text)

    def fold_plain(self, text):
        """The fold of strings for which `is_plain` holds."""
        return tf.strings.lower(text) if self.do_lower_case else text

    def fold(self, text):
        """Cleans (and lower-cases) each string; words stay unsplit.

        Returns tf.string [N], the folded strings, whose only whitespace is
        ASCII's. Plain strings (`is_plain`) take a short cut; the others go
        through the code point table (`fold_by_table`).

        >>> GraphBasicTokenizer().fold(
        ...     tf.constant(["Ab\\tc", "Caf\\u00c9", "\\u00c6on\\x00"])).numpy().tolist()
        [b'ab\\tc', b'cafe', b'\\xc3\\xa6on']
        """
        plain = tf.cast(self.is_plain(text), tf.int32)
        parts = tf.dynamic_partition(text, plain, 2)
        indices = tf.dynamic_partition(tf.range(tf.size(text)), plain, 2)
        return tf.dynamic_stitch(indices, [self.fold_by_table(parts[0]),
                                           self.fold_plain(parts[1])])

    def fold_by_table(self, text):
        """The fold of any strings, one table lookup per code point."""
        return tf.strings.unicode_encode(self._fold_code_points(text), "UTF-8")

    def fold_code_points(self, text):
        """The folded code points of each string, and where each one comes from.

        Returns:
            (folded, starts, ends): int32 ragged [N, None] of the same shape;
            the folded code points (cleaned, and lower-cased when asked), and
            for each one the stretch [start, end) of its (UTF-8 decoded)
            string, in code points, that it stands for: the character it was
            folded from and the accents after it that lower-casing strips
            (combining marks, `FLAG_ACCENT`), so a word ends after its last
            letter's accents. Deleted controls belong to no stretch. Words
            are not split yet.

        >>> folded, starts, ends = GraphBasicTokenizer().fold_code_points(
        ...     tf.constant(["A\u0130\u200bbe\u0301"]))
        >>> folded.to_list(), starts.to_list(), ends.to_list()
        ([[97, 105, 98, 101]], [[0, 1, 3, 4]], [[1, 2, 4, 6]])
        """
        return self._fold_code_points(text, with_sources=True)

    def _fold_code_points(self, text, with_sources=False):
        """`fold_code_points`, or only its folded code points."""
        decoded = tf.strings.unicode_decode(text, "UTF-8", errors="ignore")
        chars = decoded.flat_values
        entries = tf.gather(self._entries, chars)
        if self.do_lower_case:
            entries = tf.cond(
                tf.reduce_any(tf.equal(chars, ut.CAPITAL_SIGMA)),
                lambda: self._mark_final_sigmas(chars, _row_ids(decoded.row_splits), entries),
                lambda: entries)
        positions = None
        if with_sources:
            positions = tf.ragged.range(tf.cast(decoded.row_lengths(), tf.int32)).flat_values

        def same_length():
            folded = decoded.with_flat_values(tf.bitwise.right_shift(entries, ut.FOLD_SHIFT))
            if not with_sources:
                return folded
            return (folded, decoded.with_flat_values(positions),
                    decoded.with_flat_values(positions + 1))

        return tf.cond(tf.reduce_any(_has_flag(entries, ut.FLAG_MULTI)),
                       lambda: self._expand(entries, positions, decoded.row_splits),
                       same_length)

    def _expand(self, entries, positions, row_splits):
        """The folds of `entries` when some are not exactly one character.

        With the `positions` of their characters (else None), also the
        stretch of the source each folded code point stands for (see
        `fold_code_points`).
        """
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
        folded = tf.RaggedTensor.from_row_splits(tf.boolean_mask(padded, present), splits,
                                                 validate=False)
        if positions is None:
            return folded
        # A character's stretch runs to the next character that is not a stripped accent.
        index = tf.range(tf.size(entries, out_type=tf.int64))
        stops = tf.where(tf.logical_not(_has_flag(entries, ut.FLAG_ACCENT)))[:, 0]
        next_stop = tf.gather(tf.concat([stops, [tf.size(entries, out_type=tf.int64)]], 0),
                              tf.searchsorted(stops, index, side="right"))
        string_end = tf.gather(row_splits[1:], _row_ids(row_splits))
        stretch_ends = positions + tf.cast(tf.minimum(next_stop, string_end) - index, tf.int32)

        def per_folded(values):
            flat = tf.boolean_mask(tf.broadcast_to(values[:, None], tf.shape(padded)), present)
            return tf.RaggedTensor.from_row_splits(flat, splits, validate=False)

        return folded, per_folded(positions), per_folded(stretch_ends)

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
