"""Word-tagged sentences as BERT inputs, and the model's outputs back as word tags.

Each word becomes its WordPiece tokens; its label sits on its first piece
and the other pieces carry label weight 0, so losses and metrics see one
prediction per word. A word that tokenizes to nothing (only characters the
tokenizer deletes) becomes one `[UNK]`, so every word gets a tag.

A sentence with more than `max_seq_length - 2` pieces becomes several
windows of whole words (never cut inside a word), each `[CLS] ... [SEP]`.
Window starts advance by `doc_stride` pieces, rounded up to the next word
start, as the SQuAD runner's document windows do. A word that appears in
several windows is scored (weight 1) only in the window where it has the
most context (`max_context`, the SQuAD runner's rule); the inverse,
`word_logits`, reads each word's logits from that same window.
"""

import dataclasses

import numpy as np

from bert_tf.tasks.max_context import max_context_windows


class WindowError(ValueError):
    """A word has more pieces than a window holds; the message names the sentence and word.

    (CoNLL-2003's train set has a word of 61 dashes, 61 pieces: it needs a
    `max_seq_length` of 63 or more.)
    """


@dataclasses.dataclass(frozen=True)
class TaggingWindow:
    """One model input: a run of whole words of one sentence.

    Attributes:
        sentence_index: index of the sentence in the list given.
        word_start: first word of the window; `word_end`: one past its last.
        input_ids: `[CLS]`, the words' piece ids, `[SEP]` (unpadded).
        label_ids: per token, the word's label id on its first piece, else 0.
        label_weights: per token, 1.0 on the first piece of each word this
            window scores (its max-context window), else 0.0.
        first_pieces: per word of the window, the token position of its first piece.
    """

    sentence_index: int
    word_start: int
    word_end: int
    input_ids: tuple
    label_ids: tuple
    label_weights: tuple
    first_pieces: tuple


def word_piece_ids(tokenizer, words):
    """Per word, the ids of its WordPiece tokens (`[UNK]` for a word that yields none)."""
    unknown = tokenizer.vocab["[UNK]"]
    return [tokenizer.convert_tokens_to_ids(tokenizer.tokenize(word)) or [unknown]
            for word in words]


def window_spans(piece_counts, max_pieces, doc_stride):
    """`(word_start, word_end)` of each window over words with `piece_counts` pieces.

    >>> window_spans([1, 2, 1, 3, 1], max_pieces=4, doc_stride=2)
    [(0, 3), (2, 4), (4, 5)]
    """
    offsets = np.concatenate([[0], np.cumsum(piece_counts)]).astype(int)
    spans, start, words = [], 0, len(piece_counts)
    while True:
        end = int(np.searchsorted(offsets, offsets[start] + max_pieces, side="right")) - 1
        end = min(end, words)
        if end == start:
            raise WindowError(f"word {start} has {piece_counts[start]} word pieces, more "
                              f"than the {max_pieces} a window holds")
        spans.append((start, end))
        if end == words:
            return spans
        target = offsets[start] + min(doc_stride, offsets[end] - offsets[start])
        start = int(np.searchsorted(offsets, target, side="left"))


def best_windows(piece_counts, spans):
    """Per word, the index of the window (in `spans`) where its first piece has the most context.

    >>> best_windows([1, 2, 1, 3, 1], [(0, 3), (2, 4), (4, 5)])
    [0, 0, 0, 1, 2]
    """
    offsets = np.concatenate([[0], np.cumsum(piece_counts)]).astype(int)
    piece_windows = [(offsets[start], offsets[end] - offsets[start]) for start, end in spans]
    best_for_piece = max_context_windows(piece_windows, int(offsets[-1]))
    return [best_for_piece[offset] for offset in offsets[:-1]]


def sentence_windows(sentence_index, piece_ids, label_ids, max_seq_length, doc_stride,
                     cls_id, sep_id):
    """The `TaggingWindow`s of one sentence given its words' piece ids and label ids."""
    counts = [len(pieces) for pieces in piece_ids]
    spans = window_spans(counts, max_seq_length - 2, doc_stride)
    best = best_windows(counts, spans)
    windows = []
    for index, (start, end) in enumerate(spans):
        tokens, labels, weights, first_pieces = [cls_id], [0], [0.0], []
        for word in range(start, end):
            first_pieces.append(len(tokens))
            tokens.extend(piece_ids[word])
            labels.extend([label_ids[word]] + [0] * (counts[word] - 1))
            weights.extend([float(best[word] == index)] + [0.0] * (counts[word] - 1))
        windows.append(TaggingWindow(
            sentence_index=sentence_index, word_start=start, word_end=end,
            input_ids=tuple(tokens + [sep_id]), label_ids=tuple(labels + [0]),
            label_weights=tuple(weights + [0.0]), first_pieces=tuple(first_pieces)))
    return windows


