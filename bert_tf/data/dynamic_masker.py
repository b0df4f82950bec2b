"""`DynamicMasker`: the original's masked-LM choice, on a batch, in the graph.

`dynamic_masking` applies it to freshly packed groups of pairs; because every draw
comes from a seed argument (stateless random ops), the same batch and seed
give the same masks and a new seed gives new ones.
"""

import tensorflow as tf

from bert_tf.tokenization.vocab import vocabulary_list


class DynamicMasker:
    """Chooses masked-LM targets for a batch of packed sequences, in the graph.

    The original's rule (docs/ORIGINAL_BEHAVIOUR.md): candidates are all tokens
    but [CLS], [SEP] and padding; with whole-word masking a `##` piece joins
    the group of the token before it (never across [SEP]); groups are taken
    in random order while they fit in num_to_predict = min(max_predictions,
    max(1, round(sequence length * masked_lm_prob))), a group that would
    overflow is skipped; each chosen token becomes [MASK] (80%), stays (10%)
    or becomes a random vocabulary id (10%); positions come out sorted.

    Args:
      vocabulary: a vocabulary file or its list of tokens (id order).
      masked_lm_prob: fraction of tokens to predict.
      max_predictions_per_seq: cap on predictions per sequence.
      do_whole_word_mask: mask all pieces of a word together.

    Example:

    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b"]
    >>> masker = DynamicMasker(vocab, max_predictions_per_seq=2)
    >>> ids = tf.constant([[2, 5, 6, 5, 6, 5, 3, 0]])
    >>> out = masker(ids, tf.cast(ids > 0, tf.int32), seed=tf.constant([1, 2]))
    >>> out["masked_lm_weights"].numpy().tolist()
    [[1.0, 0.0]]
    """

    def __init__(self, vocabulary, masked_lm_prob=0.15,
                 max_predictions_per_seq=20, do_whole_word_mask=False):
        tokens = vocabulary_list(vocabulary, require=("[CLS]", "[SEP]", "[MASK]"))
        ids = {token: i for i, token in enumerate(tokens)}
        self.cls_id, self.sep_id, self.mask_id = ids["[CLS]"], ids["[SEP]"], ids["[MASK]"]
        self.vocab_size = len(tokens)
        self.masked_lm_prob = masked_lm_prob
        self.max_predictions_per_seq = max_predictions_per_seq
        self._continuation = (
            tf.constant([t.startswith("##") for t in tokens])
            if do_whole_word_mask else None)

    def __call__(self, input_ids, input_mask, seed):
        """Masks a batch.

        Args:
          input_ids: int [batch, seq_length], padded with 0.
          input_mask: int [batch, seq_length], 1 on real tokens.
          seed: shape [2] int tensor for the stateless draws.

        Returns:
          Dict of input_ids (masked), masked_lm_positions, masked_lm_ids
          (int32) and masked_lm_weights (float32), [batch, max_predictions].
        """
        seeds = tf.random.experimental.stateless_split(seed, 3)
        ids = tf.cast(input_ids, tf.int32)
        shape = tf.shape(ids)
        selected = self._select(ids, input_mask > 0, seeds[0])
        draw = tf.random.stateless_uniform(shape, seed=seeds[1])
        random_ids = tf.random.stateless_uniform(
            shape, seed=seeds[2], maxval=self.vocab_size, dtype=tf.int32)
        replacement = tf.where(draw < 0.8, self.mask_id,
                               tf.where(draw < 0.9, ids, random_ids))
        length = shape[1]
        position = tf.range(length)[None, :]
        first = tf.sort(tf.where(selected, position, position + length), axis=1)
        first = first[:, :self.max_predictions_per_seq]
        weights = first < length
        positions = tf.where(weights, first, 0)
        targets = tf.gather(ids, positions, batch_dims=1)
        return {
            "input_ids": tf.where(selected, replacement, ids),
            "masked_lm_positions": positions,
            "masked_lm_ids": tf.where(weights, targets, 0),
            "masked_lm_weights": tf.cast(weights, tf.float32),
        }

    def _select(self, ids, real, seed):
        """Bool [batch, length]: the tokens chosen for prediction."""
        batch, length = tf.shape(ids)[0], tf.shape(ids)[1]
        candidate = real & (ids != self.cls_id) & (ids != self.sep_id)
        starts = candidate
        if self._continuation is not None:
            after_candidate = tf.pad(candidate[:, :-1], [[0, 0], [1, 0]])
            starts &= ~(tf.gather(self._continuation, ids) & after_candidate)
        # Group index of each candidate token; the rest go to a dummy group.
        group = tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1
        group = tf.where(candidate, group, length)
        row_offset = tf.range(batch)[:, None] * (length + 1)
        sizes = tf.math.unsorted_segment_sum(
            tf.ones_like(group), group + row_offset, batch * (length + 1))
        sizes = tf.reshape(sizes, [batch, length + 1])[:, :length]
        order = tf.argsort(tf.random.stateless_uniform([batch, length], seed=seed), axis=1)
        real_count = tf.reduce_sum(tf.cast(real, tf.float64), axis=1)
        budget = tf.cast(tf.round(real_count * self.masked_lm_prob), tf.int32)
        budget = tf.clip_by_value(budget, 1, self.max_predictions_per_seq)

        def take(state, size):
            count, _ = state
            fits = count + size <= budget
            return count + tf.where(fits, size, 0), fits

        _, taken = tf.scan(
            take, tf.transpose(tf.gather(sizes, order, batch_dims=1)),
            initializer=(tf.zeros([batch], tf.int32), tf.zeros([batch], tf.bool)))
        chosen = tf.gather(tf.transpose(taken), tf.argsort(order, axis=1), batch_dims=1)
        chosen = tf.pad(chosen, [[0, 0], [0, 1]])  # the dummy group: never
        return tf.gather(chosen, group, batch_dims=1)
