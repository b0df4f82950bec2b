"""SQuAD answers from logits: hand-checked cases and HF's departures from the original.

Real-data parity with `compute_predictions_logits` is in
tests/bench/test_squad_parity.py.
"""

import json

import numpy as np
import pytest
import transformers
from transformers.data.metrics import squad_metrics
from transformers.data.processors import squad as hf_squad

from bert_tf.tasks import squad_data, squad_features, squad_postprocessing
from bert_tf.tokenization import FullTokenizer
from tests_shared import file_size_limit

NUMBERS = ("one two three four five six seven eight nine ten eleven twelve thirteen "
           "fourteen fifteen sixteen seventeen eighteen nineteen twenty")
SEQ = 16


@pytest.fixture(scope="module")
def tokenizer(uncased_vocab_file):
    return FullTokenizer(uncased_vocab_file, do_lower_case=True)


def windows(tmp_path, tokenizer, context, qas, doc_stride=4, version="1.1"):
    path = tmp_path / "squad.json"
    path.write_text(json.dumps({"version": version, "data": [
        {"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]}), encoding="utf-8")
    examples = squad_data.read_squad_examples(path, is_training=False)
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, SEQ, doc_stride, 8, is_training=False)
    return path, examples, features


def position(feature, piece):
    """Token position of context piece `piece` in `feature` (must be inside)."""
    assert feature.doc_start <= piece < feature.doc_start + feature.doc_length
    return feature.doc_offset + piece - feature.doc_start


def test_answer_comes_from_the_max_context_window(tmp_path, tokenizer):
    # Windows (0,10) (4,10) (8,10) (12,8) over twenty one-piece words, 3 question pieces.
    qas = [{"id": "q", "question": "which number?", "answers": []}]
    _, examples, features = windows(tmp_path, tokenizer, NUMBERS, qas)
    start = np.full((len(features), SEQ), -10.0, np.float32)
    end = np.full((len(features), SEQ), -10.0, np.float32)
    # "nine" (piece 8) is best in window 1; window 0 also holds it and scores it higher,
    # but piece 8 does not have its max context there, so window 0's span is dropped.
    start[0, position(features[0], 8)], end[0, position(features[0], 8)] = 9.0, 9.0
    start[1, position(features[1], 8)], end[1, position(features[1], 9)] = 5.0, 4.0
    start[2, position(features[2], 12)], end[2, position(features[2], 12)] = 3.0, 3.0
    predictions, nbest, null_odds = squad_postprocessing.predict_answers(
        examples, features, start, end, n_best_size=3, max_answer_length=30)
    assert predictions == {"q": "nine ten"}
    assert [entry["text"] for entry in nbest["q"]][:2] == ["nine ten", "thirteen"]
    assert null_odds == {}
    # Probabilities are the softmax of start + end over the n-best list.
    scores = np.array([e["start_logit"] + e["end_logit"] for e in nbest["q"]])
    expected = np.exp(scores - scores.max()) / np.exp(scores - scores.max()).sum()
    np.testing.assert_allclose([e["probability"] for e in nbest["q"]], expected, rtol=1e-12)


def test_too_long_and_reversed_spans_are_dropped(tmp_path, tokenizer):
    qas = [{"id": "q", "question": "which number?", "answers": []}]
    _, examples, features = windows(tmp_path, tokenizer, NUMBERS, qas, doc_stride=20)
    start = np.full((len(features), SEQ), -10.0, np.float32)
    end = np.full((len(features), SEQ), -10.0, np.float32)
    first = features[0]
    start[0, position(first, 1)], end[0, position(first, 5)] = 8.0, 8.0  # 5 pieces
    end[0, position(first, 0)] = 9.0  # ends before its start: dropped
    start[0, position(first, 3)] = 1.0
    answers = {}
    for max_answer_length in (5, 4):
        predictions, _, _ = squad_postprocessing.predict_answers(
            examples, features, start, end, n_best_size=4, max_answer_length=max_answer_length)
        answers[max_answer_length] = predictions["q"]
    assert answers == {5: "two three four five six", 4: "four five six"}


def test_version_2_null_answer_and_threshold(tmp_path, tokenizer):
    qas = [{"id": "q", "question": "which number?", "answers": []}]
    _, examples, features = windows(tmp_path, tokenizer, NUMBERS, qas, version="v2.0")
    start = np.full((len(features), SEQ), -10.0, np.float32)
    end = np.full((len(features), SEQ), -10.0, np.float32)
    start[:, 0] = [1.0, 0.5, 2.0, 3.0]  # null scores 2.0, 0.5, 4.0, 6.0: minimum 0.5
    end[:, 0] = [1.0, 0.0, 2.0, 3.0]
    start[1, position(features[1], 8)], end[1, position(features[1], 8)] = 0.25, 0.0
    for threshold, expected in ((0.0, ""), (0.25, "nine"), (0.2, "")):
        predictions, nbest, null_odds = squad_postprocessing.predict_answers(
            examples, features, start, end, version_2_with_negative=True,
            null_score_diff_threshold=threshold)
        # null 0.5 - best non-null 0.25 = 0.25; "" when above the threshold
        assert null_odds == {"q": 0.25}
        assert predictions == {"q": expected}, threshold
        first, second = nbest["q"][:2]
        assert (first["text"], first["start_logit"], first["end_logit"]) == ("", 0.5, 0.0)
        assert (second["text"], second["start_logit"], second["end_logit"]) == ("nine", 0.25, 0.0)
        assert first["probability"] / second["probability"] == pytest.approx(np.exp(0.25))


def hf_run(path, uncased_vocab_file, start, end, version_2, tokenizer_class, n_best_size=20):
    processor = hf_squad.SquadV2Processor() if version_2 else hf_squad.SquadV1Processor()
    examples = processor.get_dev_examples(str(path.parent), path.name)
    hf_tokenizer = tokenizer_class(uncased_vocab_file, do_lower_case=True)
    features = hf_squad.squad_convert_examples_to_features(
        examples, hf_tokenizer, SEQ, 4, 8, is_training=False, threads=1, tqdm_enabled=False)
    results = [hf_squad.SquadResult(f.unique_id, start[i].tolist(), end[i].tolist())
               for i, f in enumerate(features)]
    files = [str(path.parent / name) for name in ("p.json", "n.json", "o.json")]
    predictions = squad_metrics.compute_predictions_logits(
        examples, features, results, n_best_size, 30, True, *files, False, version_2, 0.0,
        hf_tokenizer)
    return predictions, json.loads((path.parent / "n.json").read_text())


def test_hf_departure_null_only_answers_empty(tmp_path, tokenizer, uncased_vocab_file):
    # Every top start and end lies outside the context: only the null answer survives.
    # The original fails there (no best non-null entry); HF inserts a placeholder "empty"
    # scored 0 and answers it whenever null - 0 <= threshold. We answer "".
    qas = [{"id": "q", "question": "which number?", "answers": []}]
    path, examples, features = windows(tmp_path, tokenizer, NUMBERS, qas, version="v2.0")
    start = np.full((len(features), SEQ), -10.0, np.float32)
    end = np.full((len(features), SEQ), -10.0, np.float32)
    start[:, :5], end[:, :5] = -1.0, -1.0  # [CLS] and the question win everything
    predictions, nbest, null_odds = squad_postprocessing.predict_answers(
        examples, features, start, end, n_best_size=5, version_2_with_negative=True)
    assert predictions == {"q": ""}
    assert nbest["q"] == [{"text": "", "probability": 1.0, "start_logit": -1.0,
                           "end_logit": -1.0}]
    assert null_odds == {"q": -2.0}
    hf_predictions, hf_nbest = hf_run(path, uncased_vocab_file, start, end, True,
                                      transformers.BertTokenizer, n_best_size=5)
    assert hf_predictions == {"q": "empty"}
    assert [entry["text"] for entry in hf_nbest["q"]] == ["empty", ""]


def test_hf_departure_span_starting_inside_a_word(tmp_path, tokenizer, uncased_vocab_file):
    # "goodell" is "good ##ell". A span starting at "##ell": the original strips every
    # "##" and maps "ell" onto the word's characters; HF's convert_tokens_to_string keeps
    # "##ell", cannot find it, and answers the whole word.
    context = "Commissioner Goodell stated it."
    qas = [{"id": "q", "question": "who?", "answers": []}]
    path, examples, features = windows(tmp_path, tokenizer, context, qas)
    (feature,) = features
    assert feature.doc_pieces == ["commissioner", "good", "##ell", "stated", "it", "."]
    start = np.full((1, SEQ), -10.0, np.float32)
    end = np.full((1, SEQ), -10.0, np.float32)
    start[0, position(feature, 2)], end[0, position(feature, 2)] = 5.0, 5.0
    predictions, _, _ = squad_postprocessing.predict_answers(examples, features, start, end)
    assert predictions == {"q": "ell"}
    hf_predictions, _ = hf_run(path, uncased_vocab_file, start, end, False,
                               transformers.BertTokenizer)
    assert hf_predictions == {"q": "Goodell"}


def test_final_text_alignment_cases():
    # Accents stripped by the tokenizer map back to the original characters.
    assert squad_postprocessing.final_text("beyonce", "Beyoncé's", True) == "Beyoncé"
    # Not found: the whole original text.
    assert squad_postprocessing.final_text("xyz", "Beyoncé's", True) == "Beyoncé's"
    # Cased model: no lower-casing, so "steve" is not found in "Steve".
    assert squad_postprocessing.final_text("steve", "Steve's", False) == "Steve's"


def test_prediction_files(tmp_path):
    predictions = {"a": "x"}
    nbest = {"a": [{"text": "x", "probability": 1.0, "start_logit": 1.0, "end_logit": 2.0}]}
    squad_postprocessing.write_prediction_files(str(tmp_path), predictions, nbest, {})
    assert (tmp_path / "predictions.json").read_text() == '{\n    "a": "x"\n}\n'
    assert json.loads((tmp_path / "nbest_predictions.json").read_text()) == nbest
    assert not (tmp_path / "null_odds.json").exists()
    squad_postprocessing.write_prediction_files(str(tmp_path), predictions, nbest, {"a": 0.5})
    assert json.loads((tmp_path / "null_odds.json").read_text()) == {"a": 0.5}
    # A SQuAD 1.1 run into that folder leaves no stale null odds beside its predictions.
    squad_postprocessing.write_prediction_files(str(tmp_path), {"a": "y"}, nbest, {})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["nbest_predictions.json",
                                                           "predictions.json"]


@pytest.mark.parametrize("failing", [1, 2])
def test_prediction_files_are_replaced_all_or_none(tmp_path, failing):
    """A full disk at the second or third file leaves the earlier run's three, which the
    official scorer reads together (`--na-prob-file`), never new ones beside old."""
    squad_postprocessing.write_prediction_files(str(tmp_path), {"q": "old"}, {"q": []},
                                                {"q": 0.0})
    before = {p.name: p.read_text() for p in tmp_path.iterdir()}
    new = [{"q": "new"}, {"q": []}, {"q": -1.0}]
    new[failing] = {"q": "x" * 4096}  # past the limit: the disk fills at this file
    name = squad_postprocessing.PREDICTION_FILES[failing]
    with file_size_limit(1024), pytest.raises(
            OSError, match=rf"^cannot write {tmp_path / name}: File too large$"):
        squad_postprocessing.write_prediction_files(str(tmp_path), *new)
    assert {p.name: p.read_text() for p in tmp_path.iterdir()} == before