def tagging_windows(sentences, tokenizer, labels, max_seq_length, doc_stride):
    """All windows of `sentences` (objects with `.words` and `.tags`), in order.

    Args:
        sentences: e.g. `conll_data.TaggedSentence`s.
        tokenizer: a `FullTokenizer` (its vocab must hold `[CLS]`, `[SEP]`, `[UNK]`).
        labels: the tag set; a tag's label id is its index.
        max_seq_length: tokens per window including `[CLS]` and `[SEP]`.
        doc_stride: pieces between window starts (rounded up to a word start).

    Example (windows of at most 4 pieces; "cccc" is c ##cc ##c; the third
    word is scored in the first window, where it ties with the second):

    >>> import os, tempfile
    >>> from bert_tf.tokenization import FullTokenizer
    >>> from bert_tf.tasks.conll_data import TaggedSentence
    >>> vocab = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> with open(vocab, "w") as f:
    ...     _ = f.write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "a", "b", "##b",
    ...                            "c", "##c", "##cc"]))
    >>> sentence = TaggedSentence("s", ("a", "bb", "a", "cccc", "b"),
    ...                           ("B-PER", "I-PER", "O", "B-LOC", "O"), 1)
    >>> tokenizer = FullTokenizer(vocab, do_lower_case=False)
    >>> windows = tagging_windows([sentence], tokenizer, ("O", "B-PER", "I-PER", "B-LOC"),
    ...                           max_seq_length=6, doc_stride=2)
    >>> for window in windows:
    ...     print(window.word_start, window.word_end, window.input_ids, window.label_weights)
    0 3 (2, 4, 5, 6, 4, 3) (0.0, 1.0, 1.0, 0.0, 1.0, 0.0)
    2 4 (2, 4, 7, 9, 8, 3) (0.0, 0.0, 1.0, 0.0, 0.0, 0.0)
    4 5 (2, 5, 3) (0.0, 1.0, 0.0)
    """
    label_ids = {label: index for index, label in enumerate(labels)}
    cls_id, sep_id = tokenizer.vocab["[CLS]"], tokenizer.vocab["[SEP]"]
    windows = []
    for index, sentence in enumerate(sentences):
        pieces = word_piece_ids(tokenizer, sentence.words)
        try:
            windows.extend(sentence_windows(index, pieces,
                                            [label_ids[tag] for tag in sentence.tags],
                                            max_seq_length, doc_stride, cls_id, sep_id))
        except WindowError as error:
            raise WindowError(f"sentence {sentence.guid} (line {sentence.line}): {error}; "
                              f"raise max_seq_length above {max_seq_length}") from None
    return windows


def window_columns(windows, max_seq_length):
    """Zero-padded `[windows, max_seq_length]` numpy columns: the model's inputs and labels."""
    shape = (len(windows), max_seq_length)
    columns = {"input_ids": np.zeros(shape, np.int32), "input_mask": np.zeros(shape, np.int32),
               "segment_ids": np.zeros(shape, np.int32), "label_ids": np.zeros(shape, np.int32),
               "label_weights": np.zeros(shape, np.float32)}
    for row, window in enumerate(windows):
        length = len(window.input_ids)
        columns["input_ids"][row, :length] = window.input_ids
        columns["input_mask"][row, :length] = 1
        columns["label_ids"][row, :length] = window.label_ids
        columns["label_weights"][row, :length] = window.label_weights
    return columns


def word_logits(windows, logits, sentence_lengths):
    """Per sentence, `[words, labels]` logits, each word's from its scoring window.

    Args:
        windows: the `TaggingWindow`s the model saw, in order.
        logits: `[windows, max_seq_length, labels]` model outputs, in window order.
        sentence_lengths: word count of each sentence.
    """
    logits = np.asarray(logits)
    if len(logits) != len(windows):
        raise ValueError(f"{len(logits)} rows of logits for {len(windows)} windows")
    result = [np.zeros((length, logits.shape[-1]), logits.dtype) for length in sentence_lengths]
    for window, window_logits in zip(windows, logits):
        for word, position in enumerate(window.first_pieces, start=window.word_start):
            if window.label_weights[position]:
                result[window.sentence_index][word] = window_logits[position]
    return result


def predicted_tags(windows, logits, sentence_lengths, labels):
    """Per sentence, one predicted tag per word: the argmax of `word_logits`."""
    return [tuple(labels[i] for i in sentence.argmax(-1))
            for sentence in word_logits(windows, logits, sentence_lengths)]
