"""The pair truncation rule of BERT pretraining, for both data paths.

The original tool makes a sentence pair fit `max_num_tokens` one token at a
time: it cuts the longer of A and B (B when they are equal), from its front
or its back with probability one half each, until the pair fits.

`kept_lengths` is the closed form of how many tokens each side keeps; it
runs on Python ints and on integer tensors alike (dynamic masking trims whole
batches in the graph with it). `truncation_cuts` replays the loop itself
with one `random()` draw per cut token, in the original's order, which exact
mode needs to stay in step with the original's random generator. The two
agree on every length (tests/data/test_create_instances.py checks all small
cases).
"""

from typing import Tuple


def _min(x, y):
    """min() written with + - abs // only, so that tensors work too."""
    return (x + y - abs(x - y)) // 2


def _max(x, y):
    return (x + y + abs(x - y)) // 2


def kept_lengths(len_a, len_b, max_num_tokens):
    """Tokens of A and of B left once the pair is truncated to `max_num_tokens`.

    The longer side is cut until the two are level; past that both lose
    tokens in turn, B first, so A keeps ceil(budget / 2) when both are long.

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


def truncation_cuts(len_a: int, len_b: int, max_num_tokens: int,
                    rng) -> Tuple[int, int, int, int]:
    """Draws which end each cut token comes from, as the original does.

    One `rng.random()` per cut token, in the order the original's loop cuts
    them (the longer side first, B on a tie): below 0.5 the token comes off
    the front, otherwise off the back.

    Returns:
      (a_front, a_back, b_front, b_back): tokens to drop from each end.

    Example:
      >>> import random
      >>> truncation_cuts(10, 3, 8, random.Random(0))
      (2, 3, 0, 0)
    """
    cuts = [0, 0, 0, 0]
    draw = rng.random
    while len_a + len_b > max_num_tokens:
        side = 0 if len_a > len_b else 2
        if side == 0:
            len_a -= 1
        else:
            len_b -= 1
        cuts[side if draw() < 0.5 else side + 1] += 1
    return tuple(cuts)
