"""`BertPreprocessor`: raw text (or text pairs) -> packed BERT inputs, in the graph.

`BertTokenizerLayer` followed by `BertPacker`: the whole of the original's
input pipeline for classification-style tasks as one Keras layer, which a
SavedModel serving signature can hold so that clients send plain strings.
"""

import keras
import tensorflow as tf

from bert_tf.tokenization.packer import BertPacker
from bert_tf.tokenization.tokenizer_layer import BertTokenizerLayer


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPreprocessor(keras.layers.Layer):
    """Tokenizes and packs strings into `input_ids`, `input_mask`, `segment_ids`.

    Args:
        vocabulary: path of a vocabulary file, or the list of its tokens.
        seq_length: length of the packed inputs (`max_seq_length`).
        do_lower_case: lower-case and strip accents (uncased models).
        keep_special_tokens: keep `[MASK]` etc. written in the text whole.
        **kwargs: passed to `keras.layers.Layer`.

    Call arguments:
        inputs: strings [batch] (a tensor or a list of Python strings, or
            a scalar string), or a tuple of two of them for sentence pairs.

    Returns:
        dict of int32 tensors [batch, seq_length] (or [seq_length]).

    Example:

    >>> import os, tempfile
    >>> vocab_file = os.path.join(tempfile.mkdtemp(), "vocab.txt")
    >>> with open(vocab_file, "w") as f:
    ...     _ = f.write("\\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world", "!"]))
    >>> preprocessor = BertPreprocessor(vocab_file, seq_length=8)
    >>> preprocessor(["Hello world!"])["input_ids"].numpy().tolist()
    [[2, 4, 5, 6, 3, 0, 0, 0]]
    """

    def __init__(self, vocabulary, seq_length=128, do_lower_case=True,
                 keep_special_tokens=False, **kwargs):
        super().__init__(**kwargs)
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self.tokenizer = BertTokenizerLayer(
            vocabulary, do_lower_case=do_lower_case,
            keep_special_tokens=keep_special_tokens, name="tokenizer")
        self.packer = BertPacker(
            seq_length, cls_id=self.tokenizer.token_id("[CLS]"),
            sep_id=self.tokenizer.token_id("[SEP]"), name="packer")
        self.seq_length = self.packer.seq_length
        self.built = True

    def call(self, inputs):
        texts = _segments(inputs)
        if len(texts) == 1:
            return self.packer(self.tokenizer(texts[0]))
        if len(texts) != 2:
            raise ValueError(f"{self.name} takes one text or a pair, got {len(texts)}")
        # Both texts of every pair in one tokenizer call: one tokenizer in
        # the graph, not two, to trace, optimize and run.
        first, second = (tf.convert_to_tensor(text, tf.string) for text in texts)
        if first.shape.rank == 0:
            ids = self.tokenizer(tf.stack([first, second]))
            return self.packer((ids[0], ids[1]))
        ids = self.tokenizer(tf.concat([first, second], axis=0))
        count = tf.shape(first)[0]
        return self.packer((ids[:count], ids[count:]))

    def compute_output_spec(self, inputs):
        shape = tuple(_segments(inputs)[0].shape) + (self.seq_length,)
        return {key: keras.KerasTensor(shape, dtype="int32")
                for key in ("input_ids", "input_mask", "segment_ids")}

    def get_config(self):
        config = super().get_config()
        config.update(vocabulary=self.tokenizer.vocabulary,
                      seq_length=self.seq_length,
                      do_lower_case=self.tokenizer.do_lower_case,
                      keep_special_tokens=self.tokenizer.keep_special_tokens)
        return config


def _segments(inputs):
    """The texts of `inputs`: a tuple, or a list of non-strings, is a pair."""
    if isinstance(inputs, tuple) or (
            isinstance(inputs, list) and inputs
            and not isinstance(inputs[0], (str, bytes))):
        return list(inputs)
    return [inputs]
