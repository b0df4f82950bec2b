"""Special tokens that `keep_special_tokens=True` keeps whole in raw text.

The original tokenizes a `[MASK]` typed into the input as `[ mask ]`. Asked
to, both of our tokenizers instead keep `[CLS]`, `[SEP]`, `[MASK]`, `[PAD]`,
`[UNK]` and the `[unusedN]` slots of the vocabulary as single tokens, exactly
as written (case-sensitive, not lower-cased), wherever they occur. Only tokens
present in the vocabulary count. The same regular expression serves Python's
`re` and TensorFlow's RE2.
"""

import re

_NAMED = ("[CLS]", "[SEP]", "[MASK]", "[PAD]", "[UNK]")
_UNUSED = re.compile(r"^\[unused\d+\]$")


def find_special_tokens(vocab):
    """The vocabulary's special tokens (in vocabulary order)."""
    return [t for t in vocab if t in _NAMED or _UNUSED.match(t)]


def special_tokens_pattern(tokens):
    """A regular expression matching any of `tokens` (RE2 and Python `re`)."""
    if not tokens:
        raise ValueError("keep_special_tokens=True needs special tokens in the vocabulary")
    return "|".join(re.escape(t) for t in sorted(tokens, key=len, reverse=True))


def split_special_tokens(text, pattern):
    """Splits `text` into (piece, is_special) pairs, dropping empty pieces."""
    parts = re.split(f"({pattern})", text)
    # re.split with one group alternates plain text (even) and matches (odd).
    return [(part, i % 2 == 1) for i, part in enumerate(parts) if part]
