"""Masked-LM selection follows the original's rules (docs/ORIGINAL_BEHAVIOUR.md)."""

import random

import pytest

from bert_tf.data.masking import MaskedLmMasker

VOCAB = {t: i for i, t in enumerate(
    ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + [f"w{i}" for i in range(40)] +
    [f"##p{i}" for i in range(15)])}
CLS, SEP, MASK = VOCAB["[CLS]"], VOCAB["[SEP]"], VOCAB["[MASK]"]
PIECES = {i for t, i in VOCAB.items() if t.startswith("##")}


def _sequence(rng, length):
    """[CLS] A [SEP] B [SEP] of random words and pieces."""
    body = [rng.randrange(5, len(VOCAB)) for _ in range(length - 3)]
    cut = rng.randint(1, len(body) - 1)
    return [CLS] + body[:cut] + [SEP] + body[cut:] + [SEP]


@pytest.mark.parametrize("length, prob, expected", [
    (5, 0.15, 1), (10, 0.15, 2), (30, 0.15, 4), (128, 0.15, 19), (200, 0.15, 20),
    (512, 0.15, 20), (40, 0.5, 20)])
def test_num_to_predict_counts_special_tokens_and_rounds_half_to_even(length, prob, expected):
    # min(max_predictions, max(1, round(len(tokens) * prob))), Python's round.
    assert MaskedLmMasker(VOCAB, prob, 20).num_to_predict(length) == expected


def test_per_piece_masking_rules():
    masker = MaskedLmMasker(VOCAB, 0.15, 20)
    rng = random.Random(3)
    kinds = {"mask": 0, "same": 0, "other": 0}
    for _ in range(3000):
        tokens = _sequence(rng, rng.randint(5, 128))
        out = masker.mask(tokens, rng)
        positions = out.masked_lm_positions
        assert positions == sorted(set(positions))
        assert len(positions) == masker.num_to_predict(len(tokens))
        assert all(tokens[p] not in (CLS, SEP) for p in positions)
        assert out.masked_lm_ids == [tokens[p] for p in positions]
        untouched = set(range(len(tokens))) - set(positions)
        assert all(out.input_ids[i] == tokens[i] for i in untouched)
        for p in positions:
            new = out.input_ids[p]
            kinds["mask" if new == MASK else "same" if new == tokens[p] else "other"] += 1
    total = sum(kinds.values())
    # 80% [MASK], 10% kept, 10% random (which is the same token 1 time in 60).
    assert abs(kinds["mask"] / total - 0.8) < 0.01
    assert abs(kinds["same"] / total - 0.1 - 0.1 / len(VOCAB)) < 0.01
    assert abs(kinds["other"] / total - 0.1 + 0.1 / len(VOCAB)) < 0.01


def _words(tokens):
    """Word groups the way the original builds them: ## joins the previous candidate."""
    groups = []
    for i, t in enumerate(tokens):
        if t in (CLS, SEP):
            continue
        if groups and t in PIECES:
            groups[-1].append(i)
        else:
            groups.append([i])
    return groups


def test_whole_word_masking_masks_whole_words_within_the_budget():
    masker = MaskedLmMasker(VOCAB, 0.15, 20, do_whole_word_mask=True)
    rng = random.Random(4)
    for _ in range(2000):
        tokens = _sequence(rng, rng.randint(5, 128))
        out = masker.mask(tokens, rng)
        chosen = set(out.masked_lm_positions)
        assert len(chosen) <= masker.num_to_predict(len(tokens))
        for group in _words(tokens):
            assert chosen.issuperset(group) or chosen.isdisjoint(group)


def test_piece_after_sep_joins_the_word_before_it():
    # The original's quirk: [SEP] is skipped, so a leading ## piece of B joins
    # A's last word; masking one masks the other.
    masker = MaskedLmMasker(VOCAB, 1.0, 20, do_whole_word_mask=True)
    tokens = [CLS, VOCAB["w1"], VOCAB["w2"], SEP, VOCAB["##p1"], VOCAB["w3"], SEP]
    for seed in range(20):
        chosen = set(masker.mask(tokens, random.Random(seed)).masked_lm_positions)
        assert (2 in chosen) == (4 in chosen)


def test_vocab_without_mask_token_is_refused():
    vocab = {t: i for t, i in VOCAB.items() if t != "[MASK]"}
    with pytest.raises(ValueError, match=r"\[MASK\]"):
        MaskedLmMasker(vocab, 0.15, 20)
