"""The pair truncation of BERT pretraining data: which end each cut token comes from.

The original tool makes a sentence pair fit `max_num_tokens` one token at a
time: it cuts the longer of A and B (B when they are equal), from its front
or its back with probability one half each, until the pair fits.

How many tokens each side keeps is `tokenization.truncation.kept_lengths`,
in closed form (dynamic masking trims whole batches in the graph with it).
`truncation_cuts` replays the loop itself with one `random()` draw per cut
token, in the original's order, which exact mode needs to stay in step with
the original's random generator. The two agree on every length
(tests/data/test_create_instances.py checks all small cases).
"""

from typing import Tuple


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
