"""`import bert_tf.tokenization as tokenization` serves scripts written for the
original release's `tokenization` module: every name it offers, with its behaviour."""

import collections

import pytest
import transformers.models.bert.tokenization_bert as hf_bert

import bert_tf.tokenization as tokenization
from tokenization_support import ORIGINAL_TEST_VOCAB

ORIGINAL_NAMES = ("FullTokenizer", "BasicTokenizer", "WordpieceTokenizer", "convert_to_unicode",
                  "printable_text", "convert_tokens_to_ids", "convert_ids_to_tokens",
                  "convert_by_vocab", "whitespace_tokenize", "load_vocab",
                  "validate_case_matches_checkpoint")


def test_every_original_name_is_offered():
    missing = [name for name in ORIGINAL_NAMES if not hasattr(tokenization, name)]
    assert missing == []


def test_load_vocab_is_an_ordered_dict_equal_to_huggingfaces_copy(uncased_vocab_file):
    """HF's `load_vocab` is the original's (line number = id) in an OrderedDict."""
    vocab = tokenization.load_vocab(uncased_vocab_file)
    expected = hf_bert.load_vocab(uncased_vocab_file)
    assert isinstance(vocab, collections.OrderedDict)
    assert list(vocab.items()) == list(expected.items())
    assert (vocab["[PAD]"], vocab["[UNK]"], vocab["[CLS]"], vocab["[SEP]"], vocab["[MASK]"]) == (
        0, 100, 101, 102, 103)


def test_load_vocab_demands_no_special_tokens_and_strips_lines(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_bytes(b"hello\n  world \r\nfoo")  # the original strips each line
    assert tokenization.load_vocab(str(path)) == collections.OrderedDict(
        [("hello", 0), ("world", 1), ("foo", 2)])


def test_conversions_are_plain_lookups_with_key_errors(tiny_vocab_file):
    vocab = tokenization.load_vocab(tiny_vocab_file)
    inv_vocab = {index: token for token, index in vocab.items()}
    tokens = ["runn", "##ing", "un", "[UNK]"]
    ids = [vocab[token] for token in tokens]
    assert ids == [ORIGINAL_TEST_VOCAB.index(token) for token in tokens]
    assert tokenization.convert_tokens_to_ids(vocab, tokens) == ids
    assert tokenization.convert_by_vocab(vocab, tokens) == ids
    assert tokenization.convert_ids_to_tokens(inv_vocab, ids) == tokens
    with pytest.raises(KeyError):
        tokenization.convert_tokens_to_ids(vocab, ["runn", "zebra"])
    with pytest.raises(KeyError):
        tokenization.convert_ids_to_tokens(inv_vocab, [len(vocab)])


@pytest.mark.parametrize("function", ["convert_to_unicode", "printable_text"])
def test_text_conversion(function):
    convert = getattr(tokenization, function)
    assert convert("naïve") == "naïve"
    assert convert("naïve".encode("utf-8")) == "naïve"
    assert convert(b"ab\xffc\xc3") == "abc"  # invalid UTF-8 dropped, as "ignore" does
    with pytest.raises(ValueError, match="Unsupported string type"):
        convert(12)


@pytest.mark.parametrize("text", ["", "   ", " a  b\tc\n", "\u00a0x\u3000y ", "one"])
def test_whitespace_tokenize_equals_huggingfaces_copy(text):
    assert tokenization.whitespace_tokenize(text) == hf_bert.whitespace_tokenize(text)


def test_an_original_style_script_runs(tiny_vocab_file):
    """The lines an original run_classifier.py-style script executes."""
    tokenization.validate_case_matches_checkpoint(True, "/m/uncased_L-12_H-768_A-12/bert_model.ckpt")
    with pytest.raises(ValueError, match="do_lower_case"):
        tokenization.validate_case_matches_checkpoint(
            False, "/m/uncased_L-12_H-768_A-12/bert_model.ckpt")
    tokenizer = tokenization.FullTokenizer(vocab_file=tiny_vocab_file, do_lower_case=True)
    text_a = tokenization.convert_to_unicode(b"UNwant\xc3\xa9d,running")
    tokens = ["[CLS]"] + tokenizer.tokenize(text_a) + ["[SEP]"]
    assert " ".join(tokenization.printable_text(t) for t in tokens) == (
        "[CLS] un ##want ##ed , runn ##ing [SEP]")
    ids = tokenizer.convert_tokens_to_ids(tokens)
    assert ids == [ORIGINAL_TEST_VOCAB.index(t) for t in tokens]
    assert tokenizer.convert_ids_to_tokens(ids) == tokens
    assert tokenizer.inv_vocab[ids[1]] == "un"
    basic = tokenization.BasicTokenizer(do_lower_case=True)
    wordpiece = tokenization.WordpieceTokenizer(vocab=tokenizer.vocab)
    assert [p for w in basic.tokenize(text_a) for p in wordpiece.tokenize(w)] == tokens[1:-1]
