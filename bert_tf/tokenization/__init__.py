"""Tokenization: the original's WordPiece tokenizer, in Python and in the TF graph.

Python reference (exact original behaviour; used by the data tools):
`FullTokenizer`, `BasicTokenizer`, `WordpieceTokenizer`,
`validate_case_matches_checkpoint`, and the original `tokenization`
module's functions (`load_vocab` returning an `OrderedDict`,
`convert_to_unicode`, `printable_text`, `convert_tokens_to_ids`,
`convert_ids_to_tokens`, `whitespace_tokenize`), so scripts written for the
original run with `import bert_tf.tokenization as tokenization`.

In-graph Keras layers (same ids; for tf.data pipelines and serving):
`BertTokenizerLayer`, `BertPacker`, `BertPreprocessor`.
"""

from bert_tf.tokenization.basic_tokenizer import BasicTokenizer
from bert_tf.tokenization.compat import convert_by_vocab
from bert_tf.tokenization.compat import convert_ids_to_tokens
from bert_tf.tokenization.compat import convert_to_unicode
from bert_tf.tokenization.compat import convert_tokens_to_ids
from bert_tf.tokenization.compat import load_vocab
from bert_tf.tokenization.compat import printable_text
from bert_tf.tokenization.compat import whitespace_tokenize
from bert_tf.tokenization.full_tokenizer import FullTokenizer
from bert_tf.tokenization.graph_basic_tokenizer import GraphBasicTokenizer
from bert_tf.tokenization.packer import BertPacker
from bert_tf.tokenization.preprocessor import BertPreprocessor
from bert_tf.tokenization.tokenizer_layer import BertTokenizerLayer
from bert_tf.tokenization.vocab import VocabError
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
    "convert_by_vocab",
    "convert_ids_to_tokens",
    "convert_to_unicode",
    "convert_tokens_to_ids",
    "load_vocab",
    "printable_text",
    "validate_case_matches_checkpoint",
    "vocabulary_list",
    "whitespace_tokenize",
]
