"""`random.Random.shuffle` without its per-element Python calls.

Exact mode must consume a `random.Random` the way the original tool did, and
shuffling the ~125 masking candidates of every instance is most of its cost.
CPython's `shuffle` walks i = n-1 .. 1 drawing j = `_randbelow(i + 1)`, which
takes `getrandbits(k)` with k = (i + 1).bit_length() until the value is below
i + 1. `shuffle` below makes the same calls to `getrandbits` inline, so it
gives the same permutation and leaves the generator in the same state
(tests/data/test_create_random_draws.py holds it to `random.Random.shuffle`).
"""

import random
from typing import MutableSequence


def shuffle(items: MutableSequence, rng: random.Random) -> None:
    """Shuffles `items` in place exactly as `rng.shuffle(items)` would.

    Example:
      >>> a, b = list(range(10)), list(range(10))
      >>> shuffle(a, random.Random(7)); random.Random(7).shuffle(b)
      >>> a == b
      True
    """
    getrandbits = rng.getrandbits
    for i in range(len(items) - 1, 0, -1):
        bound = i + 1
        bits = bound.bit_length()
        j = getrandbits(bits)
        while j >= bound:
            j = getrandbits(bits)
        items[i], items[j] = items[j], items[i]
