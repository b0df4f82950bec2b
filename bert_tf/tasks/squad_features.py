"""SQuAD examples -> model windows, exactly as the original release builds them.

Each context word is split into WordPieces; a training answer's word span is
mapped to pieces and tightened to the pieces of the answer text
(`improve_answer_span`). The question is cut to `max_query_length` pieces and
the context is cut into windows of `max_seq_length - len(question) - 3` pieces
that start every `doc_stride` pieces, laid out as `[CLS] question [SEP]
window [SEP]`. A piece seen by several windows belongs to the one where it has
the most context (`max_context_windows`); answers are only read from there.
Training labels are 0/0 ([CLS]) for impossible questions and for windows that
do not hold the whole answer.

The pieces and ids of a paragraph are computed once and shared by its
questions, and each distinct word is tokenized once per call: the features
are the same as word-by-word tokenization gives, only faster.
"""

import dataclasses

from absl import logging
import numpy as np

from bert_tf.tasks.max_context import max_context_windows

FIRST_UNIQUE_ID = 1000000000


@dataclasses.dataclass(frozen=True)
class SquadFeature:
    """One window of one example.

    Attributes:
        unique_id: running id from 1000000000, as in the original.
        example_index: index of the example in the list given.
        doc_span_index: window number within the example.
        input_ids: int32 ids of `[CLS] question [SEP] window [SEP]`, unpadded.
        query_tokens: the question's pieces (after truncation).
        doc_start: first context piece of the window.
        doc_length: number of context pieces in the window.
        doc_pieces: all context pieces of the example (shared by its windows).
        piece_to_word: context piece -> word index (shared by its windows).
        max_context: bool per window piece: this window is its best one.
        start_position, end_position: training labels (token positions).
        is_impossible: the example has no answer.
    """

    unique_id: int
    example_index: int
    doc_span_index: int
    input_ids: np.ndarray
    query_tokens: list
    doc_start: int
    doc_length: int
    doc_pieces: list
    piece_to_word: list
    max_context: np.ndarray
    start_position: int = None
    end_position: int = None
    is_impossible: bool = False

    @property
    def query_length(self):
        return len(self.query_tokens)

    @property
    def doc_offset(self):
        """Token position of the window's first context piece."""
        return self.query_length + 2

    @property
    def tokens(self):
        """The window's tokens, `[CLS]` ... `[SEP]` (without padding)."""
        return (["[CLS]"] + self.query_tokens + ["[SEP]"]
                + self.doc_pieces[self.doc_start:self.doc_start + self.doc_length] + ["[SEP]"])

    @property
    def token_to_orig_map(self):
        """{token position: word index} for the window's context tokens."""
        return {self.doc_offset + i: self.piece_to_word[self.doc_start + i]
                for i in range(self.doc_length)}

    @property
    def token_is_max_context(self):
        """{token position: bool} for the window's context tokens."""
        return {self.doc_offset + i: bool(flag) for i, flag in enumerate(self.max_context)}


def improve_answer_span(doc_pieces, start, end, tokenizer, answer_text):
    """Returns the tightest (start, end) inside [start, end] spelling the answer's pieces.

    An annotation "1895" in the word "(1895-1943)." covers all its pieces
    `( 1895 - 1943 ) .`; the span shrinks to the piece `1895`. If no sub-span
    matches (the answer is part of a piece), the span is kept.

    >>> class Pieces:
    ...     def tokenize(self, text):
    ...         return text.replace("(", " ( ").replace("-", " - ").split()
    >>> improve_answer_span(["(", "1895", "-", "1943", ")"], 0, 4, Pieces(), "1895")
    (1, 1)
    """
    answer_pieces = " ".join(tokenizer.tokenize(answer_text))
    for new_start in range(start, end + 1):
        for new_end in range(end, new_start - 1, -1):
            if " ".join(doc_pieces[new_start:new_end + 1]) == answer_pieces:
                return new_start, new_end
    return start, end


def doc_windows(num_pieces, max_pieces, doc_stride):
    """The (start, length) windows over `num_pieces` context pieces.

    >>> doc_windows(10, 4, 3)
    [(0, 4), (3, 4), (6, 4)]
    >>> doc_windows(3, 4, 3)
    [(0, 3)]
    """
    windows = []
    start = 0
    while start < num_pieces:
        length = min(num_pieces - start, max_pieces)
        windows.append((start, length))
        if start + length == num_pieces:
            break
        start += min(length, doc_stride)
    return windows


class _ParagraphPieces:
    """Pieces, ids and piece -> word map of one paragraph, with a per-word cache."""

    def __init__(self, tokenizer):
        self._tokenizer = tokenizer
        self._word_pieces = {}
        self._words = None
        self._result = None

    def of(self, words):
        if words is not self._words:
            pieces, piece_to_word, word_to_piece = [], [], []
            for word_index, word in enumerate(words):
                word_to_piece.append(len(pieces))
                word_pieces = self._word_pieces.get(word)
                if word_pieces is None:
                    word_pieces = self._tokenizer.tokenize(word)
                    self._word_pieces[word] = word_pieces
                pieces.extend(word_pieces)
                piece_to_word.extend([word_index] * len(word_pieces))
            ids = self._tokenizer.convert_tokens_to_ids(pieces)
            self._words, self._result = words, (pieces, ids, piece_to_word, word_to_piece)
        return self._result


