"""Sentence pairs with next-sentence labels, built in tf.data from raw text.

The graph-side counterpart of the original pairing (see
docs/ORIGINAL_BEHAVIOUR.md, "Pretraining data"), simpler in two places and
equal in its statistics:

* Chunks. A document's sentences are grouped into chunks of about
  `max_num_tokens` tokens: a sentence joins chunk k when the document's
  tokens before it number between k and k+1 times `max_num_tokens` (the
  original instead closes a chunk once it reaches its target). Segment A is
  the chunk's first randint(1, n - 1) sentences and B the rest; a one-sentence
  chunk is cut at a random token instead (the original forces such a chunk to
  a random next, which pushes its random-next rate above one half). Chunks of
  fewer than two tokens are dropped.
* Random next. Within a group of pairs (`dynamic_masking.PAIRS_PER_DRAW`,
  whatever the batch size), each pair has its B replaced, with probability
  one half, by the B of a random other pair of the group that comes from
  another document (label 1); otherwise it keeps its own (label 0). The
  original draws B from a random other document at a random sentence.

Pairs are trimmed by the original's rule (`tokenization.truncation.kept_lengths`:
the longer side loses one token at a time, from its front or its back with
probability one half, until the pair fits); with probability
`short_seq_prob` a pair is trimmed to a random length in [2, max_num_tokens]
instead, as the original does with its target length.

Every random draw is stateless, from a seed the caller passes in: the same
seed gives the same pairs, and a fresh seed for every document and batch
(what `dynamic_masking` hands out) gives fresh cuts and pairs every epoch.
"""

import tensorflow as tf

from bert_tf.tokenization.truncation import kept_lengths

# Doc keys are hashes of the document text into this many buckets.
_DOC_KEY_BUCKETS = 2**62


def document_key(sentences):
    """A hash of a document's text, to tell documents apart in a group of pairs."""
    joined = tf.strings.reduce_join(sentences, separator="\n")
    return tf.strings.to_hash_bucket_fast(joined, _DOC_KEY_BUCKETS)


def _uniform_int(seed, shape, low, high):
    """Stateless integers in [low, high] (inclusive; `high` may be a tensor)."""
    u = tf.random.stateless_uniform(shape, seed=seed, dtype=tf.float64)
    low, high = tf.cast(low, tf.float64), tf.cast(high, tf.float64)
    return tf.cast(tf.floor(low + u * (high - low + 1)), tf.int64)


def document_pairs(token_ids, max_num_tokens, seed):
    """Cuts one tokenized document into (A, B) pairs of consecutive text.

    Args:
      token_ids: RaggedTensor [sentences, None] of one document's token ids.
      max_num_tokens: chunk size in tokens (max_seq_length - 3).
      seed: shape [2] int tensor for the stateless draws.

    Returns:
      (a, b): RaggedTensors [pairs, None] of token ids.
    """
    token_ids = tf.ragged.boolean_mask(token_ids, token_ids.row_lengths() > 0)
    starts = tf.cumsum(token_ids.row_lengths(), exclusive=True)
    bucket = starts // max_num_tokens
    new_chunk = tf.concat([[True], bucket[1:] != bucket[:-1]], 0)[:tf.size(bucket)]
    chunk_of_sentence = tf.cumsum(tf.cast(new_chunk, tf.int64)) - 1
    chunks = tf.RaggedTensor.from_value_rowids(token_ids, chunk_of_sentence)
    num_sentences = chunks.row_lengths()
    sentence_lengths = chunks.row_lengths(axis=2)
    tokens = chunks.merge_dims(1, 2)
    num_tokens = tokens.row_lengths()
    num_chunks = tf.shape(num_tokens, out_type=tf.int64)
    seeds = tf.random.experimental.stateless_split(seed, 2)
    # Cut after sentence k in [1, n-1], or after token j in [1, len-1].
    k = _uniform_int(seeds[0], num_chunks, 1, num_sentences - 1)
    before_cut = _window(num_sentences, tf.zeros_like(k), k)
    sentence_cut = tf.reduce_sum(sentence_lengths.with_flat_values(
        sentence_lengths.flat_values * tf.cast(before_cut.flat_values, tf.int64)), axis=1)
    token_cut = _uniform_int(seeds[1], num_chunks, 1, num_tokens - 1)
    cut = tf.where(num_sentences >= 2, sentence_cut, token_cut)
    a = tf.ragged.boolean_mask(tokens, _window(num_tokens, tf.zeros_like(cut), cut))
    b = tf.ragged.boolean_mask(tokens, _window(num_tokens, cut, num_tokens))
    keep = num_tokens >= 2
    return tf.ragged.boolean_mask(a, keep), tf.ragged.boolean_mask(b, keep)


