"""Dynamic masking: pretraining batches made from raw text while training.

The original tool masks each sequence `dupe_factor` times, once and for all,
before training. RoBERTa (Liu et al., 2019) found that drawing fresh masks
every time a sequence is seen trains at least as well and needs no
duplicated data on disk. `dynamic_pretraining_dataset` does that in tf.data:
it reads text files with the static modes' reader (`documents.read_documents`,
each file on its own), tokenizes in the graph, makes sentence pairs with
next-sentence labels (`dynamic_pairs`), trims them by the original's rule
(`pair_truncation`), packs them with `BertPacker`, masks them with the
original's rule (`dynamic_masker`) and yields exactly the features dict of
`readers.pretraining_dataset`, so the training loop takes either.

Text is read in Python (`tf.data.Dataset.from_generator`), a document at a
time; the pipeline therefore runs in the training process, as
`tf.distribute` strategies on one host do. Split big corpora into several
files so that hosts can share them out (see `readers.interleave_files`).

Every random choice is drawn from seeds that a `tf.data.Dataset.random`
stream hands each document and each batch. In training that stream runs on
across epochs, so cuts, pairs and masks differ every epoch; with `seed` set,
the whole stream is reproducible. An evaluation pass with a seed gives the
same batches every time it is run.
"""

import tensorflow as tf

from bert_tf.data import dynamic_pairs
from bert_tf.data import readers
from bert_tf.data.documents import read_documents
from bert_tf.data.dynamic_masker import DynamicMasker
from bert_tf.data.input_files import check_text_file, expand_input_patterns
from bert_tf.tokenization.packer import BertPacker
from bert_tf.tokenization.tokenizer_layer import BertTokenizerLayer
from bert_tf.tokenization.vocab import PRETRAINING_REQUIRED_TOKENS
from bert_tf.tokenization.vocab import vocabulary_list


def _seed_stream(seed, stream):
    """Endless [2]-shaped int64 seeds; distinct streams for distinct uses."""
    return tf.data.Dataset.random(None if seed is None else seed + stream).batch(2)


def _sentences_of_documents(path):
    """For `from_generator`: each document of one file (a bytes path) as its sentences."""
    for document in read_documents([path.decode("utf-8")]):
        yield document.sentences


def dynamic_pretraining_dataset(input_patterns, vocab_file, options, batch_size, is_training,
                                input_context=None, drop_remainder=True, cycle_length=None,
                                shuffle_buffer_size=1000, seed=None):
    """Batches of freshly masked pretraining features from raw text files.

    Example:

    >>> import os, tempfile
    >>> from bert_tf.data.pretraining_options import PretrainingDataOptions
    >>> folder = tempfile.mkdtemp()
    >>> vocab, text = os.path.join(folder, "vocab.txt"), os.path.join(folder, "in.txt")
    >>> _ = open(vocab, "w").write("\\n".join(
    ...     ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c"]))
    >>> _ = open(text, "w").write("a b c\\nc b\\nb a a\\n\\nc c a\\nb b\\n")
    >>> options = PretrainingDataOptions(max_seq_length=16, max_predictions_per_seq=3)
    >>> ds = dynamic_pretraining_dataset(text, vocab, options, batch_size=2,
    ...                                  is_training=True, seed=1)
    >>> batch = next(iter(ds))
    >>> sorted(batch) == sorted(readers.FEATURE_NAMES), batch["input_ids"].shape
    (True, TensorShape([2, 16]))

    Args:
      input_patterns: comma-separated globs or a list of globs of text files.
      vocab_file: WordPiece vocabulary, one token per line.
      options: a `PretrainingDataOptions`; dupe_factor and random_seed are
        the static tool's and not used here (see `seed`).
      batch_size: global batch size (see `readers.pretraining_dataset`).
      is_training: repeat forever, reshuffled (fresh masks every epoch);
        else one pass, shuffled the same way every time (by `seed`).
      input_context: optional `tf.distribute.InputContext`.
      drop_remainder: drop a last, smaller batch.
      cycle_length: files read at once in training (default min(4, files)).
      shuffle_buffer_size: documents, then sentence pairs, in the shuffle
        buffers (random next segments come from other documents of
        the same batch, so the pair buffer should span many documents).
      seed: seed of every shuffle and draw (None: fresh every run).

    Returns:
      A `tf.data.Dataset` of the features dict of `readers.pretraining_dataset`.

    Raises:
      ValueError: if a pattern matches no file, a file is not text, the
        vocabulary lacks a special token (`VocabError`, naming the file), or
        max_predictions_per_seq exceeds max_seq_length.
    """
    options.check_for_dynamic_masking()
    seq_length = options.max_seq_length
    files = expand_input_patterns(input_patterns)
    for path in files:
        check_text_file(path)
    vocab = vocabulary_list(vocab_file, PRETRAINING_REQUIRED_TOKENS)
    masker = DynamicMasker(vocab, options.masked_lm_prob, options.max_predictions_per_seq,
                           options.do_whole_word_mask)
    tokenizer = BertTokenizerLayer(vocab, do_lower_case=options.do_lower_case)
    packer = BertPacker(seq_length, masker.cls_id, masker.sep_id)
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
    max_num_tokens = options.max_num_tokens

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
        a, b = dynamic_pairs.trim_pair(pairs["a"], b, max_num_tokens, options.short_seq_prob,
                                       seeds[1])
        packed = packer((a, b))
        features = masker(packed["input_ids"], packed["input_mask"], seeds[2])
        features["input_mask"] = packed["input_mask"]
        features["segment_ids"] = packed["segment_ids"]
        features["next_sentence_labels"] = tf.cast(is_random_next, tf.int32)[:, None]
        rows = batch_size if drop_remainder else None
        for name, value in features.items():
            value.set_shape([rows, value.shape[1]])
        return features

    documents = readers.interleave_files(
        files, lambda path: tf.data.Dataset.from_generator(
            _sentences_of_documents, args=(path,),
            output_signature=tf.TensorSpec([None], tf.string)),
        is_training, input_context, cycle_length, seed)
    # Shuffled in evaluation too (the same order every pass): a batch of one document's
    # consecutive pairs has no random next B to take (its labels would all be 0).
    documents = documents.shuffle(shuffle_buffer_size, seed=seed,
                                  reshuffle_each_iteration=is_training)
    pairs = tf.data.Dataset.zip(documents, _seed_stream(seed, 0)).map(
        pairs_of_document, num_parallel_calls=tf.data.AUTOTUNE).unbatch()
    pairs = pairs.shuffle(shuffle_buffer_size, seed=seed, reshuffle_each_iteration=is_training)
    batches = pairs.ragged_batch(batch_size, drop_remainder=drop_remainder)
    batches = tf.data.Dataset.zip(batches, _seed_stream(seed, 1)).map(
        features_of_batch, num_parallel_calls=tf.data.AUTOTUNE)
    return batches.prefetch(tf.data.AUTOTUNE)
