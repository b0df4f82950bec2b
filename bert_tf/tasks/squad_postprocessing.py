"""From start/end logits to SQuAD answers, the original release's way.

For each question, every window proposes the `n_best_size` best starts times
the `n_best_size` best ends; spans that leave the window's context, start in
a window that is not the start piece's best (max-context) window, end before
they start or run longer than `max_answer_length` pieces are dropped. The
rest are ranked by start + end logit, de-duplicated by their final text (the
pieces mapped back to the context's own characters by `final_text`), and the
first `n_best_size` form the n-best list with softmax probabilities.

SQuAD 2.0 adds the null answer: its score is the smallest start[0] + end[0]
([CLS]) over the question's windows; the question is answered "" when that
score minus the best non-null score exceeds `null_score_diff_threshold`, and
the difference is written to `null_odds.json`. When no non-null span
survives, the answer is "" (the original fails there) and the odds are the
null score against a non-null score of 0.
"""

import collections
import json
import math
import os

from absl import logging
import numpy as np

from bert_tf.atomic_files import write_texts
from bert_tf.tokenization import BasicTokenizer

PREDICTION_FILES = ("predictions.json", "nbest_predictions.json", "null_odds.json")
_NULL_SCORE_START = 1000000.0  # larger than any real null score, as in the original


def final_text(pred_text, orig_text, do_lower_case, verbose_logging=False):
    """Projects normalised prediction text back onto the original words' characters.

    The prediction comes from pieces (lower-cased, accents stripped, split on
    punctuation); the original words may hold more characters ("Smith's" for
    "smith"). Both are aligned character by character after removing spaces;
    when the alignment fails, the whole original text is returned.

    >>> final_text("steve smith", "Steve Smith's", do_lower_case=True)
    'Steve Smith'
    >>> final_text("ing", "(Running)", do_lower_case=True)
    'ing'
    """
    tok_text = " ".join(BasicTokenizer(do_lower_case=do_lower_case).tokenize(orig_text))
    start = tok_text.find(pred_text)
    if start == -1:
        _verbose(verbose_logging, "Unable to find text: %r in %r", pred_text, orig_text)
        return orig_text
    end = start + len(pred_text) - 1
    orig_without_spaces, orig_positions = _without_spaces(orig_text)
    tok_without_spaces, tok_positions = _without_spaces(tok_text)
    if len(orig_without_spaces) != len(tok_without_spaces):
        _verbose(verbose_logging, "Length not equal after stripping spaces: %r vs %r",
                 orig_without_spaces, tok_without_spaces)
        return orig_text
    tok_to_compact = {position: index for index, position in enumerate(tok_positions)}
    if start not in tok_to_compact or end not in tok_to_compact:
        _verbose(verbose_logging, "Couldn't map the span of %r onto %r", pred_text, orig_text)
        return orig_text
    return orig_text[orig_positions[tok_to_compact[start]]:
                     orig_positions[tok_to_compact[end]] + 1]


def _without_spaces(text):
    """(text without " ", the original position of each remaining character)."""
    positions = [index for index, char in enumerate(text) if char != " "]
    return "".join(text[index] for index in positions), positions


def _verbose(enabled, message, *args):
    if enabled:
        logging.info(message, *args)


def best_indexes(logits, n_best_size):
    """Indexes of the `n_best_size` largest logits, largest first, ties by index.

    >>> best_indexes([0.5, 2.0, 0.5, 3.0], 3)
    [3, 1, 0]
    """
    return np.argsort(-np.asarray(logits, np.float64), kind="stable")[:n_best_size].tolist()


def softmax(scores):
    """Softmax of a list of floats (max-shifted, in Python floats).

    >>> [round(p, 4) for p in softmax([1.0, 1.0, 0.0])]
    [0.4223, 0.4223, 0.1554]
    """
    if not scores:
        return []
    top = max(scores)
    exps = [math.exp(score - top) for score in scores]
    total = sum(exps)
    return [value / total for value in exps]


_Candidate = collections.namedtuple(
    "_Candidate", ["feature_index", "start_index", "end_index", "start_logit", "end_logit"])


