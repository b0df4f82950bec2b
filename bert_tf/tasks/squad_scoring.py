"""The official SQuAD scores: exact match and token F1 (v1.1), plus no-answer rules (v2.0).

Answers are compared after normalisation: lower-case, drop ASCII
punctuation, drop the articles a/an/the, squeeze whitespace. Exact match is
1 when the normalised texts are equal; F1 is the harmonic mean of token
precision and recall (tokens counted with multiplicity). Each question keeps
its best score over its gold answers; totals are percentages.

SQuAD 1.1 counts a question without a prediction as 0. SQuAD 2.0 treats a
question without gold answers as "no answer" (gold ""), where only an empty
prediction scores (and an empty prediction scores 1 for it, 0 elsewhere);
it reports the HasAns / NoAns splits, and with null odds it also applies
`na_prob_thresh` (odds above it mean "no answer") and searches the odds
threshold that would give the best exact and F1.
"""

import collections
import re
import string
import sys

from bert_tf.tasks.squad_data import SquadFormatError

_PUNCTUATION = frozenset(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(text):
    """Lower-cases, drops punctuation and articles, squeezes whitespace.

    >>> normalize_answer("The  Denver Broncos!")
    'denver broncos'
    """
    text = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match(prediction, gold):
    """1 if the normalised texts are equal, else 0.

    >>> exact_match("the Broncos", "Broncos.")
    1
    """
    return int(normalize_answer(prediction) == normalize_answer(gold))


def f1_v1(prediction, gold):
    """SQuAD 1.1 token F1 (0 when nothing is shared, even for two empty texts).

    >>> round(f1_v1("Denver Broncos team", "Broncos"), 4)
    0.5
    """
    prediction_tokens = normalize_answer(prediction).split()
    gold_tokens = normalize_answer(gold).split()
    shared = sum((collections.Counter(prediction_tokens)
                  & collections.Counter(gold_tokens)).values())
    if shared == 0:
        return 0
    precision = shared / len(prediction_tokens)
    recall = shared / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1_v2(prediction, gold):
    """SQuAD 2.0 token F1: as 1.1, but two empty answers agree (1).

    >>> f1_v2("", ""), f1_v2("a", "")
    (1, 1)
    """
    if not normalize_answer(prediction) or not normalize_answer(gold):
        return int(normalize_answer(prediction).split() == normalize_answer(gold).split())
    return f1_v1(prediction, gold)


def check_gold(source, questions, version_2):
    """Raises SquadFormatError naming `source` when `questions` cannot be scored.

    Scoring needs questions, each with its gold answers. A question without
    "answers" (None: a file for prediction only) has none to score against;
    nor, in SQuAD 1.1, has one whose list is empty (the official v1.1 script
    fails on it: no best score over no answers). SQuAD 2.0 calls that one
    unanswerable.

    Args:
        source: the file (or flag=file) the questions come from.
        questions: [(id, gold answer texts or None)].
        version_2: the SQuAD 2.0 rules apply.

    >>> check_gold("dev.json", [("q1", ["Paris"]), ("q2", [])], version_2=True)
    >>> check_gold("dev.json", [("q1", ["Paris"]), ("q2", [])], version_2=False)
    Traceback (most recent call last):
    ...
    bert_tf.tasks.squad_data.SquadFormatError: dev.json: question q2: no answer to score against (only SQuAD 2.0 has unanswerable questions)
    """
    if not questions:
        raise SquadFormatError(f"{source}: no questions")
    for qas_id, golds in questions:
        if golds is None:
            raise SquadFormatError(f'{source}: question {qas_id}: no "answers" to score '
                                   'against')
        if not golds and not version_2:
            raise SquadFormatError(f"{source}: question {qas_id}: no answer to score against "
                                   "(only SQuAD 2.0 has unanswerable questions)")


def score_v1(questions, predictions):
    """{"exact_match", "f1"} in percent over `questions` [(id, gold answers)] (`check_gold`)."""
    exact_total = f1_total = 0.0
    for qas_id, golds in questions:
        if qas_id not in predictions:
            print(f"Unanswered question {qas_id} will receive score 0.", file=sys.stderr)
            continue
        prediction = predictions[qas_id]
        exact_total += max(exact_match(prediction, gold) for gold in golds)
        f1_total += max(f1_v1(prediction, gold) for gold in golds)
    return {"exact_match": 100.0 * exact_total / len(questions),
            "f1": 100.0 * f1_total / len(questions)}


def score_v2(questions, predictions, na_probs=None, na_prob_thresh=1.0):
    """The SQuAD 2.0 report (exact, f1, total, HasAns_*, NoAns_*, best_*).

    Args:
        questions: [(id, gold answer texts)]; no answers = unanswerable.
        predictions: {id: text}; questions without one are left out (the
            official script fails on them).
        na_probs: {id: null odds} for every question with a prediction, or
            None (then every odds is 0 and no threshold search is made).
        na_prob_thresh: odds above it count as predicting "no answer".

    Raises:
        ValueError: no question has a prediction (nothing to take a
            percentage of).
    """
    has_answer = {qas_id: bool(golds) for qas_id, golds in questions}
    exact_raw, f1_raw = {}, {}
    for qas_id, golds in questions:
        if qas_id not in predictions:
            print(f"Missing prediction for {qas_id}", file=sys.stderr)
            continue
        golds = [gold for gold in golds if normalize_answer(gold)] or [""]
        exact_raw[qas_id] = max(exact_match(predictions[qas_id], g) for g in golds)
        f1_raw[qas_id] = max(f1_v2(predictions[qas_id], g) for g in golds)
    if not exact_raw:
        raise ValueError("no question has a prediction")
    odds = na_probs if na_probs is not None else dict.fromkeys(predictions, 0.0)
    exact = _apply_threshold(exact_raw, odds, has_answer, na_prob_thresh)
    f1 = _apply_threshold(f1_raw, odds, has_answer, na_prob_thresh)
    report = _totals(exact, f1, list(exact))
    for prefix, wanted in (("HasAns", True), ("NoAns", False)):
        qids = [qas_id for qas_id in exact if has_answer[qas_id] == wanted]
        if qids:
            report.update({f"{prefix}_{key}": value
                           for key, value in _totals(exact, f1, qids).items()})
    if na_probs is not None:
        for name, raw in (("exact", exact_raw), ("f1", f1_raw)):
            best, threshold = _best_threshold(predictions, raw, na_probs, has_answer)
            report[f"best_{name}"] = best
            report[f"best_{name}_thresh"] = threshold
    return report


def _apply_threshold(scores, na_probs, has_answer, threshold):
    """Scores where odds above `threshold` replace the prediction by "no answer"."""
    return {qas_id: float(not has_answer[qas_id]) if na_probs[qas_id] > threshold
            else score for qas_id, score in scores.items()}


def _totals(exact, f1, qids):
    return collections.OrderedDict([
        ("exact", 100.0 * sum(exact[k] for k in qids) / len(qids)),
        ("f1", 100.0 * sum(f1[k] for k in qids) / len(qids)),
        ("total", len(qids))])


def _best_threshold(predictions, scores, na_probs, has_answer):
    """(best score in percent, odds threshold) when answering "" above the threshold.

    Starting from "every question answered no-answer", questions are switched
    to their prediction in order of increasing odds; the best running total
    wins (the first one on ties).
    """
    current = best = sum(1 for answered in has_answer.values() if not answered)
    threshold = 0.0
    for qas_id in sorted(na_probs, key=lambda k: na_probs[k]):
        if qas_id not in scores:
            continue
        if has_answer[qas_id]:
            current += scores[qas_id]
        elif predictions[qas_id]:
            current -= 1
        if current > best:
            best, threshold = current, na_probs[qas_id]
    return 100.0 * best / len(scores), threshold
