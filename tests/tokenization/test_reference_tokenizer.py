"""The pure-Python reference tokenizer: the original's documented checks, each
rule on its own, and HuggingFace's slow port of the algorithm on hard text."""

import unicodedata

import pytest

from bert_tf.tokenization import BasicTokenizer, FullTokenizer, WordpieceTokenizer
from bert_tf.tokenization import char_classes
from tokenization_support import ADVERSARIAL, ORIGINAL_TEST_VOCAB, hf_pieces


# --- the original release's own checks (REFERENCE.md section 2) ---

def test_full_tokenizer_known_check(tiny_vocab_file):
    tokenizer = FullTokenizer(tiny_vocab_file)
    tokens = tokenizer.tokenize("UNwant\u00E9d,running")
    assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing"]
    assert tokenizer.convert_tokens_to_ids(tokens) == [7, 4, 5, 10, 8, 9]
    assert tokenizer.convert_ids_to_tokens([7, 4, 5, 10, 8, 9]) == tokens


def test_basic_tokenizer_known_checks():
    assert BasicTokenizer().tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
        "hello", "!", "how", "are", "you", "?"]
    assert BasicTokenizer().tokenize("H\u00E9llo") == ["hello"]
    assert BasicTokenizer(do_lower_case=False).tokenize(" \tHeLLo!how  \n Are yoU?  ") == [
        "HeLLo", "!", "how", "Are", "yoU", "?"]
    assert BasicTokenizer().tokenize("ah\u535A\u63A8zz") == ["ah", "\u535A", "\u63A8", "zz"]


def test_wordpiece_known_checks():
    wordpiece = WordpieceTokenizer(vocab=set(ORIGINAL_TEST_VOCAB))
    assert wordpiece.tokenize("") == []
    assert wordpiece.tokenize("unwanted running") == ["un", "##want", "##ed", "runn", "##ing"]
    assert wordpiece.tokenize("unwantedX running") == ["[UNK]", "runn", "##ing"]


def test_character_classes_known_checks():
    assert all(map(char_classes.is_whitespace, " \t\r\n\u00A0"))
    assert not any(map(char_classes.is_whitespace, "A-"))
    assert char_classes.is_control("\u0005")
    assert not any(map(char_classes.is_control, "A \t\r\U0001F4A9"))
    assert all(map(char_classes.is_punctuation, "-$`."))
    assert not any(map(char_classes.is_punctuation, "A "))


# --- each rule on its own ---

@pytest.mark.parametrize("char", ["\x00", "\ufffd", "\x01", "\x7f", "\x85", "\u200b",
                                  "\u00ad", "\ufeff", "\u2060", "\U000e0001"])
def test_cleaning_deletes_nul_replacement_and_controls(char):
    assert BasicTokenizer().tokenize(f"ab{char}cd e{char}") == ["abcd", "e"]


@pytest.mark.parametrize("char", ["\t", "\n", "\r", " ", "\u00a0", "\u2003", "\u3000",
                                  "\u202f", "\u2028", "\u2029"])
def test_whitespace_separates_words(char):
    assert BasicTokenizer().tokenize(f"ab{char}cd") == ["ab", "cd"]


@pytest.mark.parametrize("low, high", char_classes.CJK_RANGES)
def test_cjk_ranges_are_words_of_their_own(low, high):
    cased = BasicTokenizer(do_lower_case=False)  # no NFD of compatibility ideographs
    for cp in (low, high):
        assert cased.tokenize(f"ab{chr(cp)}cd") == ["ab", chr(cp), "cd"]
    for cp in (low - 1, high + 1):  # just outside: no split unless itself CJK
        if not char_classes.is_cjk(chr(cp)):
            assert len(cased.tokenize(f"ab{chr(cp)}cd")) == 1


def test_other_east_asian_scripts_are_not_split():
    assert BasicTokenizer(do_lower_case=False).tokenize("カタカナ한국어ひらがな") == [
        "カタカナ한국어ひらがな"]
    # Lower-casing decomposes Hangul and drops the voicing mark of が (Mn).
    assert BasicTokenizer().tokenize("한국어ひらがな") == [
        unicodedata.normalize("NFD", "한국어") + "ひらかな"]


def test_lower_casing_strips_accents_only_when_asked():
    assert BasicTokenizer().tokenize("Café NAÏVE Ångström") == ["cafe", "naive", "angstrom"]
    assert BasicTokenizer(do_lower_case=False).tokenize("Café") == ["Café"]


def test_case_folding_is_str_lower_not_unicode_casefold():
    # Unlike tensorflow-text's FastBertTokenizer (REFERENCE.md section 8).
    assert BasicTokenizer().tokenize("STRAßE ﬁ Ⅳ") == ["straße", "ﬁ", "ⅳ"]