def _window(lengths, start, stop):
    """Ragged bool [rows, lengths]: True at positions start..stop-1 of each row.

    Built from flat values (a gather per row) rather than by broadcasting
    against a ragged tensor, which costs seconds of tracing.
    """
    positions = tf.ragged.range(lengths)
    rows, flat = positions.value_rowids(), positions.flat_values
    return positions.with_flat_values(
        (flat >= tf.gather(start, rows)) & (flat < tf.gather(stop, rows)))


def swap_random_next(b, doc_keys, seed):
    """Gives about half of a group's pairs the B of another document.

    Args:
      b: RaggedTensor [pairs, None], each pair's own B.
      doc_keys: int64 [pairs], `document_key` of each pair's document.
      seed: shape [2] int tensor.

    Returns:
      (b, is_random_next): the new B segments and bool [pairs] labels. A pair
      whose group holds no other document keeps its B (label False).
    """
    seeds = tf.random.experimental.stateless_split(seed, 2)
    batch = tf.shape(doc_keys)[0]
    other_doc = tf.not_equal(doc_keys[:, None], doc_keys[None, :])
    scores = tf.random.stateless_uniform([batch, batch], seed=seeds[0])
    donor = tf.argmax(tf.where(other_doc, scores, -1.0), axis=1, output_type=tf.int32)
    coin = tf.random.stateless_uniform([batch], seed=seeds[1]) < 0.5
    is_random_next = coin & tf.reduce_any(other_doc, axis=1)
    source = tf.where(is_random_next, donor, tf.range(batch))
    return tf.gather(b, source), is_random_next


def trim_pair(a, b, max_num_tokens, short_seq_prob, seed):
    """Trims pairs like the original: longer side first, front or back at random.

    Args:
      a, b: RaggedTensors [batch, None], each row at least one token.
      max_num_tokens: the most tokens a pair may keep (max_seq_length - 3).
      short_seq_prob: chance of a random budget in [2, max_num_tokens].
      seed: shape [2] int tensor.

    Returns:
      (a, b) trimmed so that len(a) + len(b) <= each row's budget.
    """
    seeds = tf.random.experimental.stateless_split(seed, 4)
    la, lb = a.row_lengths(), b.row_lengths()
    rows = tf.shape(la, out_type=tf.int64)
    is_short = tf.random.stateless_uniform(rows, seed=seeds[0]) < short_seq_prob
    budget = tf.where(is_short, _uniform_int(seeds[1], rows, 2, max_num_tokens),
                      tf.constant(max_num_tokens, tf.int64))
    keep_a, keep_b = kept_lengths(la, lb, budget)
    return (_keep_window(a, keep_a, seeds[2]), _keep_window(b, keep_b, seeds[3]))


def _keep_window(segments, keep, seed):
    """Keeps `keep` tokens per row, the cut split between front and back.

    Each cut token comes off the front with probability one half, so the
    front cut is Binomial(cut, 0.5).
    """
    cut = segments.row_lengths() - keep
    front = tf.cast(tf.random.stateless_binomial(
        tf.shape(cut), seed=seed, counts=tf.cast(cut, tf.float32), probs=0.5,
        output_dtype=tf.int32), tf.int64)
    inside = _window(segments.row_lengths(), front, front + keep)
    return tf.ragged.boolean_mask(segments, inside)
