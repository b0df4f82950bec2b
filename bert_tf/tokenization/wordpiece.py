"""`WordpieceTokenizer`: the original's greedy longest-match-first WordPiece."""

# Words longer than this (in characters) become a single unknown token.
MAX_INPUT_CHARS_PER_WORD = 200


class WordpieceTokenizer:
    """Splits words into the longest vocabulary pieces, left to right.

    Pieces after the first carry the `##` continuation prefix. A word with a
    part that no vocabulary piece matches, or longer than
    `max_input_chars_per_word` characters, becomes one `unk_token`.

    Args:
        vocab: mapping (or set) of the vocabulary's tokens.
        unk_token: the token for words that cannot be split.
        max_input_chars_per_word: longer words become `unk_token`.

    Example:

    >>> vocab = {"un", "##aff", "##able", "[UNK]"}
    >>> WordpieceTokenizer(vocab).tokenize("unaffable unxyz")
    ['un', '##aff', '##able', '[UNK]']
    """

    def __init__(self, vocab, unk_token="[UNK]",
                 max_input_chars_per_word=MAX_INPUT_CHARS_PER_WORD):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word

    def tokenize(self, text):
        """Returns the word pieces of the whitespace-separated words of `text`."""
        pieces = []
        for word in text.split():
            pieces.extend(self._split_word(word))
        return pieces

    def _split_word(self, word):
        if len(word) > self.max_input_chars_per_word:
            return [self.unk_token]
        pieces = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = word[start:end] if start == 0 else "##" + word[start:end]
                if piece in self.vocab:
                    break
                end -= 1
            if end == start:
                return [self.unk_token]
            pieces.append(piece)
            start = end
        return pieces
