"""The original's rule for a token seen by several overlapping windows: which one reads it.

Long SQuAD contexts and long NER sentences are cut into windows that
overlap. A token in several windows is read (its answer start or end, its
tag) only in the window where it has the most context on both sides: the
largest `min(tokens left of it, tokens right of it) + 0.01 * window
length`, the earliest window on ties. The 0.01 term prefers the longer of
two windows where the token is equally central.
"""


def max_context_windows(windows, num_pieces):
    """For each piece, the window where min(left, right context) + 0.01 * length is largest.

    Ties go to the earlier window.

    >>> max_context_windows([(0, 4), (2, 4)], 6)
    [0, 0, 0, 1, 1, 1]
    """
    if len(windows) == 1:
        return [0] * num_pieces
    best_window = [None] * num_pieces
    best_score = [None] * num_pieces
    for window_index, (start, length) in enumerate(windows):
        end = start + length - 1
        for position in range(start, end + 1):
            score = min(position - start, end - position) + 0.01 * length
            if best_score[position] is None or score > best_score[position]:
                best_score[position] = score
                best_window[position] = window_index
    return best_window
