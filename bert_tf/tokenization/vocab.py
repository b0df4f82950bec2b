"""Vocabulary files and the casing guard of the original release.

A vocabulary file holds one WordPiece token per line; a token's id is its line
number (from 0). `load_vocab` reads such a file as the original does
(surrounding whitespace stripped, local paths or any `tf.io.gfile` URL), but
drops a UTF-8 byte-order mark, which the original kept as part of the first
token (ids are the same; only the token reads as, say, `[PAD]` again), and
checks what the original left to chance: the file exists, is not empty, has
no duplicate tokens (ids would be ambiguous) and holds the special tokens the
caller needs.

`validate_case_matches_checkpoint` is the original's guard against
fine-tuning a cased checkpoint with lower-cased text or the reverse, judged
from the released checkpoints' folder names.
"""

import os
import re

import tensorflow as tf
from absl import logging

from bert_tf.errors import UsageError
from bert_tf.text_files import NotUtf8Error, utf8_lines

# Special tokens every BERT input needs; pretraining also needs [MASK], [PAD].
DEFAULT_REQUIRED_TOKENS = ("[CLS]", "[SEP]", "[UNK]")
PRETRAINING_REQUIRED_TOKENS = DEFAULT_REQUIRED_TOKENS + ("[MASK]", "[PAD]")

# Folder names of the released checkpoints (including the compact models
# and whole-word-masking variants), by the casing they were trained with.
_LOWER_CASED_NAME = re.compile(
    r"^(?:(?:wwm_)?uncased|multilingual|chinese)_L-\d+_H-\d+_A-\d+$")
_CASED_NAME = re.compile(r"^(?:wwm_|multi_)?cased_L-\d+_H-\d+_A-\d+$")


class VocabError(ValueError):
    """A vocabulary file that is missing, empty or unusable; names the file."""


def load_vocab(path, require=DEFAULT_REQUIRED_TOKENS):
    """Reads a WordPiece vocabulary file.

    Args:
        path: the vocabulary file (local path or `tf.io.gfile` URL).
        require: tokens that must be present.

    Returns:
        dict token -> id, in id order.

    Raises:
        VocabError: if the file is missing or a folder, empty, not UTF-8 (naming the
            line), repeats a token, or lacks a token in `require`.

    Example:

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhello\\n")
    >>> load_vocab(f.name)["hello"]
    4
    """
    path = os.fspath(path)
    if not tf.io.gfile.exists(path):
        raise VocabError(f"vocabulary file {path} does not exist")
    if tf.io.gfile.isdir(path):
        raise VocabError(f"vocabulary file {path} is a directory; name the vocab.txt in it")
    try:
        tokens = [line.strip() for line in utf8_lines(path)]
    except NotUtf8Error as error:
        raise VocabError(str(error)) from None
    return _index_tokens(tokens, f"vocabulary file {path}",
                         lambda index: f"{path}:{index + 1}", require)


def vocabulary_list(vocabulary, require=DEFAULT_REQUIRED_TOKENS):
    """A vocabulary given as a file path or as a list of tokens, checked, as a list.

    This is how the Keras layers take their vocabulary (and keep it in their
    config), with the same checks as `load_vocab`.

    Raises:
        VocabError: as `load_vocab`, or for entries that are not strings.
    """
    if isinstance(vocabulary, (str, os.PathLike)):
        return list(load_vocab(vocabulary, require))
    tokens = list(vocabulary)
    for index, token in enumerate(tokens):
        if not isinstance(token, str):
            raise VocabError(f"vocabulary entry {index} is {token!r}, not a string")
    _index_tokens(tokens, "vocabulary list", lambda index: f"vocabulary entry {index}",
                  require)
    return tokens


def _index_tokens(tokens, source, position, require):
    """dict token -> index of `tokens`, refusing what would make ids ambiguous."""
    if not tokens:
        raise VocabError(f"{source} is empty")
    vocab = {}
    for index, token in enumerate(tokens):
        if token in vocab:
            raise VocabError(
                f"{position(index)}: token {token!r} repeats "
                f"{position(vocab[token])}; ids would be ambiguous")
        vocab[token] = index
    missing = [token for token in require if token not in vocab]
    if missing:
        raise VocabError(f"{source} lacks the special tokens {missing}")
    return vocab


