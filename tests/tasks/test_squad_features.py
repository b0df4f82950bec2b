"""SQuAD windows: the original's layout, windows, max context and labels.

Whole-set parity with HF transformers lives in tests/bench/test_squad_parity.py;
here: hand-checked windows, and the places where HF's port departs from the
original (pinned, so that a change on either side shows).
"""

import json

import numpy as np
import pytest
import transformers
from transformers.data.processors import squad as hf_squad

from bert_tf.tasks import squad_data, squad_features
from bert_tf.tokenization import FullTokenizer

NUMBERS = ("one two three four five six seven eight nine ten eleven twelve thirteen "
           "fourteen fifteen sixteen seventeen eighteen nineteen twenty")


@pytest.fixture(scope="module")
def tokenizer(uncased_vocab_file):
    return FullTokenizer(uncased_vocab_file, do_lower_case=True)


@pytest.fixture(scope="module")
def hf_tokenizer(uncased_vocab_file):
    return transformers.BertTokenizer(uncased_vocab_file, do_lower_case=True)


def write_squad(folder, context, qas, version="1.1"):
    path = folder / "squad.json"
    path.write_text(json.dumps({"version": version, "data": [
        {"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]}), encoding="utf-8")
    return path


def answer(qas_id, context, text, question="which number?"):
    return {"id": qas_id, "question": question,
            "answers": [{"text": text, "answer_start": context.index(text)}]}


def test_layout_ids_and_tightened_answer(tmp_path, tokenizer):
    context = "The leader was John Smith (1895-1943)."
    path = write_squad(tmp_path, context, [answer("q", context, "1895", "When was he born?")])
    examples = squad_data.read_squad_examples(path, is_training=True)
    (feature,) = squad_features.convert_examples_to_features(
        examples, tokenizer, max_seq_length=32, doc_stride=8, max_query_length=4,
        is_training=True)
    assert feature.tokens == ["[CLS]", "when", "was", "he", "born", "[SEP]", "the", "leader",
                              "was", "john", "smith", "(", "1895", "-", "1943", ")", ".",
                              "[SEP]"]
    # The word "(1895-1943)." spans 5 pieces; the answer is tightened to "1895".
    assert (feature.start_position, feature.end_position) == (12, 12)
    assert feature.token_to_orig_map[12] == 5 and feature.token_to_orig_map[16] == 5
    assert feature.input_ids.tolist() == tokenizer.convert_tokens_to_ids(feature.tokens)
    columns = squad_features.feature_columns([feature], 32, is_training=True)
    assert columns["input_mask"][0].tolist() == [1] * 18 + [0] * 14
    assert columns["segment_ids"][0].tolist() == [0] * 6 + [1] * 12 + [0] * 14
    assert columns["unique_ids"].tolist() == [1000000000]
    assert (columns["start_positions"][0], columns["end_positions"][0]) == (12, 12)


def test_long_context_windows_max_context_and_labels(tmp_path, tokenizer):
    # 20 one-piece words, 3 question pieces: windows of 16 - 3 - 3 = 10 pieces every 4.
    path = write_squad(tmp_path, NUMBERS, [answer("q", NUMBERS, "eighteen")])
    examples = squad_data.read_squad_examples(path, is_training=True)
    features = squad_features.convert_examples_to_features(
        examples, tokenizer, max_seq_length=16, doc_stride=4, max_query_length=8,
        is_training=True)
    assert [(f.doc_start, f.doc_length) for f in features] == [(0, 10), (4, 10), (8, 10), (12, 8)]
    # Piece 9 ("ten"): windows 0..2 give min(left, right) 0, 4 (4..13), 1 (8..17): window 1.
    # Piece 13 ("fourteen"): window 2 gives min(5, 4) = 4, window 3 min(1, 6) = 1: window 2.
    best = [[f.doc_start + i for i, flag in enumerate(f.max_context) if flag] for f in features]
    assert best == [[0, 1, 2, 3, 4, 5, 6], [7, 8, 9, 10], [11, 12, 13, 14], [15, 16, 17, 18, 19]]
    # "eighteen" is piece 17: outside windows 0 and 1 -> (0, 0); inside 2 and 3.
    assert [(f.start_position, f.end_position) for f in features] == [
        (0, 0), (0, 0), (17 - 8 + 5, 17 - 8 + 5), (17 - 12 + 5, 17 - 12 + 5)]


def test_query_truncated_and_impossible_labels(tmp_path, tokenizer, caplog):
    qas = [{"id": "q", "question": "one two three four five six", "answers": [],
            "is_impossible": True}]
    path = write_squad(tmp_path, NUMBERS, qas, version="v2.0")
    examples = squad_data.read_squad_examples(path, True, version_2_with_negative=True)
    with caplog.at_level("INFO"):
        features = squad_features.convert_examples_to_features(
            examples, tokenizer, max_seq_length=24, doc_stride=10, max_query_length=4,
            is_training=True)
    assert "1 questions cut to max_query_length 4 pieces" in caplog.text
    assert features[0].tokens[:6] == ["[CLS]", "one", "two", "three", "four", "[SEP]"]
    assert [f.doc_length for f in features] == [17, 10]
    assert all((f.start_position, f.end_position, f.is_impossible) == (0, 0, True)
               for f in features)


def test_sizes_are_checked(tokenizer):
    with pytest.raises(ValueError, match=r"max_seq_length \(67\) must be greater than "
                                         r"max_query_length \(64\) \+ 3"):
        squad_features.convert_examples_to_features([], tokenizer, 67, 128, 64)
    with pytest.raises(ValueError, match="doc_stride must be positive, got 0"):
        squad_features.convert_examples_to_features([], tokenizer, 384, 0, 64)


def hf_windows(folder, hf_tokenizer, max_seq_length, doc_stride):
    examples = hf_squad.SquadV1Processor().get_train_examples(str(folder), "squad.json")
    return hf_squad.squad_convert_examples_to_features(
        examples, hf_tokenizer, max_seq_length, doc_stride, 8, is_training=True, threads=1,
        tqdm_enabled=False)


def test_hf_departure_doc_stride_longer_than_window(tmp_path, tokenizer, hf_tokenizer):
    # Windows hold 10 pieces. The original steps by min(window, doc_stride) = 10 and covers
    # the whole context; HF steps by doc_stride (20) and stops after one window, so the
    # answer "eighteen" is in no HF window at all.
    path = write_squad(tmp_path, NUMBERS, [answer("q", NUMBERS, "eighteen")])
    examples = squad_data.read_squad_examples(path, is_training=True)
    ours = squad_features.convert_examples_to_features(examples, tokenizer, 16, 20, 8, True)
    assert [(f.doc_start, f.doc_length, f.start_position) for f in ours] == [
        (0, 10, 0), (10, 10, 12)]
    hf = hf_windows(tmp_path, hf_tokenizer, 16, 20)
    assert [(f.paragraph_len, f.start_position) for f in hf] == [(10, 0)]
    # doc_stride 11: HF's second window starts at piece 11, piece 10 ("eleven") is never seen.
    hf = hf_windows(tmp_path, hf_tokenizer, 16, 11)
    assert [f.tokens[5] for f in hf] == ["one", "twelve"]


def test_hf_departure_out_of_window_marked_impossible(tmp_path, tokenizer, hf_tokenizer):
    # The original keeps the example's is_impossible (False) on every window; HF sets True
    # on the windows that miss the answer. Labels agree: (0, 0) there.
    path = write_squad(tmp_path, NUMBERS, [answer("q", NUMBERS, "eighteen")])
    examples = squad_data.read_squad_examples(path, is_training=True)
    ours = squad_features.convert_examples_to_features(examples, tokenizer, 16, 5, 8, True)
    hf = hf_windows(tmp_path, hf_tokenizer, 16, 5)
    assert [(f.start_position, f.is_impossible) for f in ours] == [
        (0, False), (0, False), (12, False)]
    assert [(f.start_position, f.is_impossible) for f in hf] == [
        (0, True), (0, True), (12, False)]


def test_word_cache_gives_word_by_word_pieces(tmp_path, tokenizer):
    # Two paragraphs sharing words, two questions on the first: every window equals a
    # fresh word-by-word tokenization.
    context = "Beyoncé's début: Ünïcödé words, words and (1895-1943)."
    qas = [answer("a", context, "words"), answer("b", context, "1895")]
    path = write_squad(tmp_path, context, qas)
    examples = squad_data.read_squad_examples(path, is_training=True)
    features = squad_features.convert_examples_to_features(examples, tokenizer, 32, 8, 8, True)
    for feature in features:
        example = examples[feature.example_index]
        pieces = [p for word in example.doc_tokens for p in tokenizer.tokenize(word)]
        assert feature.doc_pieces == pieces
        assert np.array_equal(feature.input_ids,
                              tokenizer.convert_tokens_to_ids(feature.tokens))


def test_hf_departure_tokenizer_word_limit(tmp_path, tokenizer, hf_tokenizer):
    # HF's slow tokenizer turns words over 100 characters into [UNK]; the original's limit
    # is 200. (On all of SQuAD's train and dev words and questions the two tokenizers
    # agree; this is the kind of context where they do not.)
    long_word = "ab" * 60
    context = f"The code {long_word} is long."
    path = write_squad(tmp_path, context, [answer("q", context, long_word)])
    examples = squad_data.read_squad_examples(path, is_training=True)
    (ours,) = squad_features.convert_examples_to_features(examples, tokenizer, 128, 16, 8, True)
    (hf,) = hf_windows(tmp_path, hf_tokenizer, 128, 16)
    assert ours.doc_pieces[2:4] == ["aba", "##ba"] and "[UNK]" not in ours.tokens
    assert hf.tokens[ours.doc_offset + 2] == "[UNK]"
    assert len(hf.tokens) < len(ours.tokens)
