"""Entity-level scores: hand-counted cases, and seqeval (conlleval rules) on real CoNLL tags."""

import pytest
import seqeval.metrics

from bert_tf.tasks import conll_data
from bert_tf.tasks.entity_metrics import Entity, EntityCounts, entities, entity_scores
from tests_shared import shared_path

LABELS = conll_data.bio_labels()


def test_span_rules_by_hand():
    # I- after O opens a span; a type change opens one; B- after I- of the same type too.
    assert entities(["O", "I-PER", "I-PER", "I-LOC", "B-LOC", "O", "B-ORG"]) == [
        Entity("PER", 1, 3), Entity("LOC", 3, 4), Entity("LOC", 4, 5), Entity("ORG", 6, 7)]
    # IOB1: B- only between two adjacent entities of one type.
    assert entities(["I-ORG", "I-ORG", "B-ORG", "O", "I-MISC"]) == [
        Entity("ORG", 0, 2), Entity("ORG", 2, 3), Entity("MISC", 4, 5)]
    assert entities(["B-PER", "I-PER"]) == entities(["I-PER", "I-PER"]) == [Entity("PER", 0, 2)]
    assert entities([]) == entities(["O", "O"]) == []


def test_scores_by_hand():
    gold = [["I-PER", "I-PER", "B-PER", "O", "I-LOC"],  # IOB1: PER 0-2, PER 2-3, LOC 4-5
            ["O", "B-ORG", "I-ORG", "O"],
            ["B-MISC", "I-MISC"],
            ["B-PER"],
            ["I-PER"]]  # a new sentence: a new PER, not the end of the previous one
    predicted = [["B-PER", "I-PER", "I-PER", "O", "B-LOC"],  # PER 0-3 (wrong end), LOC right
                 ["O", "I-ORG", "I-ORG", "O"],  # I- after O opens the right ORG
                 ["B-MISC", "I-PER"],  # MISC 0-1 and PER 1-2: both wrong
                 ["O"],
                 ["B-PER"]]
    scores = entity_scores(gold, predicted)
    assert scores.overall == EntityCounts(correct=3, gold=7, predicted=6)
    assert scores.per_type == {"PER": EntityCounts(1, 4, 3), "LOC": EntityCounts(1, 1, 1),
                               "ORG": EntityCounts(1, 1, 1), "MISC": EntityCounts(0, 1, 1)}
    results = scores.as_dict()
    assert results["precision"] == pytest.approx(3 / 6, abs=1e-15)
    assert results["recall"] == pytest.approx(3 / 7, abs=1e-15)
    assert results["f1"] == pytest.approx(6 / 13, abs=1e-15)
    assert results["PER_precision"] == pytest.approx(1 / 3, abs=1e-15)
    assert results["PER_recall"] == pytest.approx(1 / 4, abs=1e-15)
    assert results["PER_f1"] == pytest.approx(2 / 7, abs=1e-15)
    assert results["MISC_f1"] == 0.0 and results["LOC_f1"] == results["ORG_f1"] == 1.0
    # Words whose tag string equals the gold one: 2 + 3 + 1 + 0 + 0 of 13.
    assert results["accuracy"] == pytest.approx(6 / 13, abs=1e-15)


def test_nothing_predicted_scores_zero():
    scores = entity_scores([["B-PER", "O"]], [["O", "O"]])
    assert (scores.overall.precision, scores.overall.recall, scores.overall.f1) == (0, 0, 0)


@pytest.mark.parametrize("gold, predicted, message", [
    ([["O"]], [["O"], ["O"]], "1 gold sentences but 2 predicted"),
    ([["O"], ["O", "O"]], [["O"], ["O"]], "sentence 1: 2 gold tags but 1 predicted"),
    ([["O"], ["S-PER"]], [["O"], ["O"]], "sentence 1: tag 'S-PER' is not O"),
    ([["O"]], [["B-"]], "sentence 0: tag 'B-'"),
])
def test_bad_input(gold, predicted, message):
    with pytest.raises(ValueError, match=message):
        entity_scores(gold, predicted)


def _corrupted(sentences, every=10, offset=7):
    """Every `every`-th word (counting over the whole set) gets another, fixed tag."""
    corrupted, index = [], 0
    for tags in sentences:
        new = list(tags)
        for position, tag in enumerate(tags):
            if index % every == offset:
                shift = 1 + (index // every) % (len(LABELS) - 1)
                new[position] = LABELS[(LABELS.index(tag) + shift) % len(LABELS)]
            index += 1
        corrupted.append(new)
    return corrupted


@pytest.mark.parametrize("gold_scheme", ["bio", "iob1"])
def test_matches_seqeval_on_real_dev_tags(gold_scheme):
    sentences = conll_data.read_conll(shared_path("conll2003", "eng.testa"))
    bio = [list(s.tags) for s in sentences]
    gold = bio
    if gold_scheme == "iob1":  # the file's own tags
        lines = shared_path("conll2003", "eng.testa").read_text().splitlines()
        raw = [line.split()[3] for line in lines if line.strip()
               and not line.startswith("-DOCSTART-")]
        gold, start = [], 0
        for tags in bio:
            gold.append(raw[start:start + len(tags)])
            start += len(tags)
    predicted = _corrupted(bio)
    changed = sum(g != p for gs, ps in zip(bio, predicted) for g, p in zip(gs, ps))
    assert changed == 5136  # every 10th of 51362 words

    ours = entity_scores(gold, predicted)
    assert ours.overall.gold == 5942
    assert ours.overall.predicted not in (ours.overall.correct, ours.overall.gold)
    assert ours.overall.precision == pytest.approx(
        seqeval.metrics.precision_score(gold, predicted), abs=1e-12)
    assert ours.overall.recall == pytest.approx(
        seqeval.metrics.recall_score(gold, predicted), abs=1e-12)
    assert ours.overall.f1 == pytest.approx(seqeval.metrics.f1_score(gold, predicted), abs=1e-12)
    assert ours.accuracy == pytest.approx(
        seqeval.metrics.accuracy_score(gold, predicted), abs=1e-12)
    report = seqeval.metrics.classification_report(gold, predicted, output_dict=True)
    assert set(ours.per_type) == {"PER", "ORG", "LOC", "MISC"}
    for kind, counts in ours.per_type.items():
        assert counts.gold == report[kind]["support"]
        assert counts.precision == pytest.approx(report[kind]["precision"], abs=1e-12)
        assert counts.recall == pytest.approx(report[kind]["recall"], abs=1e-12)
        assert counts.f1 == pytest.approx(report[kind]["f1-score"], abs=1e-12)
