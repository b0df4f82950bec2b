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

import random
import time
from typing import Sequence

from absl import logging

from bert_tf.data.documents import read_documents, tokenize_documents
from bert_tf.data.instance_records import RecordMaker, RunSummary
from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.data.record_run import start_run
from bert_tf.data.tfrecord_writer import RoundRobinRecordWriter


def create_exact(input_files: Sequence[str], output_files: Sequence[str], vocab_file: str,
                 options: PretrainingDataOptions) -> RunSummary:
    """Writes the original tool's records for `input_files` to `output_files`.

    Arguments as for `record_run.start_run`; every draw comes from
    `random.Random(options.random_seed)`.

    Returns:
      A RunSummary.

    Raises:
      ValueError, OSError: as `start_run`, or the input holds no text.

    Example:
      >>> import os, tempfile
      >>> folder = tempfile.mkdtemp()
      >>> vocab_file, text = os.path.join(folder, "vocab.txt"), os.path.join(folder, "in.txt")
      >>> _ = open(vocab_file, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n[MASK]\\na\\nb\\n")
      >>> _ = open(text, "w").write("a b a\\nb b\\n\\nb a\\na\\n")
      >>> options = PretrainingDataOptions(max_seq_length=8, max_predictions_per_seq=2,
      ...                                  dupe_factor=2)
      >>> create_exact([text], [text + ".tfrecord"], vocab_file, options).num_instances
      7
    """
    start = time.monotonic()
    logging.info("exact mode: %d input files -> %d output files", len(input_files),
                 len(output_files))
    run = start_run(input_files, output_files, vocab_file, options)
    record_maker = RecordMaker(run.vocab, options)
    summary = RunSummary()
    with RoundRobinRecordWriter(output_files) as writer:
        documents = tokenize_documents(list(read_documents(input_files)), run.tokenize_lines,
                                       options.max_num_tokens)
        if not documents:
            raise ValueError(f"no text in input files {', '.join(input_files)}")
        logging.info("read %d documents from %d files in %.1fs", len(documents),
                     len(input_files), time.monotonic() - start)
        records = record_maker.records(documents, random.Random(options.random_seed), summary)
        writer.write_all(records)
    summary.seconds = time.monotonic() - start
    summary.log(output_files)
    return summary
