"""Dynamic masking: pretraining batches made from raw text while training.

The original tool masks each sequence `dupe_factor` times, once and for all,
before training. RoBERTa (Liu et al., 2019) found that drawing fresh masks
every time a sequence is seen trains at least as well and needs no
duplicated data on disk. `dynamic_pretraining_dataset` does that in tf.data:
it reads text files in the pretraining input format (one sentence per line, a
blank line between documents), tokenizes in the graph, makes sentence pairs
with next-sentence labels (`dynamic_pairs`), masks them with the original's
rule (`dynamic_masker`) and yields exactly the features dict of
`readers.pretraining_dataset`, so the training loop takes either.

Each text file is read whole, one at a time per reader: split big corpora
into files of at most a few hundred megabytes (which also lets hosts share
them out, see `readers.interleave_files`).

Every random choice is drawn from seeds that a `tf.data.Dataset.random`
stream hands each document and each batch. In training that stream runs on
across epochs, so cuts, pairs and masks differ every epoch; with `seed` set,
the whole stream is reproducible. An evaluation pass with a seed gives the
same batches every time it is run.
"""

import tensorflow as tf
import tensorflow_text as tf_text

from bert_tf.data import dynamic_pairs
from bert_tf.data import readers
from bert_tf.data.dynamic_masker import DynamicMasker
from bert_tf.tokenization.tokenizer_layer import BertTokenizerLayer
from bert_tf.tokenization.vocab import PRETRAINING_REQUIRED_TOKENS
from bert_tf.tokenization.vocab import vocabulary_list


def _seed_stream(seed, stream):
    """Endless [2]-shaped int64 seeds; distinct streams for distinct uses."""
    return tf.data.Dataset.random(None if seed is None else seed + stream).batch(2)


def dynamic_pretraining_dataset(input_patterns, vocab_file, seq_length,
                                max_predictions_per_seq, batch_size, is_training,
                                lower_case=True, masked_lm_prob=0.15,
                                short_seq_prob=0.1, whole_word_mask=False,
                                input_context=None, drop_remainder=True,
                                cycle_length=None, shuffle_buffer_size=1000,
                                seed=None):
    """Batches of freshly masked pretraining features from raw text files.

    Example:

    >>> ds = dynamic_pretraining_dataset(
    ...     "../shared/data/corpus/sample_text.txt",
    ...     "../shared/data/vocab/bert-base-uncased-vocab.txt",
    ...     seq_length=128, max_predictions_per_seq=20, batch_size=4,
    ...     is_training=True, seed=1)
    >>> sorted(next(iter(ds))) == sorted(readers.FEATURE_NAMES)
    True

    Args:
      input_patterns: comma-separated globs or a list of globs of text files.
      vocab_file: WordPiece vocabulary, one token per line.
      seq_length: max_seq_length of the packed sequences.
      max_predictions_per_seq: cap on masked-LM targets per sequence.
      batch_size: global batch size (see `readers.pretraining_dataset`).
      is_training: shuffle and repeat forever (fresh masks every epoch);
        else one ordered pass.
      lower_case: lower-case and strip accents before WordPiece.
      masked_lm_prob: fraction of tokens to predict.
      short_seq_prob: chance of trimming a pair to a random shorter length.
      whole_word_mask: mask all pieces of a word together.
      input_context: optional `tf.distribute.InputContext`.
      drop_remainder: drop a last, smaller batch.
      cycle_length: files read at once in training (default min(4, files)).
      shuffle_buffer_size: documents, then sentence pairs, in the training
        shuffle buffers (random next segments come from other documents of
        the same batch, so the pair buffer should span many documents).
      seed: seed of every shuffle and draw (None: fresh every run).

    Returns:
      A `tf.data.Dataset` of the features dict of `readers.pretraining_dataset`.

    Raises:
      ValueError: if a pattern matches no file, the vocabulary lacks a special
        token (`VocabError`, naming the file), or max_predictions_per_seq
        exceeds seq_length.
    """
    if not 0 < max_predictions_per_seq <= seq_length:
        raise ValueError(f"max_predictions_per_seq={max_predictions_per_seq} must be in "
                         f"[1, seq_length={seq_length}]")
    files = readers.expand_input_patterns(input_patterns)
    vocab = vocabulary_list(vocab_file, PRETRAINING_REQUIRED_TOKENS)
    masker = DynamicMasker(vocab, masked_lm_prob, max_predictions_per_seq,
                           whole_word_mask)
    tokenizer = BertTokenizerLayer(vocab, do_lower_case=lower_case)
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    max_num_tokens = seq_length - 3

    # Plain TF code: skip AutoGraph, whose conversion alone costs seconds.
    @tf.autograph.experimental.do_not_convert
    def pairs_of_document(sentences, pair_seed):
        token_ids = tokenizer(sentences)
        a, b = dynamic_pairs.document_pairs(token_ids, max_num_tokens, pair_seed)
        key = dynamic_pairs.document_key(sentences)
        return {"a": a, "b": b, "doc": tf.fill(tf.shape(a.row_lengths()), key)}

    @tf.autograph.experimental.do_not_convert
    def features_of_batch(pairs, batch_seed):
        seeds = tf.random.experimental.stateless_split(batch_seed, 3)
        b, is_random_next = dynamic_pairs.swap_random_next(pairs["b"], pairs["doc"], seeds[0])
        a, b = dynamic_pairs.trim_pair(pairs["a"], b, max_num_tokens, short_seq_prob, seeds[1])
        ids, segments = tf_text.combine_segments([a, b], masker.cls_id, masker.sep_id)
        input_ids, input_mask = tf_text.pad_model_inputs(ids, seq_length)
        segment_ids, _ = tf_text.pad_model_inputs(segments, seq_length)
        features = masker(input_ids, input_mask, seeds[2])
        features["input_mask"] = tf.cast(input_mask, tf.int32)
        features["segment_ids"] = tf.cast(segment_ids, tf.int32)
        features["next_sentence_labels"] = tf.cast(is_random_next, tf.int32)[:, None]
        rows = batch_size if drop_remainder else None
        for name, value in features.items():
            value.set_shape([rows, value.shape[1]])
        return features

    documents = readers.interleave_files(
        files, lambda path: tf.data.Dataset.from_tensor_slices(
            dynamic_pairs.split_documents(tf.io.read_file(path))),
        is_training, input_context, cycle_length, seed)
    if is_training:
        documents = documents.shuffle(shuffle_buffer_size, seed=seed)
    pairs = tf.data.Dataset.zip(documents, _seed_stream(seed, 0)).map(
        pairs_of_document, num_parallel_calls=tf.data.AUTOTUNE).unbatch()
    if is_training:
        pairs = pairs.shuffle(shuffle_buffer_size, seed=seed)
    batches = pairs.ragged_batch(batch_size, drop_remainder=drop_remainder)
    batches = tf.data.Dataset.zip(batches, _seed_stream(seed, 1)).map(
        features_of_batch, num_parallel_calls=tf.data.AUTOTUNE)
    return batches.prefetch(tf.data.AUTOTUNE)
