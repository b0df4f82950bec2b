"""Our inline shuffle is CPython's `random.Random.shuffle`, draw for draw."""

import random

import pytest

from bert_tf.data.random_draws import shuffle


@pytest.mark.parametrize("seed", [0, 1, 12345, 2**40 + 7])
def test_same_permutation_and_generator_state_as_random_shuffle(seed):
    ours, theirs = random.Random(seed), random.Random(seed)
    for length in [0, 1, 2, 3, 7, 64, 65, 125, 128, 129, 1000, 4097]:
        a, b = list(range(length)), list(range(length))
        shuffle(a, ours)
        theirs.shuffle(b)
        assert a == b, length
        assert ours.getstate() == theirs.getstate(), length
    assert ours.random() == theirs.random()


def test_shuffles_any_mutable_sequence_in_place():
    items = [[1], [2, 3], [4]]
    expected = list(items)
    random.Random(5).shuffle(expected)
    shuffle(items, random.Random(5))
    assert items == expected
