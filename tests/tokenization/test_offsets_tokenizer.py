"""OffsetsTokenizer against the reference FullTokenizer on real SQuAD contexts and hard cases.

Each piece must be the reference's token, and its span of the original text,
folded by the reference's own basic tokenizer, must be the piece (without
`##`), or for `[UNK]` the whole word it stands for.
"""

import gzip
import json
import unicodedata

import pytest
import tensorflow as tf

from bert_tf.tokenization import BasicTokenizer, FullTokenizer
from bert_tf.tokenization.offsets_tokenizer import OffsetsTokenizer
from tests_shared import shared_path

HARD_CASES = [
    "", "   ", "\t\n", "a", "Ünïcödé café naïve — 東京大学 ΣΊΣΥΦΟΣ 🙂 ok",
    "Cafe\u0301 re\u0301sume\u0301 \u0130stanbul \ufb01ne \u00df \u2028x\u00a0y",
    "Jose\u0301\u0301, Bogota\u0301\x07 e\u0301\u200b\u0301 \u0301\u0301x\u0301",
    "zero\u200bwidth\x00nul\ufffd ctrl\x07 (1895\u20131943).", "x" * 201 + " short",
    "supercalifragilisticexpialidocious!!! don't e.g. U.S.A.",
    "\u3042\u3044\u3046 mixed \uac00\ub098",
    "\U0001d16d\U0001d165 \U0001f600\U0001f601 word", "ΣΑΣ Σ σΣ ΑΣ.",
]


def _squad_contexts(every):
    with gzip.open(shared_path("squad", "dev-v1.1.json.gz"), "rt", encoding="utf-8") as f:
        data = json.load(f)["data"]
    contexts = [p["context"] for article in data for p in article["paragraphs"]]
    return contexts[::every]


def _expected(reference, text):
    """[(token, what the piece's span folds to, its word's index)] from the reference."""
    expected = []
    for index, word in enumerate(reference.basic_tokenizer.tokenize(text)):
        for piece in reference.wordpiece_tokenizer.tokenize(word):
            expected.append((piece, word if piece == "[UNK]" else piece.removeprefix("##"),
                             index))
    return expected


def _stripped_accent(fold, char):
    """Whether the reference's basic tokenizer drops `char` as an accent (a combining mark)."""
    return unicodedata.category(char) == "Mn" and not fold.tokenize(char)


def _check(tokenizer, reference, texts):
    fold = BasicTokenizer(reference.basic_tokenizer.do_lower_case)
    pieces = tokenizer(tf.constant(texts))
    vocab = reference.inv_vocab
    checked = partial = 0
    for text, ids, starts, ends, words in zip(texts, pieces.ids.to_list(),
                                              pieces.starts.to_list(), pieces.ends.to_list(),
                                              pieces.words.to_list()):
        expected = _expected(reference, text)
        assert [vocab[i] for i in ids] == [token for token, _, _ in expected], text
        assert words == [word for _, _, word in expected], text
        for (token, folded, _), start, end in zip(expected, starts, ends):
            assert 0 <= start < end <= len(text), (text, token, start, end)
            span = text[start:end]
            # A lone capital sigma lowers to the non-final form.
            got = "".join(fold.tokenize(span)).replace("\u03c2", "\u03c3")
            folded = folded.replace("\u03c2", "\u03c3")
            if got != folded:
                # A piece may cover part of a character that folds to several
                # (Hangul syllables decompose to jamo): then it lies inside.
                edges = [fold.tokenize(text[start]), fold.tokenize(text[end - 1])]
                assert folded in got and any(len("".join(e)) > 1 for e in edges), (
                    text, token, span)
                partial += 1
            # Tight: the span starts on a character that survives folding and
            # ends after the last one, plus the stripped accents that follow
            # it (an accent written as a combining mark goes with its letter).
            last = max(i for i in range(start, end) if fold.tokenize(text[i]))
            assert fold.tokenize(text[start]), (text, span)
            assert all(_stripped_accent(fold, c) for c in text[last + 1:end]), (text, span)
            assert end == len(text) or not _stripped_accent(fold, text[end]), (text, span)
            checked += 1
        assert starts == sorted(starts)
    return checked, partial


@pytest.fixture(scope="module")
def uncased(uncased_vocab_file):
    return OffsetsTokenizer(uncased_vocab_file), FullTokenizer(uncased_vocab_file)


def test_hard_cases_uncased(uncased):
    checked, partial = _check(*uncased, HARD_CASES)
    assert checked > 80 and partial == 4  # the Hangul syllables' jamo


def test_hard_cases_cased(uncased_vocab_file):
    assert _check(OffsetsTokenizer(uncased_vocab_file, do_lower_case=False),
                  FullTokenizer(uncased_vocab_file, do_lower_case=False), HARD_CASES)[0] > 70


def test_squad_contexts(uncased):
    contexts = _squad_contexts(every=7)
    assert len(contexts) > 250
    assert any(not c.isascii() for c in contexts)
    checked, partial = _check(*uncased, contexts)
    assert checked > 40000 and partial < 10


def test_squad_contexts_cased(uncased_vocab_file):
    contexts = _squad_contexts(every=29)
    assert _check(OffsetsTokenizer(uncased_vocab_file, do_lower_case=False),
                  FullTokenizer(uncased_vocab_file, do_lower_case=False), contexts)[0] > 5000


def test_in_a_tf_function_and_an_empty_batch(uncased):
    tokenizer = uncased[0]
    run = tf.function(lambda text: tuple(tokenizer(text)),
                      input_signature=[tf.TensorSpec([None], tf.string)])
    ids, starts, ends, words = run(tf.constant(["Hello, WORLD", ""]))
    assert starts.to_list() == [[0, 5, 7], []] and ends.to_list() == [[5, 6, 12], []]
    assert words.to_list() == [[0, 1, 2], []]
    assert ids.to_list() == [[7592, 1010, 2088], []]
    assert run(tf.constant([], tf.string))[0].shape[0] == 0
