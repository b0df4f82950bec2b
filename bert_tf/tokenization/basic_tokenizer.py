"""`BasicTokenizer`: the original's text cleaning and word splitting, in Python.

This is the reference that the in-graph tokenizer is tested against, so it
follows the original release step for step, in the original's order:

1. delete NUL, U+FFFD and control characters; map whitespace to a space;
2. put spaces around CJK ideographs;
3. split on whitespace;
4. per word, if lower-casing: `str.lower()` then NFD and drop Mn (accents);
5. make every punctuation character a word of its own.
"""

from bert_tf.tokenization import char_classes


def convert_to_unicode(text):
    """Returns `text` as `str`; bytes are decoded as UTF-8, dropping bad bytes.

    Raises:
        TypeError: if `text` is neither `str` nor `bytes`.
    """
    if isinstance(text, str):
        return text
    if isinstance(text, bytes):
        return text.decode("utf-8", "ignore")
    raise TypeError(f"expected str or bytes text, got {type(text).__name__}")


def clean_text(text):
    """Deletes NUL, U+FFFD and control characters; maps whitespace to " "."""
    out = []
    for char in text:
        if char_classes.is_dropped(char):
            continue
        out.append(" " if char_classes.is_whitespace(char) else char)
    return "".join(out)


def space_cjk(text):
    """Surrounds every CJK ideograph with spaces."""
    return "".join(f" {c} " if char_classes.is_cjk(c) else c for c in text)


def split_on_punctuation(word):
    """Splits `word` so that each punctuation character stands alone."""
    pieces = []
    current = []
    for char in word:
        if char_classes.is_punctuation(char):
            if current:
                pieces.append("".join(current))
                current = []
            pieces.append(char)
        else:
            current.append(char)
    if current:
        pieces.append("".join(current))
    return pieces


class BasicTokenizer:
    """Cleans text and splits it into words and punctuation, like the original.

    Args:
        do_lower_case: lower-case and strip accents (for uncased models).

    Example:

    >>> BasicTokenizer().tokenize(" \\tHeLLo!how  \\n Are yoU?  ")
    ['hello', '!', 'how', 'are', 'you', '?']
    >>> BasicTokenizer(do_lower_case=False).tokenize("Caf\u00e9\u535a")
    ['Caf\u00e9', '\u535a']
    """

    def __init__(self, do_lower_case=True):
        self.do_lower_case = do_lower_case

    def tokenize(self, text):
        """Returns the words and punctuation marks of `text` (str or bytes)."""
        text = space_cjk(clean_text(convert_to_unicode(text)))
        pieces = []
        for word in text.split():
            if self.do_lower_case:
                word = char_classes.lower_and_strip_accents(word)
            pieces.extend(split_on_punctuation(word))
        # The original re-splits on whitespace here, in case case folding
        # produced any; it never does with today's Unicode data, but the step
        # costs nothing and keeps the reference literal.
        return " ".join(pieces).split()
