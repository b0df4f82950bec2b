"""`TextServingModule`: what every export shares: strings in, tokenized in the graph.

A served model is a `tf.Module` whose signatures take raw `tf.string`
tensors of any batch size. The original's tokenization and packing run
inside the graph (`BertPreprocessor`), so a client needs neither our code nor
a vocabulary file. Each kind of export (encoder, masked LM, classifier)
subclasses this module and says what it answers for a batch of packed
inputs; this base gives it three signatures:

* `serving_default`: `text` [batch] -> the answers;
* `pairs`: `text_a`, `text_b` [batch] -> the answers for sentence pairs;
* `metadata`: no inputs -> what the export was made with (`kind`,
  `do_lower_case`, `max_seq_length`, `bert_config` as JSON, plus the kind's
  own entries such as `labels`), so that no caller passes flags.

A kind with other inputs (span QA: question and context) replaces the
first two (`answer_signatures`) and its tokenization (`text_preprocessor`).

The vocabulary is kept as a SavedModel asset (`assets/vocab.txt`), tracked
as `vocab_file`.
"""

import os

import tensorflow as tf

from bert_tf.tokenization import BertPreprocessor, vocabulary_list

VOCAB_ASSET_NAME = "vocab.txt"


class TextServingModule(tf.Module):
    """Base of the exports: tokenizes strings in the graph, then `answer`s.

    Args:
        config: the model's `BertConfig` (recorded in the metadata).
        vocabulary: the vocabulary file, or the list of its tokens.
        asset_dir: an existing folder where `vocab.txt` is written for the
            SavedModel to copy into its assets (it must exist until saved).
        max_seq_length: length of the packed inputs; longer texts are
            truncated as the original truncates them.
        do_lower_case: lower-case and strip accents (uncased models).
        keep_special_tokens: `[MASK]` etc. written in the text stay whole.

    Example: a kind that answers the packed ids (a pair is truncated to
    `max_seq_length` = 5 one token at a time from the longer side; a batch
    is padded to its longest text).

    >>> import tempfile
    >>> from bert_tf.config import BertConfig
    >>> class TokenIds(TextServingModule):
    ...     kind = "token_ids"
    ...     def answer(self, inputs):
    ...         return {"input_ids": inputs["input_ids"]}
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello"]
    >>> module = TokenIds(BertConfig.named("tiny", vocab_size=5), vocab, tempfile.mkdtemp(),
    ...                   max_seq_length=5)
    >>> ids = module.serve_pairs(tf.constant(["Hello", ""]), tf.constant(["hello there", ""]))
    >>> ids["input_ids"].numpy().tolist()
    [[2, 4, 3, 4, 3], [2, 3, 3, 0, 0]]
    >>> module.serve_texts(tf.constant(["hello", ""]))["input_ids"].numpy().tolist()
    [[2, 4, 3], [2, 3, 0]]
    """

    kind = None

    def __init__(self, config, vocabulary, asset_dir, max_seq_length=128,
                 do_lower_case=True, keep_special_tokens=False):
        super().__init__(name=f"bert_{self.kind}")
        if max_seq_length > config.max_position_embeddings:
            raise ValueError(f"max_seq_length={max_seq_length} exceeds the model's "
                             f"max_position_embeddings {config.max_position_embeddings}")
        self.tokens = vocabulary_list(vocabulary)
        if len(self.tokens) > config.vocab_size:
            raise ValueError(f"the vocabulary has {len(self.tokens)} tokens, more than the "
                             f"model's vocab_size {config.vocab_size}: is it the right one?")
        vocab_path = os.path.join(asset_dir, VOCAB_ASSET_NAME)
        with open(vocab_path, "w", encoding="utf-8") as f:
            f.write("".join(token + "\n" for token in self.tokens))
        self.vocab_file = tf.saved_model.Asset(vocab_path)
        self.config = config
        self.max_seq_length = int(max_seq_length)
        self.do_lower_case = bool(do_lower_case)
        self.preprocessor = self.text_preprocessor(keep_special_tokens)

    def text_preprocessor(self, keep_special_tokens):
        """What turns strings into model inputs in the graph (a `BertPreprocessor`)."""
        return BertPreprocessor(
            self.tokens, seq_length=self.max_seq_length, do_lower_case=self.do_lower_case,
            keep_special_tokens=keep_special_tokens)

    def answer(self, inputs):
        """The outputs for packed `inputs` (dict of int32 [batch, seq]); a dict of tensors."""
        raise NotImplementedError

    def metadata_values(self):
        """`{name: Python value}` recorded in the `metadata` signature."""
        return {"kind": self.kind, "do_lower_case": self.do_lower_case,
                "max_seq_length": self.max_seq_length,
                "bert_config": self.config.to_json_string()}

    def packed(self, texts):
        """Packs texts (or a pair of them) and drops the padding no text of the batch reaches.

        Padding is never attended to, so no answer changes; the model just
        runs on T = the batch's longest packed text (at most `max_seq_length`).
        """
        inputs = self.preprocessor(texts)
        # At least 2 ([CLS] [SEP]); an empty batch has no longest text.
        length = tf.maximum(tf.reduce_max(tf.reduce_sum(inputs["input_mask"], axis=1)), 2)
        return {name: value[:, :length] for name, value in inputs.items()}

    def serve_texts(self, text):
        """The answers for single texts (tf.string [batch])."""
        return self.answer(self.packed(text))

    def serve_pairs(self, text_a, text_b):
        """The answers for text pairs (`[CLS] A [SEP] B [SEP]`)."""
        tf.debugging.assert_equal(tf.size(text_a), tf.size(text_b),
                                  message="text_a and text_b must have the same length")
        return self.answer(self.packed((text_a, text_b)))

    def answer_signatures(self):
        """{name: concrete function} of the signatures that answer text.

        By default `serving_default` (single texts) and `pairs`.
        """
        return {
            "serving_default": tf.function(self.serve_texts).get_concrete_function(
                string_spec("text")),
            "pairs": tf.function(self.serve_pairs).get_concrete_function(
                string_spec("text_a"), string_spec("text_b")),
        }

    def signatures(self):
        """The concrete functions to save: the `answer_signatures` and `metadata`.

        They are not attributes of the module, so each is traced and saved
        once.
        """
        values = self.metadata_values()

        def metadata():
            return {name: tf.constant(value) for name, value in values.items()}

        return {**self.answer_signatures(),
                "metadata": tf.function(metadata).get_concrete_function()}


def string_spec(name):
    """The spec of a signature input: strings of any batch size."""
    return tf.TensorSpec([None], tf.string, name=name)
