"""The in-graph tokenizer against the Python reference: every ASCII pair, the
final-sigma context, hard text, bad bytes, long words, shapes, and the TF
traps it is built to avoid (every code point: test_every_code_point.py)."""

import random
import unicodedata

import numpy as np
import pytest
import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.tokenization import BasicTokenizer, BertTokenizerLayer, FullTokenizer
from bert_tf.tokenization import GraphBasicTokenizer
from tokenization_support import ADVERSARIAL, graph_ids


@pytest.fixture(scope="module", params=[True, False], ids=["uncased", "cased"])
def basic_pair(request):
    """(GraphBasicTokenizer, BasicTokenizer) of one casing mode."""
    return GraphBasicTokenizer(request.param), BasicTokenizer(request.param)


def _graph_words(graph, texts):
    words = tf.function(lambda batch: graph(batch))(tf.constant(texts))
    return [[w.decode("utf-8") for w in row] for row in words.to_list()]


def _mismatches(graph, reference, texts):
    return [(t, g) for t, g in zip(texts, _graph_words(graph, texts))
            if g != reference.tokenize(t)]


def test_every_ascii_pair(basic_pair):
    graph, reference = basic_pair
    pairs = [f"x{chr(a)}{chr(b)}Y" for a in range(128) for b in range(128)]
    # The same text with a non-ASCII letter takes the code point path.
    texts = pairs + [t + "\u00e9" for t in pairs]
    assert _mismatches(graph, reference, texts) == []


def test_final_sigma_contexts(basic_pair):
    graph, reference = basic_pair
    texts = ["\u03a3", "A\u03a3", "\u03a3A", "A\u03a3A", "A\u03a3\u03a3", "A\u03a3.",
             "A.\u03a3", "A'\u03a3'", "A\u0301\u03a3", "A\u03a3\u0301B", "A\u03a3\u200bB",
             "A\u03a3\x00B", "A\u00ad\u03a3", "1\u03a3", "\u02b0\u03a3", "A\u0345\u03a3",
             "A\u03a3\u0345", "\u03a3\u03a3\u03a3", "A\u03a3 B", "A\u03a3\u535aB"]
    # Also across strings of one batch: no context may leak between them.
    assert _mismatches(graph, reference, texts + texts[::-1]) == []


def test_final_sigma_contexts_end_at_spaces_in_the_layer(layer, reference):
    """The layer cuts strings with non-ASCII characters at spaces."""
    texts = ["A\u03a3 B", "A \u03a3B", "A\u03a3\u0301 \u0301B", "\u00e9 \u03a3\u03a3 x\u03a3",
             "A\u200b \u03a3", "A\u03a3\t\u03a3", "A\u03a3\u00a0B", "\u03a3  A\u03a3  "]
    expected = [reference.convert_tokens_to_ids(reference.tokenize(t)) for t in texts]
    assert graph_ids(layer, texts) == expected


def test_random_bytes_are_decoded_like_python(layer, reference):
    rng = random.Random(1)
    pool = [0x00, 0x41, 0x61, 0x20, 0x80, 0xBF, 0xC0, 0xC3, 0xA9, 0xE0, 0xED, 0xF0, 0xF4, 0xFF]
    texts = [bytes(rng.choice(pool + [rng.randrange(256)]) for _ in range(rng.randint(0, 16)))
             for _ in range(3000)]
    expected = [reference.convert_tokens_to_ids(reference.tokenize(t)) for t in texts]
    assert graph_ids(layer, texts) == expected


@pytest.mark.parametrize("lower", [True, False])
@pytest.mark.parametrize("keep_special_tokens", [False, True])
def test_adversarial_ids_match_reference(uncased_vocab_file, lower, keep_special_tokens):
    layer = BertTokenizerLayer(uncased_vocab_file, lower, keep_special_tokens)
    reference = FullTokenizer(uncased_vocab_file, lower, keep_special_tokens)
    expected = [reference.convert_tokens_to_ids(reference.tokenize(t)) for t in ADVERSARIAL]
    assert graph_ids(layer, ADVERSARIAL, batch_size=7) == expected


def test_long_word_rule_counts_folded_characters(layer, reference):
    texts = ["ab" * 100, "ab" * 100 + "a", "\u00e9" * 200, "\u00e9" * 201,
             "a\u0301" * 200, "x" * 150 + "\u200b" * 100, "[" + "a" * 200 + "]",
             "\u00e9" * 100 + "\u0101" * 100, "\u0101" * 201 + "\u00c6"]
    expected = [reference.convert_tokens_to_ids(reference.tokenize(t)) for t in texts]
    assert graph_ids(layer, texts) == expected
    assert [len(ids) == 1 and ids[0] == 100 for ids in expected] == [
        False, True, False, True, False, False, False, False, True]


