"""Sentence-pair instances for BERT pretraining, with the original's random draws.

A document is a list of sentences, a sentence a non-empty list of token ids.
`InstanceMaker.from_document` cuts one document into `[CLS] A [SEP] B [SEP]`
instances the way the original `create_pretraining_data.py` does (see
docs/ORIGINAL_BEHAVIOUR.md, "Pretraining data"), drawing from a
`random.Random` in the original's order:

1. one `random()` against short_seq_prob, then `randint(2, max_num_tokens)`
   if it hits: the target length, fixed for the whole document;
2. per chunk: `randint(1, len(chunk) - 1)` for the end of A (chunks of two or
   more sentences), `random()` < 0.5 for a random next (skipped, and always
   random, for one-sentence chunks), then `randint` for the other document
   (up to 10 tries to differ from this one) and `randint` for its first
   sentence;
3. per token cut while the pair is too long: `random()` < 0.5 cuts the longer
   side's front, otherwise its back (`pair_truncation.truncation_cuts`);
4. the masking draws of `MaskedLmMasker.mask`.
"""

from typing import List, NamedTuple, Sequence

from bert_tf.data.masking import MaskedLmMasker
from bert_tf.data.pair_truncation import truncation_cuts
from bert_tf.data.pretraining_options import PretrainingDataOptions

Document = List[List[int]]  # sentences of token ids


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


class InstanceMaker:
    """Turns documents into masked sentence-pair instances.

    Args:
      options: the flags; uses max_seq_length and short_seq_prob.
      masker: masked-LM target chooser for the same vocabulary.
      cls_id, sep_id: ids of [CLS] and [SEP].

    Example:
      >>> import random
      >>> vocab = {t: i for i, t in enumerate(["[PAD]", "[CLS]", "[SEP]", "[MASK]"] +
      ...                                    [f"w{i}" for i in range(20)])}
      >>> options = PretrainingDataOptions(max_seq_length=16)
      >>> maker = InstanceMaker(options, MaskedLmMasker(vocab, 0.15, 20),
      ...                       vocab["[CLS]"], vocab["[SEP]"])
      >>> docs = [[[4, 5, 6], [7, 8], [9, 10, 11, 12]], [[13, 14], [15]]]
      >>> [(len(i.input_ids), i.is_random_next)
      ...  for i in maker.from_document(docs, 0, random.Random(1))]
      [(7, True), (6, True), (10, True)]
    """

    def __init__(self, options: PretrainingDataOptions, masker: MaskedLmMasker, cls_id: int,
                 sep_id: int):
        self.options = options
        self._masker = masker
        self._cls_id = cls_id
        self._sep_id = sep_id

    def from_document(self, documents: Sequence[Document], index: int,
                      rng) -> List[TrainingInstance]:
        """All instances of `documents[index]`; other documents feed random nexts."""
        document = documents[index]
        max_num_tokens = self.options.max_num_tokens
        target_length = max_num_tokens
        if rng.random() < self.options.short_seq_prob:
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
            len(tokens_a), len(tokens_b), self.options.max_num_tokens, rng)
        tokens_a = tokens_a[a_front:len(tokens_a) - a_back]
        tokens_b = tokens_b[b_front:len(tokens_b) - b_back]
        token_ids = [self._cls_id, *tokens_a, self._sep_id, *tokens_b, self._sep_id]
        masked = self._masker.mask(token_ids, rng)
        return TrainingInstance(masked.input_ids, len(tokens_a) + 2, masked.masked_lm_positions,
                                masked.masked_lm_ids, is_random_next)
