"""`TextServingModule`: what every export shares: strings in, tokenized in the graph.

A served model is a `tf.Module` whose signatures take raw `tf.string`
tensors of any batch size. The original's tokenization and packing run
inside the graph (`BertPreprocessor`), so a client needs neither our code nor
a vocabulary file. Each kind of export (encoder, masked LM, classifier,
span QA, NER, multiple choice) subclasses this module and says what it
answers for a batch of packed inputs; this base gives it three signatures:

* `serving_default`: `text` [batch] -> the answers;
* `pairs`: `text_a`, `text_b` [batch] -> the answers for sentence pairs;
* `metadata`: no inputs -> what the export was made with (`kind`,
  `do_lower_case`, `max_seq_length`, `bert_config` as JSON, plus the kind's
  own entries such as `labels`), so that no caller passes flags.

A kind with other inputs (span QA: question and context; multiple choice:
a context and its endings) or without pairs (NER) replaces the first two
(`answer_signatures`), and span QA and NER their tokenization too
(`text_preprocessor`). A model with one token type (`type_vocab_size: 1`)
has no embedding for a pair's second text (segment id 1): its export has no
`pairs` signature, and the kinds that always pair two texts refuse it
(`check_config`, `config_uses.require_segment_pairs`). Every signature checks
the shapes of its inputs when called (`signature`).

The vocabulary is kept as a SavedModel asset (`assets/vocab.txt`), tracked
as `vocab_file`. Of the model, the export keeps its variables and one traced
forward pass that every signature calls (`serve_model`), not the Keras
objects. Tracing the model once, leaving the Keras object graph out and
keeping tf.Module from walking the vocabulary's tokens took an export of a
tiny encoder from about 14 to 9-10 seconds, and its loading from 3.0 to
2.1-2.5 (docs/PERFORMANCE.md, "Export time").

With `jit_compile=True` every model call is XLA-compiled (`inference`), and the
model's sequence length is the batch's longest input rounded up to a
multiple of `LENGTH_BUCKET` (`padded_length`), so that a served model
compiles one program per batch size and bucket, once, not one per length.
On a 2-core CPU it answers a batch-1 call in about 60% of the plain
export's time and a batch-32 call in about 85% (docs/PERFORMANCE.md,
"Serving"); the price is a compilation of about a second the first time
each shape is seen, and TF Serving runs such a model only with
`--xla_cpu_compilation_enabled`.
"""

import os

import tensorflow as tf
from absl import logging

from bert_tf.file_set import cannot_write
from bert_tf.config_uses import require_segment_pairs
from bert_tf.serving.model_inference import ModelInference
from bert_tf.serving.signatures import signature, string_spec
from bert_tf.tokenization import BertPreprocessor, vocabulary_list
from bert_tf.tokenization.packer import pack_segments

