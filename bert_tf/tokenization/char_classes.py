"""Character classes and text normalisation of the original BERT tokenizer.

These predicates are the single definition of what the original release calls
whitespace, a control character, punctuation and a CJK ideograph. The pure
Python reference tokenizer calls them character by character; the in-graph
tokenizer evaluates them once per code point to build its lookup tables
(`unicode_tables.py`), so both tokenizers agree by construction.

All of them follow Python's `unicodedata`, as the original does.

Example:

>>> is_punctuation("$"), is_punctuation("\u3002"), is_whitespace("\u00a0")
(True, True, True)
>>> strip_accents("r\u00e9sum\u00e9")
'resume'
"""

import unicodedata

# Code point ranges of the "CJK Unified Ideographs" blocks (and compatibility
# ideographs) that the original surrounds with spaces. Other CJK scripts
# (Hiragana, Katakana, Hangul) are deliberately absent, as in the original.
CJK_RANGES = (
    (0x4E00, 0x9FFF),
    (0x3400, 0x4DBF),
    (0x20000, 0x2A6DF),
    (0x2A700, 0x2B73F),
    (0x2B740, 0x2B81F),
    (0x2B820, 0x2CEAF),
    (0xF900, 0xFAFF),
    (0x2F800, 0x2FA1F),
)

# Lowest code point of the ranges, to answer "not CJK" fast for most text.
_CJK_MIN = min(low for low, _ in CJK_RANGES)

# ASCII symbols the original treats as punctuation although Unicode files some
# of them (`$`, `+`, `^`, `` ` ``, ...) under symbols rather than P*.
_ASCII_PUNCTUATION = frozenset(
    chr(cp) for low, high in ((33, 47), (58, 64), (91, 96), (123, 126))
    for cp in range(low, high + 1))


def is_whitespace(char):
    """True for space, tab, newline, carriage return and Unicode Zs."""
    if char in (" ", "\t", "\n", "\r"):
        return True
    return unicodedata.category(char) == "Zs"


def is_control(char):
    """True for Cc and Cf characters, except tab, newline and CR (whitespace)."""
    if char in ("\t", "\n", "\r"):
        return False
    return unicodedata.category(char) in ("Cc", "Cf")


def is_punctuation(char):
    """True for the ASCII symbol ranges and every Unicode P* character."""
    return char in _ASCII_PUNCTUATION or unicodedata.category(char).startswith("P")


def is_cjk(char):
    """True for a CJK ideograph, which the original makes a word of its own."""
    cp = ord(char)
    return cp >= _CJK_MIN and any(low <= cp <= high for low, high in CJK_RANGES)


def is_dropped(char):
    """True for the characters the original deletes: NUL, U+FFFD, controls."""
    return char in ("\x00", "\ufffd") or is_control(char)


def strip_accents(text):
    """NFD-decomposes `text` and drops the non-spacing marks (category Mn)."""
    decomposed = unicodedata.normalize("NFD", text)
    return "".join(c for c in decomposed if unicodedata.category(c) != "Mn")


def lower_and_strip_accents(text):
    """The original's case folding: `str.lower()`, then `strip_accents`.

    `str.lower()` is context-free except for capital sigma, which becomes
    final sigma at the end of a word; callers must lower whole words.
    """
    return strip_accents(text.lower())
