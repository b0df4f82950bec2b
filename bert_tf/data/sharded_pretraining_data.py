"""Fast mode: pretraining data from shards of documents, in worker processes.

The original holds the whole corpus and every instance in memory and runs on
one core. `create_sharded` streams each input file in blocks of about
`SHARDS_PER_BLOCK` shards' worth of text and deals each block's documents
round-robin into shards of about `shard_bytes` characters of sentence text
(a shard never spans two files). The main process tokenizes each shard with the compiled
tokenizer and hands it to one of `num_workers` worker processes, which run
the original's algorithm on it (`RecordMaker.records`: shuffle, `dupe_factor`
passes, shuffle) with their own generator, seeded from (random_seed, file
name, shard number). The workers need no TensorFlow, so they start at once
(`worker_pool`).

- The output depends on the input, flags and shard size, never on the number
  of workers or on timing: shards are written in input order, each shard's
  records in its own shuffled order, round-robin over the output files.
- A file gives the same records whether it is processed alone or in a list
  (files with the same name get the same seeds), so a corpus can be split
  over processes or machines, one group of input files each. Use that past
  about 8 workers, when the main process's tokenizing becomes the limit.
- Random next sentences come from another document of the same shard, which
  samples its whole block rather than one run of neighbouring documents;
  records are shuffled within a shard (the bounded shuffle buffer).
- Memory holds one block of text and at most 2 * num_workers shards in flight.

Per instance, the distribution is the original's: the same code makes it.
"""

import collections
import os
import time
from typing import Iterator, List, NamedTuple, Sequence

from absl import logging

from bert_tf.data.documents import TextDocument, read_documents, tokenize_documents
from bert_tf.data.instance_records import RunSummary, worker_records
from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.data.record_run import start_run
from bert_tf.data.tfrecord_writer import RoundRobinRecordWriter
from bert_tf.data.worker_pool import worker_pool

# Shard size, counted in characters of the stripped sentences (line breaks
# and blank lines not counted): about 1 MB of English text on disk.
DEFAULT_SHARD_BYTES = 1 << 20
SHARDS_PER_BLOCK = 16


class Shard(NamedTuple):
    """Whole documents from one input file."""

    path: str
    index: int
    documents: List[TextDocument]

    def seed(self, random_seed: int) -> str:
        """Seed of this shard's generator: independent of the file's directory."""
        return f"{random_seed}/{os.path.basename(self.path)}/{self.index}"


def _deal(path: str, documents: List[TextDocument], size: int, shard_bytes: int,
          first_index: int) -> List[Shard]:
    """Deals `documents` round-robin into ceil(size / shard_bytes) shards."""
    count = min(len(documents), -(-size // shard_bytes))
    return [Shard(path, first_index + i, documents[i::count]) for i in range(count)]


def iter_shards(input_files: Sequence[str], shard_bytes: int) -> Iterator[Shard]:
    """Streams the input as shards of about `shard_bytes` characters of text.

    Sizes count the characters of the stripped sentences, not the bytes on
    disk. Each file is read in blocks: a block ends at the first document
    that takes it to `SHARDS_PER_BLOCK * shard_bytes` characters or more (or
    at the end of the file); its documents are dealt round-robin into
    ceil(size / shard_bytes) shards, so a shard samples the whole block
    (many books or topics), not a run of neighbours.
    """
    block_bytes = SHARDS_PER_BLOCK * shard_bytes
    for path in input_files:
        documents, size, index = [], 0, 0
        for document in read_documents([path]):
            documents.append(document)
            size += sum(map(len, document.sentences))
            if size >= block_bytes:
                shards = _deal(path, documents, size, shard_bytes, index)
                yield from shards
                documents, size, index = [], 0, index + len(shards)
        if documents:
            yield from _deal(path, documents, size, shard_bytes, index)


def ordered_map(executor, fn, items: Iterator, window: int) -> Iterator:
    """`fn(*item)` for each item on `executor`, at most `window` pending, in order.

    Unlike `executor.map`, items are pulled from the iterator only as results
    are taken, so a streamed corpus is never read far ahead.
    """
    pending = collections.deque()
    for item in items:
        pending.append(executor.submit(fn, *item))
        if len(pending) >= window:
            yield pending.popleft().result()
    while pending:
        yield pending.popleft().result()


def create_sharded(input_files: Sequence[str], output_files: Sequence[str], vocab_file: str,
                   options: PretrainingDataOptions, num_workers: int = 2,
                   shard_bytes: int = DEFAULT_SHARD_BYTES) -> RunSummary:
    """Writes pretraining records for `input_files`, shard by shard, in parallel.

    The first four arguments are those of `record_run.start_run`; each
    shard's generator is seeded from `options.random_seed`, its file name
    and its number.

    Args:
      num_workers: worker processes.
      shard_bytes: characters of sentence text per shard (see `iter_shards`);
        random next sentences and the shuffle stay within a shard.

    Returns:
      A RunSummary.

    Raises:
      ValueError, OSError: as `start_run`, or the input holds no text.
    """
    start = time.monotonic()
    logging.info("fast mode, %d workers: %d input files -> %d output files", num_workers,
                 len(input_files), len(output_files))
    run = start_run(input_files, output_files, vocab_file, options)
    tasks = ((tokenize_documents(shard.documents, run.tokenize_lines, options.max_num_tokens),
              shard.seed(options.random_seed))
             for shard in iter_shards(input_files, shard_bytes))
    summary = RunSummary()
    with RoundRobinRecordWriter(output_files) as writer, \
            worker_pool(num_workers, run.vocab, options) as executor:
        for number, (records, shard) in enumerate(
                ordered_map(executor, worker_records, tasks, 2 * num_workers)):
            writer.write_all(records)
            summary.add(shard)
            logging.info("shard %d: %d documents, %d instances; total %d instances, %.0f/s",
                         number, shard.num_documents, shard.num_instances,
                         summary.num_instances, summary.num_instances / (time.monotonic() - start))
        if not summary.num_instances:
            raise ValueError(f"no text in input files {', '.join(input_files)}")
    summary.seconds = time.monotonic() - start
    summary.log(output_files)
    return summary