VOCAB_ASSET_NAME = "vocab.txt"
LENGTH_BUCKET = 16


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
        jit_compile: XLA-compile the model, on lengths rounded up to buckets.

    Example: a kind that answers the packed ids (a pair is truncated to
    `max_seq_length` = 5 one token at a time from the longer side, a pair
    whose second text has no tokens is packed as the first alone; a batch is
    padded to its longest text).

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
    [[2, 4, 3, 4, 3], [2, 3, 0, 0, 0]]
    >>> module.serve_texts(tf.constant(["hello", ""]))["input_ids"].numpy().tolist()
    [[2, 4, 3], [2, 3, 0]]
    """

    kind = None
    # What a kind that answers pairs only pairs (span QA: "a question and its context"),
    # named where a model with one token type is refused; None: it answers single texts.
    always_pairs = None
    # tf.Module walks its attributes each time `variables` (and the like) is
    # read, which saving does a dozen times: not the vocabulary's tokens
    # (kept as a tuple, which tf.Module does not wrap token by token either).
    _TF_MODULE_IGNORED_PROPERTIES = tf.Module._TF_MODULE_IGNORED_PROPERTIES | {"tokens"}

    def __init__(self, config, vocabulary, asset_dir, max_seq_length=128,
                 do_lower_case=True, keep_special_tokens=False, jit_compile=False):
        super().__init__(name=f"bert_{self.kind}")
        self.check_config(config)
        if max_seq_length > config.max_position_embeddings:
            raise ValueError(f"max_seq_length={max_seq_length} exceeds the model's "
                             f"max_position_embeddings {config.max_position_embeddings}")
        self.tokens = tuple(vocabulary_list(vocabulary))
        if len(self.tokens) > config.vocab_size:
            named = f"{vocabulary}: " if isinstance(vocabulary, (str, os.PathLike)) else ""
            raise ValueError(f"{named}the vocabulary has {len(self.tokens)} tokens, more than "
                             f"the model's vocab_size {config.vocab_size}: is it the right "
                             "one?")
        vocab_path = os.path.join(asset_dir, VOCAB_ASSET_NAME)
        try:  # `asset_dir` is a temporary folder (in /tmp): it may be the one full
            with open(vocab_path, "w", encoding="utf-8") as f:
                f.write("".join(token + "\n" for token in self.tokens))
        except OSError as error:
            raise cannot_write(vocab_path, error) from None
        self.vocab_file = tf.saved_model.Asset(vocab_path)
        self.config = config
        self.max_seq_length = int(max_seq_length)
        self.do_lower_case = bool(do_lower_case)
        self.jit_compile = bool(jit_compile)
        self.preprocessor = self.text_preprocessor(keep_special_tokens)
        missing = [token for token in ("[CLS]", "[SEP]") if token not in self.tokens]
        if missing:
            raise ValueError(f"the vocabulary has no {' or '.join(missing)} token")
        self.cls_id, self.sep_id = self.tokens.index("[CLS]"), self.tokens.index("[SEP]")

    @classmethod
    def check_config(cls, config, source="the model's config"):
        """Refuses a model with one token type for a kind that always pairs two texts.

        Raises:
            ConfigError: naming `source` (`config_uses.require_segment_pairs`).
        """
        if cls.always_pairs:
            require_segment_pairs(config, source, f"a {cls.kind} export ({cls.always_pairs})")

    def text_preprocessor(self, keep_special_tokens):
        """What turns strings into model inputs in the graph (a `BertPreprocessor`)."""
        return BertPreprocessor(
            self.tokens, seq_length=self.max_seq_length, do_lower_case=self.do_lower_case,
            keep_special_tokens=keep_special_tokens)

    def answer(self, inputs):
        """The outputs for packed `inputs` (dict of int32 [batch, seq]); a dict of tensors."""
        raise NotImplementedError

    def serve_model(self, model):
        """Sets `inference`, the served model's forward pass (a subclass's `__init__` calls it).

        The module tracks the model's variables only, so a SavedModel keeps
        them without the Keras objects around them.
        """
        self.model_variables = list(model.variables)
        self.inference = ModelInference(model, self.jit_compile)

    def padded_length(self, length):
        """The model's sequence length for a batch whose longest input is `length`.

        `length` itself, or with `jit_compile` the next multiple of
        `LENGTH_BUCKET` (at most `max_seq_length`): padding is never
        attended to, so the answers stay the same.
        """
        if not self.jit_compile:
            return length
        rounded = (length + LENGTH_BUCKET - 1) // LENGTH_BUCKET * LENGTH_BUCKET
        return tf.minimum(rounded, tf.cast(self.max_seq_length, length.dtype))

    def pack(self, segments):
        """`pack_segments` of whole ragged id segments, as wide as `padded_length` says.

        For windows built to fit: every packed row must fit `max_seq_length`.
        """
        segments = [tf.cast(segment, tf.int32) for segment in segments]
        lengths = [tf.cast(segment.row_lengths(), tf.int32) for segment in segments]
        longest = tf.reduce_max(tf.concat([tf.add_n(lengths) + 1 + len(segments), [0]], 0))
        return pack_segments(segments, lengths, self.padded_length(longest),
                             self.cls_id, self.sep_id)

    def metadata_values(self):
        """`{name: Python value}` recorded in the `metadata` signature."""
        return {"kind": self.kind, "do_lower_case": self.do_lower_case,
                "max_seq_length": self.max_seq_length, "jit_compile": self.jit_compile,
                "bert_config": self.config.to_json_string()}

    def packed(self, texts):
        """Packs texts (or a pair of them) and drops the padding no text of the batch reaches.

        Padding is never attended to, so no answer changes; the model just
        runs on T = the batch's longest packed text (at most `max_seq_length`).
        """
        inputs = self.preprocessor(texts)
        # At least 2 ([CLS] [SEP]); an empty batch has no longest text.
        length = self.padded_length(
            tf.maximum(tf.reduce_max(tf.reduce_sum(inputs["input_mask"], axis=1)), 2))
        return {name: value[:, :length] for name, value in inputs.items()}

    def serve_texts(self, text):
        """The answers for single texts (tf.string [batch])."""
        return self.answer(self.packed(text))

    def serve_pairs(self, text_a, text_b):
        """The answers for text pairs (`[CLS] A [SEP] B [SEP]`)."""
        require_segment_pairs(self.config, "the model's config", "text_a and text_b")
        tf.debugging.assert_equal(tf.size(text_a), tf.size(text_b),
                                  message="text_a and text_b must have the same length")
        return self.answer(self.packed((text_a, text_b)))

    def answer_signatures(self):
        """{name: concrete function} of the signatures that answer text.

        By default `serving_default` (single texts) and `pairs`, which a
        model with one token type (`type_vocab_size: 1`) does not get: it
        has no embedding for the second text's segment id 1.
        """
        signatures = {"serving_default": signature(self.serve_texts, string_spec("text"))}
        if self.config.type_vocab_size > 1:
            signatures["pairs"] = signature(self.serve_pairs, string_spec("text_a"),
                                            string_spec("text_b"))
        else:
            logging.warning("the %s export has no `pairs` signature: its model has "
                            "type_vocab_size=%d, no token-type embedding for a pair's second "
                            "text (segment id 1)", self.kind, self.config.type_vocab_size)
        return signatures

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
