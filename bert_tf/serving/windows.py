"""`context_windows`: the original's SQuAD windows over a batch of contexts, as TF ops.

The in-graph twin of `doc_windows` (`bert_tf.tasks.squad_features`) and
`max_context_windows` (`bert_tf.tasks.max_context`), the Python path: a
context of P pieces, after a question of Q pieces, is read in windows of
`max_seq_length - Q - 3` pieces starting every min(that, `doc_stride`)
pieces, the last one ending on the last piece; an empty context has no
window. A piece seen by several windows
belongs to the one where min(pieces left of it, pieces right of it) + 0.01
* window length is largest, the earliest on a tie (computed in float64, as
Python computes it, so ties fall the same way).
"""

import collections

import tensorflow as tf

Windows = collections.namedtuple(
    "Windows", ["example", "start", "length", "first_window", "max_context"])
Windows.__doc__ = """The windows of a batch, flattened in example order.

example: int64 [W], the example of each window.
start: int64 [W], its first context piece (index within the example).
length: int64 [W], its number of context pieces (at least 1).
first_window: int64 [B + 1], where each example's windows begin in [W]
    (the last entry is W).
max_context: bool ragged [W, length], whether the window is the piece's best.
"""


def context_windows(query_lengths, context_lengths, max_seq_length, doc_stride):
    """The `Windows` of a batch, from its question and context lengths (int64 [B]).

    >>> windows = context_windows(tf.constant([1, 1, 0], tf.int64),
    ...                           tf.constant([10, 0, 3], tf.int64), 8, 3)
    >>> windows.example.numpy().tolist(), windows.start.numpy().tolist()
    ([0, 0, 0, 2], [0, 3, 6, 0])
    >>> windows.length.numpy().tolist(), windows.first_window.numpy().tolist()
    ([4, 4, 4, 3], [0, 3, 3, 4])
    >>> windows.max_context[:2].to_list()
    [[True, True, True, True], [False, True, True, True]]
    """
    max_pieces = max_seq_length - query_lengths - 3
    step = tf.minimum(max_pieces, doc_stride)
    beyond_first = tf.maximum(context_lengths - max_pieces, 0)
    counts = tf.where(context_lengths > 0, 1 + (beyond_first + step - 1) // step, 0)
    example = tf.repeat(tf.range(tf.size(counts, tf.int64)), counts)
    start = tf.ragged.range(counts).flat_values * tf.gather(step, example)
    length = tf.minimum(tf.gather(context_lengths, example) - start,
                        tf.gather(max_pieces, example))
    first_window = tf.concat([[0], tf.cumsum(counts)], 0)
    return Windows(example, start, length, first_window,
                   _max_context(example, start, length, context_lengths))


def _max_context(example, start, length, context_lengths):
    """Per window piece: is this window the piece's best one."""
    offset = tf.ragged.range(length)
    window = tf.cast(offset.value_rowids(), tf.int64)
    position = offset.flat_values
    window_length = tf.gather(length, window)
    score = (tf.cast(tf.minimum(position, window_length - 1 - position), tf.float64)
             + 0.01 * tf.cast(window_length, tf.float64))
    # One id per (example, piece) of the batch.
    piece_base = tf.concat([[0], tf.cumsum(context_lengths)], 0)
    piece = tf.gather(piece_base, tf.gather(example, window)) + tf.gather(start, window) + position
    num_pieces = piece_base[-1]
    best_score = tf.math.unsorted_segment_max(score, piece, num_pieces)
    at_best = tf.equal(score, tf.gather(best_score, piece))
    first_best = tf.math.unsorted_segment_min(
        tf.where(at_best, window, tf.size(example, tf.int64)), piece, num_pieces)
    return offset.with_flat_values(tf.equal(window, tf.gather(first_best, piece)))
