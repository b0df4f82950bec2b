"""The original's rule for a sentence pair longer than its budget: how much of each side stays.

Every path that packs two segments cuts them the same way: the longer side
(B on a tie) loses a token until the pair fits. Fine-tuning runners cut
from the end (`tasks/packing.py`, the in-graph `BertPacker`); pretraining
data cuts each token from the front or the back by a coin flip
(`data/pair_truncation.py`). Either way the lengths left are the same, and
`kept_lengths` gives them in closed form.
"""


def _min(x, y):
    """min() written with + - abs // only, so that tensors work too."""
    return (x + y - abs(x - y)) // 2


def _max(x, y):
    return (x + y + abs(x - y)) // 2


def kept_lengths(len_a, len_b, max_num_tokens):
    """Tokens of A and of B left once the pair is truncated to `max_num_tokens`.

    The longer side is cut until the two are level; past that both lose
    tokens in turn, B first, so A keeps ceil(budget / 2) when both are long.
    Runs on Python ints and on integer tensors alike.

    Args:
      len_a, len_b: lengths of A and B (ints, or int tensors of one shape).
      max_num_tokens: the most tokens the pair may keep (int or tensor).

    Returns:
      (keep_a, keep_b), of the type of the arguments.

    Example:
      >>> kept_lengths(10, 3, 8), kept_lengths(6, 6, 9), kept_lengths(2, 3, 9)
      ((5, 3), (5, 4), (2, 3))
    """
    keep_a = _min(len_a, _max(max_num_tokens - len_b, (max_num_tokens + 1) // 2))
    return keep_a, _min(len_b, max_num_tokens - keep_a)
