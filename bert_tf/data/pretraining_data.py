"""Exact mode: the original tool's pretraining data, record for record.

`create_exact` follows the original `create_pretraining_data.py` step by step
with one `random.Random(random_seed)`: read and tokenize the whole input,
shuffle the documents, make instances from every document `dupe_factor`
times over, shuffle all instances, write them round-robin. Same input, vocab
and flags give the same records in the same order as the original.

It is faster than the original because the draws are the only per-token
Python work left: documents are tokenized once, in batches, by the compiled
tokenizer; truncation is done by slicing after the draws; records are
encoded straight to protobuf bytes (see `ExampleEncoder`).
"""

import itertools
import random
import time
from typing import Sequence

from absl import logging

from bert_tf.data.documents import iter_text_documents, read_lines, tokenize_documents
from bert_tf.data.instance_records import RecordMaker, RunSummary
from bert_tf.data.line_tokenizer import LineTokenizer
from bert_tf.data.pretraining_instances import InstanceConfig
from bert_tf.data.tfrecord_writer import RoundRobinRecordWriter
from bert_tf.tokenization.vocab import PRETRAINING_REQUIRED_TOKENS, load_vocab


def create_exact(input_files: Sequence[str], output_files: Sequence[str], vocab_file: str,
                 do_lower_case: bool, config: InstanceConfig,
                 random_seed: int = 12345) -> RunSummary:
    """Writes the original tool's records for `input_files` to `output_files`.

    Args:
      input_files: text files, one sentence per line, blank line between documents.
      output_files: TFRecord files, written round-robin.
      vocab_file: WordPiece vocabulary.
      do_lower_case: lower-case and strip accents.
      config: instance-shaping flags.
      random_seed: seed of the single `random.Random` all draws come from.

    Returns:
      A RunSummary.

    Raises:
      ValueError: the input holds no text, or the vocab lacks special tokens.
    """
    start = time.monotonic()
    logging.info("exact mode: %d input files -> %d output files", len(input_files),
                 len(output_files))
    vocab = load_vocab(vocab_file, require=PRETRAINING_REQUIRED_TOKENS)
    tokenize_lines = LineTokenizer(vocab_file, do_lower_case)
    record_maker = RecordMaker(vocab, config)
    summary = RunSummary()
    with RoundRobinRecordWriter(output_files) as writer:
        lines = itertools.chain.from_iterable(read_lines(path) for path in input_files)
        documents = tokenize_documents(list(iter_text_documents(lines)), tokenize_lines)
        if not documents:
            raise ValueError(f"no text in input files {', '.join(input_files)}")
        logging.info("read %d documents from %d files in %.1fs", len(documents),
                     len(input_files), time.monotonic() - start)
        records = record_maker.records(documents, random.Random(random_seed), summary)
        writer.write_all(records)
    summary.seconds = time.monotonic() - start
    summary.log(output_files)
    return summary
