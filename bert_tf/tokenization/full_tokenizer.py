"""`FullTokenizer`: the original end-to-end tokenizer (basic + WordPiece) in Python.

It is the reference the in-graph `BertTokenizerLayer` must match id for id,
and the tokenizer of the pretraining-data tool and of the runners' Python
feature code (SQuAD and NER need per-word pieces, which only Python gives).
"""

from bert_tf.tokenization import special_tokens
from bert_tf.tokenization.basic_tokenizer import BasicTokenizer
from bert_tf.tokenization.basic_tokenizer import convert_to_unicode
from bert_tf.tokenization.vocab import load_vocab
from bert_tf.tokenization.wordpiece import WordpieceTokenizer


class FullTokenizer:
    """Text -> WordPiece tokens and ids, exactly like the original release.

    Args:
        vocab_file: WordPiece vocabulary, one token per line.
        do_lower_case: lower-case and strip accents (uncased models).
        keep_special_tokens: keep `[CLS]`, `[SEP]`, `[MASK]`, `[PAD]`,
            `[UNK]` and `[unusedN]` written in the text as single tokens
            (the original splits them, e.g. `[MASK]` -> `[`, `mask`, `]`).

    Attributes:
        vocab: dict token -> id.
        inv_vocab: dict id -> token.

    Example:

    >>> import os, tempfile
    >>> vocab_file = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> tokens = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##want", "##ed", ",", "runn", "##ing"]
    >>> with open(vocab_file, "w") as f:
    ...     _ = f.write("\\n".join(tokens))
    >>> tokenizer = FullTokenizer(vocab_file)
    >>> tokenizer.tokenize("UNwant\\u00e9d,running")
    ['un', '##want', '##ed', ',', 'runn', '##ing']
    >>> tokenizer.convert_tokens_to_ids(["[CLS]", "un"])
    [2, 4]
    """

    def __init__(self, vocab_file, do_lower_case=True, keep_special_tokens=False):
        self.vocab_file = vocab_file
        self.vocab = load_vocab(vocab_file)
        self.inv_vocab = {index: token for token, index in self.vocab.items()}
        self.basic_tokenizer = BasicTokenizer(do_lower_case=do_lower_case)
        self.wordpiece_tokenizer = WordpieceTokenizer(vocab=self.vocab)
        self.keep_special_tokens = keep_special_tokens
        self._special_pattern = (
            special_tokens.special_tokens_pattern(
                special_tokens.find_special_tokens(self.vocab))
            if keep_special_tokens else None)

    def tokenize(self, text):
        """Returns the WordPiece tokens of `text` (str or bytes)."""
        text = convert_to_unicode(text)
        if self._special_pattern is None:
            return self._tokenize_plain(text)
        tokens = []
        for piece, is_special in special_tokens.split_special_tokens(
                text, self._special_pattern):
            tokens.extend([piece] if is_special else self._tokenize_plain(piece))
        return tokens

    def _tokenize_plain(self, text):
        return [piece
                for word in self.basic_tokenizer.tokenize(text)
                for piece in self.wordpiece_tokenizer.tokenize(word)]

    def convert_tokens_to_ids(self, tokens):
        """Maps tokens to ids; raises KeyError naming an unknown token."""
        try:
            return [self.vocab[token] for token in tokens]
        except KeyError as error:
            raise KeyError(
                f"token {error.args[0]!r} is not in the vocabulary {self.vocab_file}"
            ) from None

    def convert_ids_to_tokens(self, ids):
        """Maps ids to tokens; raises KeyError naming an out-of-range id."""
        try:
            return [self.inv_vocab[int(index)] for index in ids]
        except KeyError as error:
            raise KeyError(
                f"id {error.args[0]} is outside the vocabulary {self.vocab_file} "
                f"({len(self.vocab)} tokens)") from None