def test_final_sigma_follows_str_lower():
    assert BasicTokenizer().tokenize("ΟΔΟΣ ΣΑ ΑΣ.Σ") == ["οδος", "σα", "ασ", ".", "ς"]


@pytest.mark.parametrize("char", "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~¡§«¶·»¿‐–—…‹›、。「」！，")
def test_punctuation_is_split_off(char):
    assert BasicTokenizer().tokenize(f"ab{char}{char}cd") == ["ab", char, char, "cd"]


@pytest.mark.parametrize("char", "©®™€£¥±×÷°")
def test_symbols_other_than_ascii_are_not_punctuation(char):
    assert BasicTokenizer().tokenize(f"ab{char}cd") == [f"ab{char}cd"]


def test_words_longer_than_200_characters_are_unknown(reference, hf_slow):
    assert reference.tokenize("ab" * 100 + "a") == ["[UNK]"]
    pieces = reference.tokenize("ab" * 100)
    assert len(pieces) > 1 and pieces == hf_pieces(hf_slow, "ab" * 100)
    # Characters are counted after cleaning and accent stripping.
    assert reference.tokenize("a\u0301\u200b" * 200) == reference.tokenize("a" * 200)
    assert reference.tokenize("a" * 200) != ["[UNK]"]


def test_special_tokens_are_split_by_default(reference):
    assert reference.tokenize("[MASK] x[SEP]") == ["[", "mask", "]", "x", "[", "sep", "]"]


def test_keep_special_tokens_keeps_them_whole(uncased_vocab_file):
    tokenizer = FullTokenizer(uncased_vocab_file, keep_special_tokens=True)
    assert tokenizer.tokenize("Is [MASK] here?[SEP]B[unused7] [mask] [unused99999]") == [
        "is", "[MASK]", "here", "?", "[SEP]", "b", "[unused7]", "[", "mask", "]",
        "[", "unused", "##9", "##9", "##9", "##9", "##9", "]"]


def test_keep_special_tokens_matches_huggingface_special_tokens(uncased_vocab_file, hf_slow):
    tokenizer = FullTokenizer(uncased_vocab_file, keep_special_tokens=True)
    text = "[CLS] the man went to [MASK] store [SEP] he bought [PAD][UNK] milk [SEP]"
    assert tokenizer.tokenize(text) == hf_slow.tokenize(text)


def test_bytes_are_decoded_dropping_invalid_utf8(reference):
    assert reference.tokenize(b"caf\xc3\xa9 \xff\xfeok") == reference.tokenize("café ok")


def test_unknown_tokens_and_ids_raise_named_key_errors(reference):
    with pytest.raises(KeyError, match="'notatoken' is not in the vocabulary"):
        reference.convert_tokens_to_ids(["notatoken"])
    with pytest.raises(KeyError, match="id 40000 is outside the vocabulary"):
        reference.convert_ids_to_tokens([40000])


# --- HuggingFace's slow tokenizer on hard text ---

def _without_private_or_unassigned(texts):
    # HF deletes every C* character; the original keeps Co/Cn (pinned below).
    return [t for t in texts if not any(unicodedata.category(c) in ("Co", "Cn") for c in t)]


@pytest.mark.parametrize("lower", [True, False])
def test_adversarial_text_matches_huggingface(lower, reference, cased_reference,
                                              hf_slow, hf_slow_cased):
    ours, theirs = (reference, hf_slow) if lower else (cased_reference, hf_slow_cased)
    for text in _without_private_or_unassigned(ADVERSARIAL):
        if not lower and unicodedata.normalize("NFC", text) != text:
            continue  # HF composes first (pinned below)
        assert ours.tokenize(text) == hf_pieces(theirs, text), repr(text)


def test_pinned_huggingface_deviations(reference, cased_reference, hf_slow, hf_slow_cased):
    # The original deletes Cc/Cf only; HF deletes private use (and unassigned).
    assert reference.tokenize("a\ue000b") == ["[UNK]"]
    assert hf_pieces(hf_slow, "a\ue000b") == ["ab"]
    # HF composes (NFC) before splitting; the original keeps the marks apart.
    assert cased_reference.basic_tokenizer.tokenize("e\u0301") == ["e\u0301"]
    assert hf_slow_cased.basic_tokenizer.tokenize("e\u0301") == ["\u00e9"]
    # HF's default word limit is 100 characters, the original's 200.
    import transformers
    default_hf = transformers.BertTokenizer(vocab_file=reference.vocab_file)
    assert hf_pieces(default_hf, "ab" * 60) == ["[UNK]"]
    assert reference.tokenize("ab" * 60) == hf_pieces(hf_slow, "ab" * 60) != ["[UNK]"]
