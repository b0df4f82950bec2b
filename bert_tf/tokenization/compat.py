"""The module-level functions of the original release's `tokenization` module.

Scripts written against the original do `import tokenization` and call
these functions; `import bert_tf.tokenization as tokenization` gives them
the same names with the same behaviour:

* `load_vocab(vocab_file)`: an `OrderedDict` token -> id (id = line number,
  surrounding whitespace stripped); no special token is demanded, as in the
  original. Unlike the original, a missing or empty file or a repeated token
  (whose ids would be ambiguous) is an error naming the file.
* `convert_tokens_to_ids(vocab, tokens)`, `convert_ids_to_tokens(inv_vocab, ids)`:
  plain lookups; an unknown item raises `KeyError`, as in the original.
* `convert_to_unicode(text)`, `printable_text(text)`: `str` as is, `bytes`
  decoded as UTF-8 dropping invalid bytes, anything else a `ValueError`.
* `whitespace_tokenize(text)`: strip, then split on whitespace.

Example:

>>> whitespace_tokenize("  hello \\t world\\n")
['hello', 'world']
>>> convert_to_unicode(b"caf\\xc3\\xa9 \\xff")
'café '
>>> convert_tokens_to_ids({"[UNK]": 0, "hi": 1}, ["hi", "hi"])
[1, 1]
"""

import collections

from bert_tf.tokenization import basic_tokenizer
from bert_tf.tokenization import vocab as vocab_files


def load_vocab(vocab_file):
    """Reads a vocabulary file into an `OrderedDict` token -> id, in id order.

    Raises:
        VocabError: naming the file, if it is missing, empty or repeats a token.
    """
    return collections.OrderedDict(vocab_files.load_vocab(vocab_file, require=()))


def convert_to_unicode(text):
    """`text` as `str`: bytes decoded as UTF-8, invalid bytes dropped.

    Raises:
        ValueError: for anything but `str` or `bytes` (the original's error).
    """
    if not isinstance(text, (str, bytes)):
        raise ValueError(f"Unsupported string type: {type(text)}")
    return basic_tokenizer.convert_to_unicode(text)


def printable_text(text):
    """`text` as a `str` fit for printing or logging (on Python 3: `convert_to_unicode`)."""
    return convert_to_unicode(text)


def convert_by_vocab(vocab, items):
    """Looks up each item in `vocab` (tokens -> ids or ids -> tokens)."""
    return [vocab[item] for item in items]


def convert_tokens_to_ids(vocab, tokens):
    """The ids of `tokens` in `vocab` (token -> id); `KeyError` for an unknown token."""
    return convert_by_vocab(vocab, tokens)


def convert_ids_to_tokens(inv_vocab, ids):
    """The tokens of `ids` in `inv_vocab` (id -> token); `KeyError` for an unknown id."""
    return convert_by_vocab(inv_vocab, ids)


def whitespace_tokenize(text):
    """Strips `text` and splits it on runs of whitespace."""
    return text.split()