def checkpoint_model_name(init_checkpoint):
    """The folder name that identifies a checkpoint, e.g. `uncased_L-12_H-768_A-12`.

    Accepts `<folder>/bert_model.ckpt` (the original's form) or the folder.
    """
    path = os.fspath(init_checkpoint).rstrip("/")
    match = re.match(r"^.*?([A-Za-z0-9_-]+)/bert_model\.ckpt", path)
    return match.group(1) if match else os.path.basename(path)


def validate_case_matches_checkpoint(do_lower_case, init_checkpoint):
    """Refuses a `do_lower_case` that contradicts a released checkpoint's name.

    Checkpoints whose folder is not a released name are not checked.

    Raises:
        ValueError: naming `--do_lower_case` and `--init_checkpoint`.

    Example:

    >>> validate_case_matches_checkpoint(True, "uncased_L-12_H-768_A-12/bert_model.ckpt")
    >>> validate_case_matches_checkpoint(True, "my_model/bert_model.ckpt")
    """
    if not init_checkpoint:
        return
    name = checkpoint_model_name(init_checkpoint)
    if _LOWER_CASED_NAME.match(name) and not do_lower_case:
        wanted, casing = True, "lower-cased (uncased)"
    elif _CASED_NAME.match(name) and do_lower_case:
        wanted, casing = False, "cased"
    else:
        return
    raise ValueError(
        f"--do_lower_case={not wanted} does not match "
        f"--init_checkpoint={init_checkpoint}: `{name}` is a {casing} model, "
        f"so pass --do_lower_case={wanted} to tokenize text the way it was "
        "pretrained.")


def vocab_is_lower_cased(path):
    """True when no token of the vocabulary at `path` holds an upper-case letter.

    A cased vocabulary holds thousands of capitalised tokens; a lower-cased
    (uncased) one none outside its bracketed special tokens (`[CLS]`). Runners
    whose text is cased (CoNLL NER) use this as the default `do_lower_case`.

    >>> import tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
    ...     _ = f.write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nthe\\nThe\\n")
    >>> vocab_is_lower_cased(f.name)
    False
    """
    return vocabulary_casing(load_vocab(path)) != "cased"


def vocabulary_casing(tokens):
    """"cased" (a token holds a capital), "uncased" (letters, no capitals) or None (no
    letters that have a case: a Chinese vocabulary, say); the bracketed special tokens
    (`[CLS]`, `[unused0]`) are left out.

    >>> vocabulary_casing(["[CLS]", "the", "##s"]), vocabulary_casing(["The"])
    ('uncased', 'cased')
    >>> print(vocabulary_casing(["[unused0]", "\u4e2d", "1"]))
    None
    """
    words = [token for token in tokens if not (token.startswith("[") and token.endswith("]"))]
    if any(word != word.lower() for word in words):
        return "cased"
    return "uncased" if any(word != word.upper() for word in words) else None


def check_casing(vocab, vocab_file, do_lower_case):
    """Refuses `--do_lower_case=False` with an uncased vocabulary, warns of the reverse.

    An uncased vocabulary (letters, none of them capitals) has no token for
    a capitalised word: read unlowered, most names become `[UNK]`. A cased
    one read lower-cased still finds its tokens but never its capitals.
    Every tool that reads text with a vocabulary checks it (the runners,
    `extract_features.py`, `create_pretraining_data.py`).

    >>> check_casing(["[CLS]", "the"], "vocab.txt", do_lower_case=True)
    >>> check_casing(["[CLS]", "the"], "vocab.txt", do_lower_case=False)
    Traceback (most recent call last):
    bert_tf.errors.UsageError: --do_lower_case=False, but --vocab_file=vocab.txt has no capital letters (an uncased model's vocabulary): capitalised words would become [UNK]; pass --do_lower_case=True
    """
    casing = vocabulary_casing(vocab)
    if not do_lower_case and casing == "uncased":
        raise UsageError(f"--do_lower_case=False, but --vocab_file={vocab_file} has no "
                         "capital letters (an uncased model's vocabulary): capitalised words "
                         "would become [UNK]; pass --do_lower_case=True")
    if do_lower_case and casing == "cased":
        logging.warning("--do_lower_case=True, but --vocab_file=%s holds capitalised tokens "
                        "(a cased model's vocabulary): the model will never see a capital; "
                        "pass --do_lower_case=False if it was trained cased", vocab_file)