def predict_answers(examples, features, start_logits, end_logits, n_best_size=20,
                    max_answer_length=30, do_lower_case=True, version_2_with_negative=False,
                    null_score_diff_threshold=0.0, verbose_logging=False):
    """Answers every example from its windows' logits.

    Args:
        examples: the `SquadExample`s the features were built from (same order).
        features: their `SquadFeature` windows.
        start_logits, end_logits: [num_features, seq_length] arrays aligned
            with `features`.
        n_best_size, max_answer_length, do_lower_case, version_2_with_negative,
        null_score_diff_threshold, verbose_logging: as the original flags.

    Returns:
        (predictions, nbest, null_odds): ordered dicts keyed by question id:
        the answer text; the n-best list of {text, probability, start_logit,
        end_logit}; SQuAD 2.0 only, null score minus best non-null score.
    """
    start_logits = np.asarray(start_logits, np.float64)
    end_logits = np.asarray(end_logits, np.float64)
    if len(start_logits) != len(features) or len(end_logits) != len(features):
        raise ValueError(f"{len(features)} features but {len(start_logits)} start and "
                         f"{len(end_logits)} end logit rows")
    rows_of_example = collections.defaultdict(list)
    for row, feature in enumerate(features):
        rows_of_example[feature.example_index].append(row)
    predictions, nbest_lists, null_odds = (collections.OrderedDict() for _ in range(3))
    for example_index, example in enumerate(examples):
        rows = rows_of_example[example_index]
        candidates, null = _candidates(features, rows, start_logits, end_logits,
                                       n_best_size, max_answer_length, version_2_with_negative)
        nbest = _nbest(example, [features[row] for row in rows], candidates, null,
                       n_best_size, do_lower_case, verbose_logging)
        probabilities = softmax([entry[1] + entry[2] for entry in nbest])
        nbest_lists[example.qas_id] = [
            collections.OrderedDict(text=text, probability=probability,
                                    start_logit=start, end_logit=end)
            for (text, start, end), probability in zip(nbest, probabilities)]
        if not version_2_with_negative:
            predictions[example.qas_id] = nbest[0][0]
            continue
        best_non_null = next((entry for entry in nbest if entry[0]), ("", 0.0, 0.0))
        score_diff = null.start_logit + null.end_logit - best_non_null[1] - best_non_null[2]
        null_odds[example.qas_id] = score_diff
        predictions[example.qas_id] = (
            "" if score_diff > null_score_diff_threshold else best_non_null[0])
    return predictions, nbest_lists, null_odds


def _candidates(features, rows, start_logits, end_logits, n_best_size, max_answer_length,
                version_2):
    """Valid spans of an example's windows, best first, and its null candidate (2.0 only)."""
    candidates = []
    null = _Candidate(0, 0, 0, 0.0, 0.0) if version_2 else None
    null_score = _NULL_SCORE_START
    for feature_index, row in enumerate(rows):
        feature = features[row]
        starts, ends = start_logits[row], end_logits[row]
        if version_2 and starts[0] + ends[0] < null_score:
            null_score = starts[0] + ends[0]
            null = _Candidate(feature_index, 0, 0, float(starts[0]), float(ends[0]))
        first, last = feature.doc_offset, feature.doc_offset + feature.doc_length - 1
        for start in best_indexes(starts, n_best_size):
            if not first <= start <= last or not feature.max_context[start - first]:
                continue
            for end in best_indexes(ends, n_best_size):
                if end <= last and start <= end < start + max_answer_length:
                    candidates.append(_Candidate(feature_index, start, end,
                                                 float(starts[start]), float(ends[end])))
    if version_2:
        candidates.append(null)
    candidates.sort(key=lambda c: c.start_logit + c.end_logit, reverse=True)
    return candidates, null


def _nbest(example, features, candidates, null, n_best_size, do_lower_case, verbose_logging):
    """[(text, start_logit, end_logit)] with distinct texts, best first."""
    seen = set()
    nbest = []
    for candidate in candidates:
        if len(nbest) >= n_best_size:
            break
        if candidate.start_index > 0:
            text = _span_text(example, features[candidate.feature_index], candidate,
                              do_lower_case, verbose_logging)
            if text in seen:
                continue
        else:
            text = ""
        seen.add(text)
        nbest.append((text, candidate.start_logit, candidate.end_logit))
    if null is not None and "" not in seen:
        nbest.append(("", null.start_logit, null.end_logit))
    if not nbest:
        nbest.append(("empty", 0.0, 0.0))
    return nbest


def _span_text(example, feature, candidate, do_lower_case, verbose_logging):
    """The context text of a piece span: pieces joined, then mapped onto the words."""
    first = feature.doc_start + candidate.start_index - feature.doc_offset
    last = feature.doc_start + candidate.end_index - feature.doc_offset
    pieces = " ".join(feature.doc_pieces[first:last + 1])
    pred_text = " ".join(pieces.replace(" ##", "").replace("##", "").split())
    words = example.doc_tokens[feature.piece_to_word[first]:feature.piece_to_word[last] + 1]
    return final_text(pred_text, " ".join(words), do_lower_case, verbose_logging)


def write_prediction_files(output_dir, predictions, nbest, null_odds):
    """Writes predictions.json, nbest_predictions.json and (SQuAD 2.0) null_odds.json.

    The official scorer reads them together (`--na-prob-file null_odds.json`),
    so they are one set (`atomic_files.write_texts`): a failure on any (a
    full disk on the n-best lists) leaves an earlier run's three as they
    were, never new predictions beside stale null odds. A SQuAD 1.1 run
    (no null odds) removes an earlier run's null_odds.json with the set.
    """
    contents = (predictions, nbest, null_odds or None)
    paths = [os.path.join(output_dir, name) for name in PREDICTION_FILES]
    write_texts({path: None if content is None else json.dumps(content, indent=4) + "\n"
                 for path, content in zip(paths, contents)})
    logging.info("wrote %s", ", ".join(path for path, content in zip(paths, contents)
                                       if content is not None))
