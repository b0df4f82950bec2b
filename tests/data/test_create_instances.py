"""Instance shaping follows the original's rules (docs/ORIGINAL_BEHAVIOUR.md)."""

import random

import pytest

from bert_tf.data.instance_records import RecordMaker, RunSummary
from bert_tf.data.masking import MaskedLmMasker
from bert_tf.data.pair_truncation import truncation_cuts
from bert_tf.tokenization.truncation import kept_lengths
from bert_tf.data.pretraining_instances import InstanceMaker
from bert_tf.data.pretraining_options import PretrainingDataOptions

VOCAB = {t: i for i, t in enumerate(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] +
                                    [f"w{i}" for i in range(1000)])}
CLS, SEP = VOCAB["[CLS]"], VOCAB["[SEP]"]


def _maker(**flags):
    options = PretrainingDataOptions(**flags)
    masker = MaskedLmMasker(VOCAB, options.masked_lm_prob, options.max_predictions_per_seq)
    return InstanceMaker(options, masker, CLS, SEP)


def _documents(rng, count, sentences=(1, 30), words=(1, 40)):
    return [[[rng.randrange(5, len(VOCAB)) for _ in range(rng.randint(*words))]
             for _ in range(rng.randint(*sentences))] for _ in range(count)]


def test_truncation_cuts_the_longer_side_and_b_on_a_tie():
    rng = random.Random(0)
    for _ in range(500):
        len_a, len_b, limit = rng.randint(1, 300), rng.randint(1, 300), rng.randint(2, 200)
        a_front, a_back, b_front, b_back = truncation_cuts(len_a, len_b, limit, rng)
        kept_a, kept_b = len_a - a_front - a_back, len_b - b_front - b_back
        assert kept_a + kept_b == min(limit, len_a + len_b)
        if len_a + len_b > limit:
            # Only the longer side is cut until the two are level; then B
            # goes first on a tie, so A ends equal or one longer.
            longer, shorter = max(len_a, len_b), min(len_a, len_b)
            if longer - shorter >= len_a + len_b - limit:
                assert min(kept_a, kept_b) == shorter
            else:
                assert kept_a - kept_b in (0, 1)
    assert sum(truncation_cuts(10, 10, 19, rng)[2:]) == 1
    assert sum(truncation_cuts(11, 10, 20, rng)[:2]) == 1


def test_closed_form_keeps_what_the_loop_keeps():
    # Every small case: the closed form shared with dynamic masking against
    # the original's per-token loop.
    rng = random.Random(6)
    for len_a in range(1, 30):
        for len_b in range(1, 30):
            for limit in range(2, 30):
                a_front, a_back, b_front, b_back = truncation_cuts(len_a, len_b, limit, rng)
                assert kept_lengths(len_a, len_b, limit) == (
                    len_a - a_front - a_back, len_b - b_front - b_back), (len_a, len_b, limit)


def test_layout_segments_and_lengths():
    rng = random.Random(1)
    documents = _documents(rng, 30)
    maker = _maker(max_seq_length=64)
    for index in range(len(documents)):
        for instance in maker.from_document(documents, index, rng):
            ids, num_a = instance.input_ids, instance.num_segment_a
            assert 5 <= len(ids) <= 64
            assert ids[0] == CLS and ids[num_a - 1] == SEP and ids[-1] == SEP
            assert SEP not in ids[1:num_a - 1] + ids[num_a:-1]
            assert instance.segment_ids == [0] * num_a + [1] * (len(ids) - num_a)


def test_one_sentence_documents_always_take_a_random_next():
    rng = random.Random(2)
    documents = _documents(rng, 20, sentences=(1, 1))
    maker = _maker()
    instances = [i for d in range(20) for i in maker.from_document(documents, d, rng)]
    assert len(instances) == 20 and all(i.is_random_next for i in instances)


def test_a_single_document_corpus_takes_random_nexts_from_itself():
    rng = random.Random(3)
    documents = [[[10 + i] * 5 for i in range(40)]]
    instances = _maker(max_seq_length=32).from_document(documents, 0, rng)
    assert instances and any(i.is_random_next for i in instances)


def test_sentences_longer_than_max_seq_length_are_truncated():
    rng = random.Random(4)
    documents = [[list(range(5, 905))], [list(range(5, 505)), [7, 8]]]
    maker = _maker(max_seq_length=128)
    for index in (0, 1):
        for instance in maker.from_document(documents, index, rng):
            assert len(instance.input_ids) == 128


def test_short_sequence_target_rate():
    # The target length is drawn once per document: short with probability
    # short_seq_prob, else max_seq_length - 3. A document's first instance
    # with its actual next sentence spans the first sentences up to the
    # target, so it is full length exactly when the target is not short
    # (or happens to be met only by a long sentence).
    rng = random.Random(5)
    documents = _documents(rng, 2000, sentences=(12, 16))

    def short_first(short_seq_prob):
        maker = _maker(short_seq_prob=short_seq_prob)
        firsts = [maker.from_document(documents, d, rng)[0] for d in range(len(documents))]
        actual = [i for i in firsts if not i.is_random_next]
        return sum(len(i.input_ids) < 128 for i in actual) / len(actual)

    assert short_first(0.0) == 0.0
    always = short_first(1.0)
    assert always > 0.8
    assert abs(short_first(0.1) / always - 0.1) < 0.03


@pytest.mark.parametrize("flags, message", [
    ({"max_seq_length": 4}, "max_seq_length"),
    ({"max_predictions_per_seq": 0}, "max_predictions_per_seq"),
    ({"masked_lm_prob": 0.0}, "masked_lm_prob"),
    ({"short_seq_prob": 1.5}, "short_seq_prob"),
    ({"dupe_factor": 0}, "dupe_factor"),
])
def test_options_reject_impossible_flags(flags, message):
    with pytest.raises(ValueError, match=message):
        PretrainingDataOptions(**flags)


def test_sentences_holding_cls_or_sep_ids_are_refused():
    # Text never tokenizes to [CLS] or [SEP] (their brackets are punctuation),
    # and masking finds them by the layout alone; documents built by hand
    # that hold them would be masked unlike the original, so they are refused.
    maker = RecordMaker(VOCAB, PretrainingDataOptions(max_seq_length=32, dupe_factor=1))
    documents = _documents(random.Random(0), 3)
    assert maker.records([list(d) for d in documents], random.Random(1), RunSummary())
    for special in (CLS, SEP):
        held = [list(d) for d in documents]
        held[2][-1] = held[2][-1] + [special]
        with pytest.raises(ValueError, match=f"document 2 holds token id {special}, which is"):
            maker.records(held, random.Random(1), RunSummary())
