"""Tokenization: the original's WordPiece tokenizer, in Python and in the TF graph.

Python reference (exact original behaviour; used by the data tools):
`FullTokenizer`, `BasicTokenizer`, `WordpieceTokenizer`, `load_vocab`,
`validate_case_matches_checkpoint`.

In-graph Keras layers (same ids; for tf.data pipelines and serving):
`BertTokenizerLayer`, `BertPacker`, `BertPreprocessor`.
"""

from bert_tf.tokenization.basic_tokenizer import BasicTokenizer
from bert_tf.tokenization.full_tokenizer import FullTokenizer
from bert_tf.tokenization.graph_basic_tokenizer import GraphBasicTokenizer
from bert_tf.tokenization.packer import BertPacker
from bert_tf.tokenization.preprocessor import BertPreprocessor
from bert_tf.tokenization.tokenizer_layer import BertTokenizerLayer
from bert_tf.tokenization.vocab import VocabError
from bert_tf.tokenization.vocab import load_vocab
from bert_tf.tokenization.vocab import validate_case_matches_checkpoint
from bert_tf.tokenization.vocab import vocabulary_list
from bert_tf.tokenization.wordpiece import WordpieceTokenizer

__all__ = [
    "BasicTokenizer",
    "BertPacker",
    "BertPreprocessor",
    "BertTokenizerLayer",
    "FullTokenizer",
    "GraphBasicTokenizer",
    "VocabError",
    "WordpieceTokenizer",
    "load_vocab",
    "validate_case_matches_checkpoint",
    "vocabulary_list",
]