@pytest.mark.parametrize("lower", [True, False], ids=["uncased", "cased"])
def test_every_ascii_pair_gives_the_reference_ids(request, lower):
    """Folded ASCII text is split into words by tensorflow-text's WordPiece itself:
    its whitespace, punctuation and word limit must be the original's."""
    layer = request.getfixturevalue("layer" if lower else "cased_layer")
    reference = request.getfixturevalue("reference" if lower else "cased_reference")
    texts = [f"x{chr(a)}{chr(b)}Y" for a in range(128) for b in range(128)]
    texts += [f"{a}{'b' * 200}{c}{'d' * 201}{c}" for a, c in
              ((" ", "\t"), ("(", "."), ("\x00", "\x7f"), ("", "\r\n"), ("e", "#"))]
    expected = [reference.convert_tokens_to_ids(reference.tokenize(t)) for t in texts]
    assert graph_ids(layer, texts) == expected


@pytest.mark.parametrize("lower", [True, False], ids=["uncased", "cased"])
def test_small_vocabulary_lacking_punctuation(tiny_vocab_file, lower):
    """A punctuation mark missing from the vocabulary is an [UNK] word."""
    texts = ["a.b,c!", "unwanted,running.", "!!a!!", "wa##nt,", "un" * 101, "[UNK] [CLS]"]
    layer = BertTokenizerLayer(tiny_vocab_file, lower)
    reference = FullTokenizer(tiny_vocab_file, lower)
    expected = [reference.convert_tokens_to_ids(reference.tokenize(t))
                for t in texts + ADVERSARIAL]
    assert graph_ids(layer, texts + ADVERSARIAL) == expected
    assert expected[1] == [7, 4, 5, 10, 8, 9, 0]


def test_shapes_empty_batch_empty_strings_and_scalars(layer):
    assert layer(tf.constant([], tf.string)).shape.as_list() == [0, None]
    assert layer(["", " \t", "\x00"]).to_list() == [[], [], []]
    scalar = layer(tf.constant("hello world"))
    assert isinstance(scalar, tf.Tensor) and scalar.numpy().tolist() == [7592, 2088]
    with pytest.raises(ValueError, match="shape \\[batch\\]"):
        layer(tf.constant([["a"]]))


# --- traps of TF's own string ops, pinned (REFERENCE.md section 8) ---

def test_tf_strings_lower_lags_python_but_the_layer_follows_python(layer, reference):
    # ICU in TF predates Unicode 14: U+2C2F (Glagolitic capital) stays upper.
    assert tf.strings.lower("\u2c2f", encoding="utf-8").numpy().decode() == "\u2c2f"
    assert "\u2c2f".lower() == "\u2c5f"
    # Where they agree: final sigma and dotted capital I (full mappings).
    for text in ("\u039f\u0394\u039f\u03a3", "\u0130"):
        assert tf.strings.lower(text, encoding="utf-8").numpy().decode() == text.lower()
    texts = ["x\u2c2fx", "\u039f\u0394\u039f\u03a3", "\u0130stanbul"]
    assert graph_ids(layer, texts) == [
        reference.convert_tokens_to_ids(reference.tokenize(t)) for t in texts]


def test_fast_bert_tokenizer_case_folds_but_the_layer_does_not(layer, reference):
    fast_bert = tf_text.FastBertTokenizer(layer.vocabulary, token_out_type=tf.int32,
                                          lower_case_nfd_strip_accents=True)
    for text in ("straße ﬁ Ⅳ", "a\x00b"):  # NUL: deleted by the original, split by it
        ours = reference.convert_tokens_to_ids(reference.tokenize(text))
        assert graph_ids(layer, [text]) == [ours]
        assert fast_bert.tokenize([text]).to_list() != [ours]
    assert fast_bert.tokenize(["ß"]).to_list() == [
        reference.convert_tokens_to_ids(["ss"])]


def test_known_difference_canonical_order_of_spacing_marks():
    # NFD sorts combining marks by class across a word; the graph tokenizer
    # decomposes one character at a time. Only spacing marks (Mc) with a
    # non-zero class survive accent stripping, so only they can show it.
    text = "\U0001d16d\U0001d165"  # classes 226, 216
    assert BasicTokenizer().tokenize(text) == ["\U0001d165\U0001d16d"]
    assert _graph_words(GraphBasicTokenizer(), [text]) == [["\U0001d16d\U0001d165"]]
    assert BasicTokenizer(do_lower_case=False).tokenize(text) == _graph_words(
        GraphBasicTokenizer(do_lower_case=False), [text])[0]


def test_only_rare_marks_can_reorder():
    marks = [cp for cp in range(0x110000)
             if unicodedata.combining(chr(cp)) and unicodedata.category(chr(cp)) != "Mn"]
    assert np.all([unicodedata.category(chr(cp)) == "Mc" for cp in marks])
    assert len(marks) < 40
