"""Batches of text lines -> token ids, through the compiled in-graph tokenizer.

Tokenizing the corpus with the pure-Python reference tokenizer costs more
than making all the instances, so the pretraining-data tool tokenizes with
`bert_tf.tokenization`'s `BertTokenizerLayer` (tensorflow-text underneath,
built to give `FullTokenizer`'s ids) inside one `tf.function`, a batch of
lines per call: about 15x faster here. The golden-record tests of
create_pretraining_data hold the result to the original tool's.
"""

from typing import List

import tensorflow as tf

from bert_tf.tokenization.tokenizer_layer import BertTokenizerLayer


class LineTokenizer:
    """Callable mapping a list of strings to their lists of WordPiece ids.

    Args:
      vocab_file: WordPiece vocabulary, one token per line.
      do_lower_case: lower-case and strip accents (uncased models).

    Example:
      >>> import os, tempfile
      >>> vocab_file = os.path.join(tempfile.mkdtemp(), "vocab.txt")
      >>> _ = open(vocab_file, "w").write("\\n".join(
      ...     ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "un", "##want", "##ed", ",", "running"]))
      >>> LineTokenizer(vocab_file)(["UNwant\\u00e9d,running", "", "walking"])
      [[4, 5, 6, 7, 8], [], [1]]
    """

    def __init__(self, vocab_file: str, do_lower_case: bool = True):
        layer = BertTokenizerLayer(vocab_file, do_lower_case=do_lower_case)

        @tf.function(input_signature=[tf.TensorSpec([None], tf.string)])
        def ids_and_splits(lines):
            ids = layer(lines)
            return ids.flat_values, ids.row_splits

        self._ids_and_splits = ids_and_splits

    def __call__(self, lines: List[str]) -> List[List[int]]:
        if not lines:
            return []
        flat, splits = self._ids_and_splits(tf.constant(lines, tf.string))
        flat, splits = flat.numpy().tolist(), splits.numpy().tolist()
        return [flat[start:end] for start, end in zip(splits[:-1], splits[1:])]
