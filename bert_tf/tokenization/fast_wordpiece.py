"""tensorflow-text's `FastWordpieceTokenizer`, set up as the original's WordPiece.

Building one compiles the vocabulary into a model (a flatbuffer of about
1.7 MB for 30,522 tokens): 0.09-0.11 s, then 0.03 s more where
tensorflow-text turns those bytes into a constant through a Python list.
Every `BertTokenizerLayer` holds two and every `OffsetsTokenizer` one, and a
run builds several of them over the same vocabulary (its input pipelines, an
export's signatures), so each model is built once per process and passed in
as a tensor.

Example: two tokenizers of the same vocabulary share one model.

>>> vocab = ["[UNK]", "they", "##re", "the", "great", "##est"]
>>> first, second = fast_wordpiece(vocab), fast_wordpiece(list(vocab))
>>> _model.cache_info().hits >= 1
True
>>> first.tokenize([["they", "greatest"]]).to_list()
[[[1], [4, 5]]]
"""

import functools

import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text
from tensorflow_text.core.pybinds import pywrap_fast_wordpiece_tokenizer_model_builder

from bert_tf.tokenization.wordpiece import MAX_INPUT_CHARS_PER_WORD

UNK_TOKEN = "[UNK]"
SUFFIX_INDICATOR = "##"


def fast_wordpiece_on_ascii_text(vocabulary):
    """tensorflow-text's WordPiece on folded ASCII text, split into words by itself."""
    return _tokenizer(vocabulary, MAX_INPUT_CHARS_PER_WORD, no_pretokenization=False)


def fast_wordpiece(vocabulary):
    """tensorflow-text's WordPiece on already split words, set up as the original's.

    Words over `MAX_INPUT_CHARS_PER_WORD` characters must be replaced by
    `UNK_TOKEN` before: the original's rule counts characters, not bytes.
    """
    # Our own 200-character rule decides; 4 bytes per character at most.
    return _tokenizer(vocabulary, 4 * MAX_INPUT_CHARS_PER_WORD, no_pretokenization=True)


def _tokenizer(vocabulary, max_bytes_per_word, no_pretokenization):
    model = _model(tuple(vocabulary), max_bytes_per_word, no_pretokenization)
    return tf_text.FastWordpieceTokenizer(
        model_buffer=tf.constant(np.frombuffer(model, np.uint8)), token_out_type=tf.int32)


@functools.lru_cache(maxsize=8)
def _model(vocabulary, max_bytes_per_word, no_pretokenization):
    """The model tensorflow-text's constructor would build from these arguments."""
    return pywrap_fast_wordpiece_tokenizer_model_builder.build_fast_wordpiece_model(
        list(vocabulary), max_bytes_per_word, SUFFIX_INDICATOR, UNK_TOKEN,
        no_pretokenization, False)
