"""Masked-LM target selection, drawing the same random numbers as the original.

The original `create_pretraining_data.py` picks the masked positions of one
instance like this (docs/ORIGINAL_BEHAVIOUR.md): every token except [CLS]/[SEP] is
a candidate (with whole-word masking a `##` piece joins the group of the
token before it); the groups are shuffled; groups are taken in that order
while they fit in `num_to_predict`, a group that would overflow it is skipped;
each chosen position becomes [MASK] with p=0.8, else stays itself with p=0.5,
else becomes a uniformly random vocabulary entry. Positions are then sorted.

`MaskedLmMasker` does exactly that on token ids, consuming draws from a
`random.Random` in the original's order (`shuffle`, then per position
`random()`, maybe `random()`, maybe `randint`), so a shared generator stays in
step with the original tool's.
"""

from typing import List, Mapping, NamedTuple, Sequence

from bert_tf.data.random_draws import shuffle

_SPECIAL_TOKENS = ("[CLS]", "[SEP]", "[MASK]")


class MaskedTokens(NamedTuple):
    """One instance after masking: ids to feed and the targets to predict."""

    input_ids: List[int]
    masked_lm_positions: List[int]
    masked_lm_ids: List[int]


class MaskedLmMasker:
    """Chooses and applies masked-LM targets for one token sequence at a time.

    Args:
      vocab: token -> id, in vocabulary-file order (as `FullTokenizer.vocab`).
        Random replacements are drawn from its entries in that order, like the
        original's `vocab_words = list(vocab.keys())`.
      masked_lm_prob: fraction of tokens to predict (0.15).
      max_predictions_per_seq: cap on predictions per sequence (20).
      do_whole_word_mask: mask all pieces of a word together.

    Example:
      >>> import random
      >>> vocab = {t: i for i, t in enumerate(["[PAD]", "[CLS]", "[SEP]", "[MASK]",
      ...                                      "un", "##want", "##ed", "run", "##ning", "fast"])}
      >>> masker = MaskedLmMasker(vocab, 0.3, 20, do_whole_word_mask=True)
      >>> out = masker.mask([1, 4, 5, 6, 7, 8, 2, 9, 2], random.Random(1))
      >>> out.masked_lm_positions, out.masked_lm_ids
      ([4, 5, 7], [7, 8, 9])
    """

    def __init__(self, vocab: Mapping[str, int], masked_lm_prob: float,
                 max_predictions_per_seq: int, do_whole_word_mask: bool = False):
        missing = [token for token in _SPECIAL_TOKENS if token not in vocab]
        if missing:
            raise ValueError(f"the vocabulary lacks the special token(s) {', '.join(missing)}, "
                             "which masked-LM pretraining needs")
        self._sep_id = vocab["[SEP]"]
        self._mask_id = vocab["[MASK]"]
        self._replacement_ids = list(vocab.values())
        self._masked_lm_prob = masked_lm_prob
        self._max_predictions = max_predictions_per_seq
        self._whole_word = do_whole_word_mask
        self._is_piece = frozenset(i for token, i in vocab.items() if token.startswith("##"))

    def num_to_predict(self, num_tokens: int) -> int:
        """How many positions a sequence of `num_tokens` (with [CLS]/[SEP]) gets."""
        wanted = int(round(num_tokens * self._masked_lm_prob))
        return min(self._max_predictions, max(1, wanted))

    def _candidate_groups(self, token_ids: Sequence[int]) -> list:
        """Positions that may be masked, grouped by word under whole-word masking.

        Every position but those of [CLS] and the two [SEP]s: A and B hold
        no special ids (text never tokenizes to them, their brackets being
        punctuation), so the first [SEP] ends A.
        """
        end_a = token_ids.index(self._sep_id)
        positions = [*range(1, end_a), *range(end_a + 1, len(token_ids) - 1)]
        if not self._whole_word:
            return positions
        groups = []
        for i in positions:
            if groups and token_ids[i] in self._is_piece:
                groups[-1].append(i)
            else:
                groups.append([i])
        return groups

    def _chosen_positions(self, groups: list, budget: int) -> list:
        """Positions of the shuffled groups taken greedily within `budget`."""
        if not self._whole_word:
            return groups[:budget]
        chosen = []
        for group in groups:
            if len(chosen) >= budget:
                break
            if len(chosen) + len(group) <= budget:
                chosen.extend(group)
        return chosen

    def mask(self, token_ids: Sequence[int], rng) -> MaskedTokens:
        """Masks `token_ids` ([CLS] A [SEP] B [SEP] ids) with draws from `rng`.

        A and B must not hold the ids of [CLS] or [SEP] (`RecordMaker`
        checks its documents).

        Returns:
          MaskedTokens with the ids after masking, the sorted masked positions
          and the original ids at those positions.
        """
        groups = self._candidate_groups(token_ids)
        shuffle(groups, rng)
        chosen = self._chosen_positions(groups, self.num_to_predict(len(token_ids)))
        output = list(token_ids)
        draw = rng.random
        for position in chosen:
            if draw() < 0.8:
                output[position] = self._mask_id
            elif draw() < 0.5:
                pass  # keeps its own id
            else:
                index = rng.randint(0, len(self._replacement_ids) - 1)
                output[position] = self._replacement_ids[index]
        positions = sorted(chosen)
        return MaskedTokens(output, positions, [token_ids[p] for p in positions])
