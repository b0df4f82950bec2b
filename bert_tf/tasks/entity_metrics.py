"""Entity-level precision, recall and F1 with the CoNLL shared tasks' rules.

These are the rules of `conlleval`, the CoNLL-2000/2003 scoring script:
tags are read as entity spans, a predicted entity counts as correct only
if its type and both of its boundaries equal those of a gold entity, and
precision, recall and F1 are taken over entity counts (overall, micro,
and per type). A span opens at `B-X`, at `I-X` after `O`, and at any tag
whose type differs from the previous one's (so `I-LOC` after `I-PER`
opens a LOC span); it closes before `B-`, `O`, a type change or the
sentence end. IOB1 and BIO tags of the same entities therefore score
the same, and ill-formed predictions (`I-X` after `O`) still name spans.

Scores are fractions in [0, 1] (conlleval prints percentages); a ratio
with a zero denominator is 0, as in conlleval.
"""

import collections
import dataclasses

Entity = collections.namedtuple("Entity", ["type", "start", "end"])
Entity.__doc__ = "One entity span: its type and word positions `[start, end)`."


def split_tag(tag):
    """`(prefix, type)` of a tag: `("B", "PER")`, `("I", "PER")` or `("O", "")`.

    >>> split_tag("I-MISC"), split_tag("O")
    (('I', 'MISC'), ('O', ''))
    """
    if tag == "O":
        return "O", ""
    prefix, dash, kind = tag.partition("-")
    if prefix not in ("B", "I") or not dash or not kind:
        raise ValueError(f"tag {tag!r} is not O, B-<type> or I-<type>")
    return prefix, kind


def entities(tags):
    """The entity spans of one sentence's tags, in order (conlleval's rules).

    >>> entities(["B-PER", "I-PER", "I-LOC", "O", "I-ORG", "B-ORG"])
    [Entity(type='PER', start=0, end=2), Entity(type='LOC', start=2, end=3), \
Entity(type='ORG', start=4, end=5), Entity(type='ORG', start=5, end=6)]
    """
    spans, start, previous, previous_type = [], None, "O", ""
    for position, tag in enumerate(list(tags) + ["O"]):
        prefix, kind = split_tag(tag)
        if previous != "O" and (prefix != "I" or kind != previous_type):
            spans.append(Entity(previous_type, start, position))
        if prefix == "B" or (prefix == "I" and (previous == "O" or kind != previous_type)):
            start = position
        previous, previous_type = prefix, kind
    return spans


@dataclasses.dataclass(frozen=True)
class EntityCounts:
    """Entity counts of one type (or all types) and the ratios from them."""

    correct: int = 0
    gold: int = 0
    predicted: int = 0

    @property
    def precision(self):
        return self.correct / self.predicted if self.predicted else 0.0

    @property
    def recall(self):
        return self.correct / self.gold if self.gold else 0.0

    @property
    def f1(self):
        total = self.precision + self.recall
        return 2 * self.precision * self.recall / total if total else 0.0


@dataclasses.dataclass(frozen=True)
class EntityScores:
    """Scores of a whole set of sentences.

    Attributes:
        overall: counts over all types (micro average).
        per_type: `{type: EntityCounts}` for every type in gold or predictions.
        accuracy: the fraction of words whose tag is exactly the gold tag.
    """

    overall: EntityCounts
    per_type: dict
    accuracy: float

    def as_dict(self):
        """Flat `{name: float}`: precision, recall, f1, accuracy, then `<type>_f1` etc."""
        results = {"precision": self.overall.precision, "recall": self.overall.recall,
                   "f1": self.overall.f1, "accuracy": self.accuracy}
        for kind in sorted(self.per_type):
            counts = self.per_type[kind]
            results.update({f"{kind}_precision": counts.precision,
                            f"{kind}_recall": counts.recall, f"{kind}_f1": counts.f1})
        return results


def entity_scores(gold_sentences, predicted_sentences):
    """Scores predicted tags against gold tags, sentence by sentence.

    Args:
        gold_sentences: a sequence of tag sequences (IOB1 or BIO).
        predicted_sentences: as many tag sequences, each as long as its gold one.

    Raises:
        ValueError: for a different number of sentences or words, or a tag
            that is not O, B-<type> or I-<type>, naming the sentence.

    Example (one PER found; the ORG's right boundary is wrong):

    >>> scores = entity_scores([["B-PER", "O", "B-ORG", "I-ORG"]],
    ...                        [["B-PER", "O", "B-ORG", "O"]])
    >>> scores.overall, round(scores.overall.f1, 4), scores.accuracy
    (EntityCounts(correct=1, gold=2, predicted=2), 0.5, 0.75)
    >>> scores.per_type["ORG"]
    EntityCounts(correct=0, gold=1, predicted=1)
    """
    if len(gold_sentences) != len(predicted_sentences):
        raise ValueError(f"{len(gold_sentences)} gold sentences but "
                         f"{len(predicted_sentences)} predicted ones")
    counts = collections.defaultdict(collections.Counter)
    words = right_tags = 0
    for index, (gold, predicted) in enumerate(zip(gold_sentences, predicted_sentences)):
        if len(gold) != len(predicted):
            raise ValueError(f"sentence {index}: {len(gold)} gold tags but "
                             f"{len(predicted)} predicted ones")
        try:
            gold_spans, predicted_spans = set(entities(gold)), set(entities(predicted))
        except ValueError as error:
            raise ValueError(f"sentence {index}: {error}") from None
        for name, spans in (("gold", gold_spans), ("predicted", predicted_spans),
                            ("correct", gold_spans & predicted_spans)):
            for span in spans:
                counts[span.type][name] += 1
        words += len(gold)
        right_tags += sum(g == p for g, p in zip(gold, predicted))
    per_type = {kind: EntityCounts(**counter) for kind, counter in counts.items()}
    overall = EntityCounts(*(sum(getattr(c, field) for c in per_type.values())
                             for field in ("correct", "gold", "predicted")))
    return EntityScores(overall=overall, per_type=per_type,
                        accuracy=right_tags / words if words else 0.0)
