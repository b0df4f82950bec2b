"""Tokenized documents -> shuffled, serialized pretraining records.

`RecordMaker.records` is the heart of the original tool, shared by both
modes: shuffle the documents, make instances from every document
`dupe_factor` times over (fresh masks each pass), shuffle all records. Exact
mode runs it once over the whole corpus with `random.Random(random_seed)`;
fast mode runs it per shard in worker processes (`start_worker`,
`worker_records`).

This module and everything it imports are free of TensorFlow, so fast
mode's workers start in a fraction of a second and stay small.
"""

import dataclasses
import random
from typing import List, Mapping, Sequence

from absl import logging

from bert_tf.data.example_encoder import ExampleEncoder
from bert_tf.data.masking import MaskedLmMasker
from bert_tf.data.pretraining_instances import Document, InstanceMaker
from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.data.random_draws import shuffle
from bert_tf.work_progress import WorkProgress

@dataclasses.dataclass
class RunSummary:
    """What a run (or one shard of it) read and wrote."""

    num_documents: int = 0
    num_sentences: int = 0
    num_instances: int = 0
    num_random_next: int = 0
    seconds: float = 0.0

    def add(self, other: "RunSummary") -> None:
        """Adds another run's counts (not its time) to these."""
        self.num_documents += other.num_documents
        self.num_sentences += other.num_sentences
        self.num_instances += other.num_instances
        self.num_random_next += other.num_random_next

    def log(self, output_files: Sequence[str]) -> None:
        rate = self.num_instances / max(self.seconds, 1e-9)
        logging.info("wrote %d instances (%.1f%% random next) from %d documents, %d sentences "
                     "to %s in %.1fs (%.0f instances/s)", self.num_instances,
                     100.0 * self.num_random_next / max(self.num_instances, 1),
                     self.num_documents, self.num_sentences, ", ".join(output_files),
                     self.seconds, rate)


class RecordMaker:
    """Makes the records of a set of tokenized documents, as the original does.

    Args:
      vocab: token -> id, in vocabulary-file order.
      options: the flags (do_lower_case and random_seed are not used here).

    Example:
      >>> vocab = {t: i for i, t in enumerate(["[PAD]", "[CLS]", "[SEP]", "[MASK]", "a", "b"])}
      >>> maker = RecordMaker(vocab, PretrainingDataOptions(max_seq_length=8, dupe_factor=2))
      >>> documents = [[[4, 5], [5, 4, 4]], [[5, 5, 5]]]
      >>> len(maker.records(documents, random.Random(0), RunSummary()))
      5
    """

    def __init__(self, vocab: Mapping[str, int], options: PretrainingDataOptions):
        masker = MaskedLmMasker(vocab, options.masked_lm_prob, options.max_predictions_per_seq,
                                options.do_whole_word_mask)
        self.instance_maker = InstanceMaker(options, masker, vocab["[CLS]"], vocab["[SEP]"])
        self.encoder = ExampleEncoder(options.max_seq_length, options.max_predictions_per_seq,
                                      max(vocab.values()) + 1)
        self.dupe_factor = options.dupe_factor
        self._special_ids = (vocab["[CLS]"], vocab["[SEP]"])

    def records(self, documents: List[Document], rng: random.Random,
                summary: RunSummary) -> List[bytes]:
        """Shuffles `documents` in place; returns their records, shuffled.

        Counts what it made into `summary`.

        Raises:
          ValueError: a sentence holds the id of [CLS] or [SEP]. Text never
            tokenizes to them, and masking counts on finding them only where
            an instance's layout puts them.
        """
        self._check_no_special_ids(documents)
        shuffle(documents, rng)
        records = []
        progress = WorkProgress(f"making instances, {self.dupe_factor} passes",
                                total=self.dupe_factor * len(documents), unit="documents")
        for _ in range(self.dupe_factor):
            for index in range(len(documents)):
                for instance in self.instance_maker.from_document(documents, index, rng):
                    records.append(self.encoder.encode(instance))
                    summary.num_random_next += instance.is_random_next
                progress.advance()
        shuffle(records, rng)
        summary.num_documents += len(documents)
        summary.num_sentences += sum(map(len, documents))
        summary.num_instances += len(records)
        return records

    def _check_no_special_ids(self, documents: List[Document]) -> None:
        for number, document in enumerate(documents):
            for sentence in document:
                for special in self._special_ids:
                    if special in sentence:
                        raise ValueError(f"document {number} holds token id {special}, which is "
                                         "[CLS] or [SEP]: only an instance's layout places them")


_worker_maker = []


def start_worker(vocab: Mapping[str, int], options: PretrainingDataOptions) -> None:
    """Process-pool initializer: builds this worker's RecordMaker once."""
    _worker_maker[:] = [RecordMaker(vocab, options)]


def worker_records(documents: List[Document], seed: str) -> tuple:
    """Worker task: (records, RunSummary) of one shard, drawn from Random(seed)."""
    summary = RunSummary()
    records = _worker_maker[0].records(documents, random.Random(seed), summary)
    return records, summary