def convert_examples_to_features(examples, tokenizer, max_seq_length=384, doc_stride=128,
                                 max_query_length=64, is_training=False):
    """Returns the `SquadFeature` windows of `examples`, in order.

    Args:
        examples: `SquadExample`s (training ones carry word-level answers).
        tokenizer: a `FullTokenizer`.
        max_seq_length: tokens per window including `[CLS]` and two `[SEP]`.
        doc_stride: pieces between window starts.
        max_query_length: question pieces kept.
        is_training: compute start/end labels.

    Raises:
        ValueError: sizes that leave no room for the context or never advance.
    """
    if max_seq_length <= max_query_length + 3:
        raise ValueError(f"max_seq_length ({max_seq_length}) must be greater than "
                         f"max_query_length ({max_query_length}) + 3")
    if doc_stride < 1:
        raise ValueError(f"doc_stride must be positive, got {doc_stride}")
    cls_id, sep_id = tokenizer.convert_tokens_to_ids(["[CLS]", "[SEP]"])
    paragraphs = _ParagraphPieces(tokenizer)
    features = []
    split_examples = cut_questions = 0
    for example_index, example in enumerate(examples):
        query_tokens = tokenizer.tokenize(example.question_text)
        cut_questions += len(query_tokens) > max_query_length
        query_tokens = query_tokens[:max_query_length]
        query_ids = [cls_id] + tokenizer.convert_tokens_to_ids(query_tokens) + [sep_id]
        pieces, piece_ids, piece_to_word, word_to_piece = paragraphs.of(example.doc_tokens)
        answer = _answer_pieces(example, pieces, word_to_piece, tokenizer) \
            if is_training else None
        windows = doc_windows(len(pieces), max_seq_length - len(query_tokens) - 3, doc_stride)
        if not windows:
            logging.warning("question %s: the context has no tokens, no window to read",
                            example.qas_id)
        split_examples += len(windows) > 1
        best_window = max_context_windows(windows, len(pieces))
        for window_index, (start, length) in enumerate(windows):
            labels = _window_labels(answer, start, length, len(query_tokens) + 2) \
                if is_training else (None, None)
            features.append(SquadFeature(
                unique_id=FIRST_UNIQUE_ID + len(features), example_index=example_index,
                doc_span_index=window_index,
                input_ids=np.array(query_ids + piece_ids[start:start + length] + [sep_id],
                                   np.int32),
                query_tokens=query_tokens, doc_start=start, doc_length=length,
                doc_pieces=pieces, piece_to_word=piece_to_word,
                max_context=np.array(best_window[start:start + length]) == window_index,
                start_position=labels[0], end_position=labels[1],
                is_impossible=example.is_impossible))
    logging.info("%d examples -> %d windows (%d contexts longer than one window, "
                 "max_seq_length %d, doc_stride %d; %d questions cut to max_query_length %d "
                 "pieces)", len(examples), len(features), split_examples, max_seq_length,
                 doc_stride, cut_questions, max_query_length)
    return features


def _answer_pieces(example, pieces, word_to_piece, tokenizer):
    """The training answer's (start, end) piece span, or None if impossible."""
    if example.is_impossible:
        return None
    start = word_to_piece[example.start_position]
    if example.end_position < len(example.doc_tokens) - 1:
        end = word_to_piece[example.end_position + 1] - 1
    else:
        end = len(pieces) - 1
    return improve_answer_span(pieces, start, end, tokenizer, example.orig_answer_text)


def _window_labels(answer, start, length, doc_offset):
    """(start, end) token labels of one window; (0, 0) when the answer is not all in it."""
    if answer is None or not (answer[0] >= start and answer[1] <= start + length - 1):
        return 0, 0
    return answer[0] - start + doc_offset, answer[1] - start + doc_offset


def feature_columns(features, max_seq_length, is_training):
    """Padded int32 model inputs (and labels when training) of `features`, one row each."""
    count = len(features)
    input_ids = np.zeros((count, max_seq_length), np.int32)
    input_mask = np.zeros((count, max_seq_length), np.int32)
    segment_ids = np.zeros((count, max_seq_length), np.int32)
    for row, feature in enumerate(features):
        length = len(feature.input_ids)
        input_ids[row, :length] = feature.input_ids
        input_mask[row, :length] = 1
        segment_ids[row, feature.doc_offset:length] = 1
    columns = {"unique_ids": np.array([f.unique_id for f in features], np.int64),
               "input_ids": input_ids, "input_mask": input_mask, "segment_ids": segment_ids}
    if is_training:
        columns["start_positions"] = np.array([f.start_position for f in features], np.int32)
        columns["end_positions"] = np.array([f.end_position for f in features], np.int32)
    return columns
