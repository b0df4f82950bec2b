"""Sentence-pair instances for BERT pretraining, with the original's random draws.

A document is a list of sentences, a sentence a non-empty list of token ids.
`InstanceMaker.from_document` cuts one document into `[CLS] A [SEP] B [SEP]`
instances the way the original `create_pretraining_data.py` does
(REFERENCE.md section 3), drawing from a `random.Random` in the original's
order:

1. one `random()` against short_seq_prob, then `randint(2, max_num_tokens)`
   if it hits: the target length, fixed for the whole document;
2. per chunk: `randint(1, len(chunk) - 1)` for the end of A (chunks of two or
   more sentences), `random()` < 0.5 for a random next (skipped, and always
   random, for one-sentence chunks), then `randint` for the other document
   (up to 10 tries to differ from this one) and `randint` for its first
   sentence;
3. per token cut while the pair is too long: `random()` < 0.5 cuts the longer
   side's front, otherwise its back;
4. the masking draws of `MaskedLmMasker.mask`.
"""

import dataclasses
from typing import List, NamedTuple, Sequence

from bert_tf.data.masking import MaskedLmMasker

Document = List[List[int]]  # sentences of token ids


@dataclasses.dataclass(frozen=True)
class InstanceConfig:
    """The original tool's instance-shaping flags, with its defaults."""

    max_seq_length: int = 128
    max_predictions_per_seq: int = 20
    masked_lm_prob: float = 0.15
    short_seq_prob: float = 0.1
    do_whole_word_mask: bool = False
    dupe_factor: int = 10

    def __post_init__(self):
        checks = [
            (self.max_seq_length >= 5, "max_seq_length must be >= 5 ([CLS] A [SEP] B [SEP])"),
            (self.max_predictions_per_seq >= 1, "max_predictions_per_seq must be >= 1"),
            (0.0 < self.masked_lm_prob <= 1.0, "masked_lm_prob must be in (0, 1]"),
            (0.0 <= self.short_seq_prob <= 1.0, "short_seq_prob must be in [0, 1]"),
            (self.dupe_factor >= 1, "dupe_factor must be >= 1"),
        ]
        for ok, message in checks:
            if not ok:
                raise ValueError(f"{message}, got {dataclasses.asdict(self)}")


class TrainingInstance(NamedTuple):
    """One pretraining example before padding.

    `input_ids` is `[CLS] A [SEP] B [SEP]` after masking; the first
    `num_segment_a` ids (A plus [CLS] and its [SEP]) have segment id 0.
    """

    input_ids: List[int]
    num_segment_a: int
    masked_lm_positions: List[int]
    masked_lm_ids: List[int]
    is_random_next: bool

    @property
    def segment_ids(self) -> List[int]:
        return [0] * self.num_segment_a + [1] * (len(self.input_ids) - self.num_segment_a)


def truncation_cuts(len_a: int, len_b: int, max_num_tokens: int, rng) -> tuple:
    """Draws the original's per-token pair truncation, returning the cut counts.

    While the pair is too long, one token goes from the longer side (B on a
    tie), from its front if `rng.random() < 0.5`, else from its back.

    Returns:
      (a_front, a_back, b_front, b_back): tokens to drop from each end.
    """
    cuts = [0, 0, 0, 0]
    draw = rng.random
    while len_a + len_b > max_num_tokens:
        side = 0 if len_a > len_b else 2
        if side == 0:
            len_a -= 1
        else:
            len_b -= 1
        cuts[side if draw() < 0.5 else side + 1] += 1
    return tuple(cuts)


class InstanceMaker:
    """Turns documents into masked sentence-pair instances.

    Args:
      config: the instance-shaping flags.
      masker: masked-LM target chooser for the same vocabulary.
      cls_id, sep_id: ids of [CLS] and [SEP].

    Example:
      >>> import random
      >>> vocab = {t: i for i, t in enumerate(["[PAD]", "[CLS]", "[SEP]", "[MASK]"] +
      ...                                    [f"w{i}" for i in range(20)])}
      >>> config = InstanceConfig(max_seq_length=16)
      >>> maker = InstanceMaker(config, MaskedLmMasker(vocab, 0.15, 20),
      ...                       vocab["[CLS]"], vocab["[SEP]"])
      >>> docs = [[[4, 5, 6], [7, 8], [9, 10, 11, 12]], [[13, 14], [15]]]
      >>> [(len(i.input_ids), i.is_random_next)
      ...  for i in maker.from_document(docs, 0, random.Random(1))]
      [(7, True), (6, True), (10, True)]
    """

    def __init__(self, config: InstanceConfig, masker: MaskedLmMasker, cls_id: int, sep_id: int):
        self.config = config
        self._masker = masker
        self._cls_id = cls_id
        self._sep_id = sep_id

    def from_document(self, documents: Sequence[Document], index: int,
                      rng) -> List[TrainingInstance]:
        """All instances of `documents[index]`; other documents feed random nexts."""
        document = documents[index]
        max_num_tokens = self.config.max_seq_length - 3
        target_length = max_num_tokens
        if rng.random() < self.config.short_seq_prob:
            target_length = rng.randint(2, max_num_tokens)
        instances = []
        chunk_start, chunk_length, i = 0, 0, 0
        while i < len(document):
            chunk_length += len(document[i])
            if i == len(document) - 1 or chunk_length >= target_length:
                chunk = document[chunk_start:i + 1]
                a_end = rng.randint(1, len(chunk) - 1) if len(chunk) >= 2 else 1
                tokens_a = [t for sentence in chunk[:a_end] for t in sentence]
                if len(chunk) == 1 or rng.random() < 0.5:
                    tokens_b = self._random_next(documents, index,
                                                 target_length - len(tokens_a), rng)
                    i -= len(chunk) - a_end  # unused sentences go back to the document
                    is_random_next = True
                else:
                    tokens_b = [t for sentence in chunk[a_end:] for t in sentence]
                    is_random_next = False
                instances.append(self._make_instance(tokens_a, tokens_b, is_random_next, rng))
                chunk_start, chunk_length = i + 1, 0
            i += 1
        return instances

    @staticmethod
    def _random_next(documents, index: int, target_b_length: int, rng) -> List[int]:
        """Tokens from a random other document, from a random sentence on."""
        for _ in range(10):
            other = rng.randint(0, len(documents) - 1)
            if other != index:
                break
        document = documents[other]
        tokens = []
        for sentence in document[rng.randint(0, len(document) - 1):]:
            tokens.extend(sentence)
            if len(tokens) >= target_b_length:
                break
        return tokens

    def _make_instance(self, tokens_a: List[int], tokens_b: List[int], is_random_next: bool,
                       rng) -> TrainingInstance:
        a_front, a_back, b_front, b_back = truncation_cuts(
            len(tokens_a), len(tokens_b), self.config.max_seq_length - 3, rng)
        tokens_a = tokens_a[a_front:len(tokens_a) - a_back]
        tokens_b = tokens_b[b_front:len(tokens_b) - b_back]
        token_ids = [self._cls_id, *tokens_a, self._sep_id, *tokens_b, self._sep_id]
        masked = self._masker.mask(token_ids, rng)
        return TrainingInstance(masked.input_ids, len(tokens_a) + 2, masked.masked_lm_positions,
                                masked.masked_lm_ids, is_random_next)
