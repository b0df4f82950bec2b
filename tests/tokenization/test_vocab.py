"""Vocabulary files and the checkpoint casing guard."""

import pytest
import transformers.models.bert.tokenization_bert as hf_bert

from bert_tf.tokenization.vocab import (PRETRAINING_REQUIRED_TOKENS, VocabError, load_vocab,
                                        validate_case_matches_checkpoint, vocabulary_list)


def test_released_uncased_vocab_matches_huggingface(uncased_vocab_file):
    vocab = load_vocab(uncased_vocab_file, require=PRETRAINING_REQUIRED_TOKENS)
    assert len(vocab) == 30522
    assert [vocab[t] for t in ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")] == [
        0, 100, 101, 102, 103]
    assert vocab == dict(hf_bert.load_vocab(uncased_vocab_file))


def _write(tmp_path, content, name="vocab.txt"):
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    return str(path)


def test_ids_are_line_numbers_with_whitespace_stripped(tmp_path):
    path = _write(tmp_path, "[CLS]\r\n  [SEP] \n[UNK]\nhello\t\n\n")
    # The trailing blank line is a token, as in the original.
    assert load_vocab(path) == {"[CLS]": 0, "[SEP]": 1, "[UNK]": 2, "hello": 3, "": 4}


def test_last_line_needs_no_newline(tmp_path):
    assert list(load_vocab(_write(tmp_path, "[CLS]\n[SEP]\n[UNK]"))) == [
        "[CLS]", "[SEP]", "[UNK]"]


@pytest.mark.parametrize("content, message", [
    ("", "is empty"),
    ("[CLS]\n[SEP]\nhello\n", r"lacks the special tokens \['\[UNK\]'\]"),
    ("[CLS]\n[SEP]\n[UNK]\nhello\nhello\n", r"vocab.txt:5: token 'hello' repeats .*vocab.txt:4"),
    (b"[CLS]\n[SEP]\n[UNK]\n\xff\n", r"vocab.txt:4: not UTF-8 \(.*byte 0xff"),
])
def test_bad_files_raise_vocab_error_naming_the_file(tmp_path, content, message):
    path = _write(tmp_path, content)
    with pytest.raises(VocabError, match=message) as error:
        load_vocab(path)
    assert path in str(error.value)


def test_a_byte_order_mark_is_no_part_of_the_first_token(tmp_path):
    """Ids stay line numbers, and every reader of the file (the Python tokenizer and
    the in-graph one) sees `[PAD]`, not `\\ufeff[PAD]`."""
    from bert_tf.tokenization.full_tokenizer import FullTokenizer
    from bert_tf.tokenization.tokenizer_layer import BertTokenizerLayer
    tokens = "[PAD]\n[UNK]\n[CLS]\n[SEP]\n[MASK]\nhello\n##s\n"
    plain = _write(tmp_path, tokens, "plain.txt")
    with_bom = _write(tmp_path, b"\xef\xbb\xbf" + tokens.encode(), "bom.txt")
    assert load_vocab(with_bom, require=PRETRAINING_REQUIRED_TOKENS) == load_vocab(plain)
    text = "[PAD] Hellos [MASK]"
    expected = [0, 5, 6, 4]
    assert FullTokenizer(with_bom, keep_special_tokens=True).convert_tokens_to_ids(
        FullTokenizer(with_bom, keep_special_tokens=True).tokenize(text)) == expected
    layer = BertTokenizerLayer(with_bom, keep_special_tokens=True)
    assert layer([text]).to_list() == [expected]
    assert layer.vocabulary == list(load_vocab(plain))


def test_missing_file_is_named(tmp_path):
    missing = str(tmp_path / "nope.txt")
    with pytest.raises(VocabError, match=f"{missing} does not exist"):
        load_vocab(missing)
    with pytest.raises(VocabError) as error:  # said "does not exist" of a folder that does
        load_vocab(str(tmp_path))
    assert str(error.value) == (f"vocabulary file {tmp_path} is a directory; name the "
                                "vocab.txt in it")


def test_require_adds_pretraining_tokens(tmp_path):
    path = _write(tmp_path, "[CLS]\n[SEP]\n[UNK]\n")
    assert len(load_vocab(path)) == 3
    with pytest.raises(VocabError, match=r"\['\[MASK\]', '\[PAD\]'\]"):
        load_vocab(path, require=PRETRAINING_REQUIRED_TOKENS)


def test_vocabulary_list_takes_a_path_or_a_list(uncased_vocab_file):
    tokens = vocabulary_list(uncased_vocab_file)
    assert tokens[101] == "[CLS]" and len(tokens) == 30522
    assert vocabulary_list(tokens[:200]) == tokens[:200]
    with pytest.raises(VocabError,
                       match="vocabulary entry 3: token 'a' repeats vocabulary entry 2"):
        vocabulary_list(["[CLS]", "[SEP]", "a", "a", "[UNK]"])
    with pytest.raises(VocabError, match="vocabulary entry 1 is b'x'"):
        vocabulary_list(["[CLS]", b"x"])
    with pytest.raises(VocabError, match="lacks"):
        vocabulary_list(["[CLS]", "[SEP]"])


@pytest.mark.parametrize("checkpoint, lower", [
    ("/models/uncased_L-12_H-768_A-12/bert_model.ckpt", True),
    ("gs://bucket/uncased_L-24_H-1024_A-16/bert_model.ckpt-1000", True),
    ("/models/multilingual_L-12_H-768_A-12/bert_model.ckpt", True),
    ("/models/chinese_L-12_H-768_A-12/bert_model.ckpt", True),
    ("/models/wwm_uncased_L-24_H-1024_A-16/bert_model.ckpt", True),
    ("/models/uncased_L-2_H-128_A-2", True),  # a compact model's folder
    ("/models/cased_L-12_H-768_A-12/bert_model.ckpt", False),
    ("/models/cased_L-24_H-1024_A-16/", False),
    ("/models/multi_cased_L-12_H-768_A-12/bert_model.ckpt", False),
    ("/models/wwm_cased_L-24_H-1024_A-16/bert_model.ckpt", False),
])
def test_case_guard_refuses_a_mismatch(checkpoint, lower):
    validate_case_matches_checkpoint(lower, checkpoint)
    with pytest.raises(ValueError, match=f"--do_lower_case={not lower} does not match "
                                         "--init_checkpoint="):
        validate_case_matches_checkpoint(not lower, checkpoint)


@pytest.mark.parametrize("checkpoint", [None, "", "/models/my_bert/bert_model.ckpt",
                                        "/tmp/run/model.ckpt-100"])
def test_case_guard_ignores_unknown_checkpoints(checkpoint):
    validate_case_matches_checkpoint(True, checkpoint)
    validate_case_matches_checkpoint(False, checkpoint)
