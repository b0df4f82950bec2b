"""`NerServing`: text -> named entities, with their types and character offsets.

The served form of a `run_ner.py --mode=fine_tune` model (encoder + a dense
layer on every token). For each text, in the graph:

1. the text is tokenized with each piece's character span and word
   (`OffsetsTokenizer`); the words are the basic tokenizer's (split on
   whitespace and around punctuation and CJK characters, as CoNLL's words
   are pre-split);
2. the words whose pieces all fit in `max_seq_length - 2` are packed as
   `[CLS] pieces [SEP]` (later words are dropped and `truncated` says so);
3. each word's tag is the argmax of the logits on its first piece;
4. tags are read as entities with the conlleval rules: an entity starts at
   `B-X`, at `I-X` after `O` and at any tag whose type differs from the
   previous one's, and ends before `B-`, `O` or a type change;
5. an entity's offsets run from its first word's first character to its
   last word's last character, in the text as sent.

For a batch of B texts and E = the most entities of any of them, the
signature returns `entity_type`, `entity_text` string [B, E] ("" padding),
`entity_start`, `entity_end` int32 [B, E] (Unicode character offsets, end
exclusive: `text[start:end] == entity_text` in Python; -1 padding),
`num_entities` int32 [B] and `truncated` bool [B].
"""

import tensorflow as tf

from bert_tf.serving.sources import find_encoder
from bert_tf.serving.signatures import output_labels, signature, string_spec
from bert_tf.serving.text_module import TextServingModule
from bert_tf.tokenization.offsets_tokenizer import OffsetsTokenizer

_OUTSIDE, _BEGIN, _INSIDE = 0, 1, 2


def tag_parts(labels):
    """(prefixes, types) of BIO tags: prefix 0 for O, 1 for B-, 2 for I-; type "" for O.

    >>> tag_parts(["O", "B-PER", "I-PER"])
    ([0, 1, 2], ['', 'PER', 'PER'])
    >>> tag_parts(["O", "PER"])
    Traceback (most recent call last):
    ...
    ValueError: label 'PER' is not O, B-<type> or I-<type>
    """
    prefixes, types = [], []
    for label in labels:
        prefix, dash, kind = label.partition("-")
        if label == "O":
            prefixes.append(_OUTSIDE)
        elif prefix in ("B", "I") and dash and kind:
            prefixes.append(_BEGIN if prefix == "B" else _INSIDE)
        else:
            raise ValueError(f"label {label!r} is not O, B-<type> or I-<type>")
        types.append(kind)
    return prefixes, types


class NerServing(TextServingModule):
    """Serves a token classifier (`build_token_classifier`) as text -> entities.

    Args:
        token_classifier: a built Keras model, packed inputs -> logits
            [B, T, len(labels)].
        vocabulary, asset_dir, max_seq_length, do_lower_case: as
            `TextServingModule`.
        labels: the BIO tag names, in logit order (`O`, `B-X`, `I-X`).

    Example:

    >>> import tempfile
    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling.classifier import build_token_classifier
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "paris", "is", "in", "france"]
    >>> model = build_token_classifier(BertConfig.named("tiny", vocab_size=len(vocab)), 3)
    >>> module = NerServing(model, vocab, tempfile.mkdtemp(), max_seq_length=8,
    ...                     labels=["O", "B-LOC", "I-LOC"])
    >>> text = "Paris is in  FRANCE."
    >>> found = module.serve_texts(tf.constant([text]))
    >>> all(text[s:e] == t.decode() for s, e, t in zip(
    ...     found["entity_start"][0].numpy(), found["entity_end"][0].numpy(),
    ...     found["entity_text"][0].numpy()) if s >= 0)
    True
    >>> found["truncated"].numpy().tolist()
    [False]
    """

    kind = "ner"

    def __init__(self, token_classifier, vocabulary, asset_dir, max_seq_length=128,
                 do_lower_case=True, labels=(), jit_compile=False):
        super().__init__(find_encoder(token_classifier).config, vocabulary, asset_dir,
                         max_seq_length, do_lower_case, jit_compile=jit_compile)
        self.labels = output_labels(token_classifier, labels, "token classifier")
        prefixes, types = tag_parts(self.labels)
        self.tag_prefix = tf.constant(prefixes, tf.int32)
        self.tag_type = tf.constant(types)
        self.serve_model(token_classifier)

    def text_preprocessor(self, keep_special_tokens):
        return OffsetsTokenizer(self.tokens, self.do_lower_case)

    def metadata_values(self):
        return {**super().metadata_values(), "labels": self.labels}

    def answer_signatures(self):
        return {"serving_default": signature(self.serve_texts, string_spec("text"))}

    def serve_texts(self, text):
        """The entities of each text (tf.string [B])."""
        batch_size = tf.size(text, tf.int64)
        # Offsets count the characters of valid UTF-8: invalid bytes go first.
        text = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="ignore")
        pieces = self.preprocessor(text)
        kept = self._whole_words_that_fit(pieces)
        word_row, word_first, word_position, word_last = _kept_words(pieces, kept)
        tag = self._word_tags(tf.ragged.boolean_mask(pieces.ids, kept), word_row, word_position)
        first_word, last_word = self._entities(word_row, tag)
        entity_row = tf.gather(word_row, first_word)
        start = tf.gather(pieces.starts.flat_values, tf.gather(word_first, first_word))
        end = tf.gather(pieces.ends.flat_values, tf.gather(word_last, last_word))

        def padded(values, fill):
            return tf.RaggedTensor.from_value_rowids(values, entity_row, batch_size).to_tensor(
                fill)

        entity_text = tf.strings.substr(
            tf.gather(text, entity_row), start, end - start, unit="UTF8_CHAR")
        batch = tf.cast(batch_size, tf.int32)
        return {"entity_type": padded(tf.gather(self.tag_type, tf.gather(tag, first_word)), ""),
                "entity_text": padded(entity_text, ""),
                "entity_start": padded(start, -1), "entity_end": padded(end, -1),
                "num_entities": tf.math.bincount(tf.cast(entity_row, tf.int32),
                                                 minlength=batch, maxlength=batch),
                "truncated": tf.reduce_any(~kept, axis=1)}

    def _whole_words_that_fit(self, pieces):
        """bool ragged, per piece: all pieces of its word are within `max_seq_length` - 2."""
        room = self.max_seq_length - 2
        # The word of the first piece past the room (int64 max if none) is
        # cut, and every word after it.
        cut_from = pieces.words.to_tensor(tf.int64.max, shape=[None, room + 1])[:, room]
        return pieces.words < cut_from[:, None]

    def _word_tags(self, ids, word_row, word_position):
        """The tag id (argmax of its first piece's logits) of each word, in flat word order."""
        packed = self.pack([ids])

        def run():
            logits = self.inference(packed)
            at = tf.stack([word_row, tf.cast(word_position, tf.int64) + 1], axis=1)
            return tf.argmax(tf.gather_nd(tf.cast(logits, tf.float32), at), axis=-1,
                             output_type=tf.int32)

        # A batch of empty texts (or none) has no words, and nothing to run.
        return tf.cond(tf.size(word_row) > 0, run, lambda: tf.zeros([0], tf.int32))

    def _entities(self, word_row, tag):
        """(first word, last word) of each entity, flat word indices, in order."""
        prefix = tf.gather(self.tag_prefix, tag)
        kind = tf.gather(self.tag_type, tag)
        opens_row = tf.concat([[True], word_row[1:] != word_row[:-1]], 0)
        previous_prefix = tf.concat([[_OUTSIDE], prefix[:-1]], 0)
        previous_kind = tf.concat([[""], kind[:-1]], 0)
        previous_outside = opens_row | tf.equal(previous_prefix, _OUTSIDE)
        inside = tf.not_equal(prefix, _OUTSIDE)
        starts = inside & (tf.equal(prefix, _BEGIN) | previous_outside
                           | tf.not_equal(kind, previous_kind))
        # An entity runs from its start over the inside words that follow it.
        entity = tf.cumsum(tf.cast(starts, tf.int64)) - 1
        words = tf.range(tf.size(tag, tf.int64))
        first_word = tf.boolean_mask(words, starts)
        last_word = tf.math.unsorted_segment_max(
            tf.boolean_mask(words, inside), tf.boolean_mask(entity, inside),
            tf.size(first_word, tf.int64))
        return first_word, last_word


def _kept_words(pieces, kept):
    """The kept words, in flat order: (row, first piece, its position in the row, last piece).

    Pieces are flat indices into the batch's pieces; a word is a run of
    pieces with the same word index.
    """
    position = tf.ragged.range(pieces.ids.row_lengths())
    previous_word = tf.concat([[-1], pieces.words.flat_values[:-1]], 0)
    first_piece = ((position.flat_values == 0)
                   | (pieces.words.flat_values != previous_word)) & kept.flat_values
    word_of_piece = tf.cumsum(tf.cast(first_piece, tf.int64)) - 1
    flat_index = tf.range(tf.size(first_piece, tf.int64))
    last_piece = tf.math.unsorted_segment_max(
        tf.boolean_mask(flat_index, kept.flat_values),
        tf.boolean_mask(word_of_piece, kept.flat_values),
        tf.reduce_sum(tf.cast(first_piece, tf.int64)))
    piece_row = tf.cast(position.value_rowids(), tf.int64)
    return (tf.boolean_mask(piece_row, first_piece), tf.boolean_mask(flat_index, first_piece),
            tf.boolean_mask(position.flat_values, first_piece), last_piece)
