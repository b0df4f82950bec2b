"""Dynamic masking: pretraining batches made from raw text while training.

The original tool masks each sequence `dupe_factor` times, once and for all,
before training. RoBERTa (Liu et al., 2019) found that drawing fresh masks
every time a sequence is seen trains at least as well and needs no
duplicated data on disk. `DynamicPretrainingData` does that in tf.data:
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
stream hands each document and each group of `PAIRS_PER_DRAW` pairs. In
training that stream runs on across epochs, so cuts, pairs and masks differ
every epoch; with `seed` set, the whole stream is reproducible. An
evaluation pass with a seed gives the same batches every time it is run.

The random next sentences, trimming and masks are drawn per group of pairs,
whatever the batch: the examples are the same at any batch size, and so
under any `--gradient_accumulation_steps`, number of replicas or
`--eval_batch_size` (one stream's batch of 8 is its two batches of 4). Drawn
per batch, a batch of one sequence had no other document to take a random
next sentence from, and every label of such a run was "is next".
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


# Sentence pairs whose random next sentences, trims and masks are drawn together: a random
# next B comes from another document of the group.
PAIRS_PER_DRAW = 64


def _seed_stream(seed, stream):
    """Endless [2]-shaped int64 seeds; distinct streams for distinct uses."""
    return tf.data.Dataset.random(None if seed is None else seed + stream).batch(2)


def _sentences_of_documents(path):
    """For `from_generator`: each document of one file (a bytes path) as its sentences."""
    for document in read_documents([path.decode("utf-8")]):
        yield document.sentences


class DynamicPretrainingData:
    """Raw text files to freshly masked pretraining batches, traced once.

    The pipeline's graph functions (tokenizing, pairing, packing, masking) take
    seconds to trace. One object serves every dataset of a run (the check of
    each split, training and evaluation), and they reuse its traces: a
    document's function and a group's are each traced once for each device
    placement (a `tf.distribute` strategy places its input pipelines).

    Example:

    >>> import os, tempfile
    >>> from bert_tf.data.pretraining_options import PretrainingDataOptions
    >>> folder = tempfile.mkdtemp()
    >>> vocab, text = os.path.join(folder, "vocab.txt"), os.path.join(folder, "in.txt")
    >>> _ = open(vocab, "w").write("\\n".join(
    ...     ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "a", "b", "c"]))
    >>> _ = open(text, "w").write("a b c\\nc b\\nb a a\\n\\nc c a\\nb b\\n")
    >>> options = PretrainingDataOptions(max_seq_length=16, max_predictions_per_seq=3)
    >>> data = DynamicPretrainingData(vocab, options)
    >>> batch = next(iter(data.dataset(text, batch_size=2, is_training=True, seed=1)))
    >>> sorted(batch) == sorted(readers.FEATURE_NAMES), batch["input_ids"].shape
    (True, TensorShape([2, 16]))

    Args:
      vocab_file: WordPiece vocabulary, one token per line.
      options: a `PretrainingDataOptions`; dupe_factor and random_seed are
        the static tool's and not used here (see `dataset`'s `seed`).

    Raises:
      ValueError: if the vocabulary lacks a special token (`VocabError`,
        naming the file) or max_predictions_per_seq exceeds max_seq_length.
    """

    def __init__(self, vocab_file, options):
        options.check_for_dynamic_masking()
        self.options = options
        vocab = vocabulary_list(vocab_file, PRETRAINING_REQUIRED_TOKENS)
        self._masker = DynamicMasker(vocab, options.masked_lm_prob,
                                     options.max_predictions_per_seq, options.do_whole_word_mask)
        self._tokenizer = BertTokenizerLayer(vocab, do_lower_case=options.do_lower_case)
        self._packer = BertPacker(options.max_seq_length, self._masker.cls_id,
                                  self._masker.sep_id)
        # Plain TF code: no AutoGraph, whose conversion alone costs seconds.
        self._pairs_of_document = tf.function(
            self._document_pairs, autograph=False,
            input_signature=[tf.TensorSpec([None], tf.string), tf.TensorSpec([2], tf.int64)])
        self._features_of_group = tf.function(self._group_features, autograph=False)

    def _document_pairs(self, sentences, pair_seed):
        """One document's (A, B) pairs, each with the document's key."""
        token_ids = self._tokenizer(sentences)
        a, b = dynamic_pairs.document_pairs(token_ids, self.options.max_num_tokens, pair_seed)
        key = dynamic_pairs.document_key(sentences)
        return {"a": a, "b": b, "doc": tf.fill(tf.shape(a.row_lengths()), key)}

    def _group_features(self, pairs, group_seed):
        """A group of pairs as pretraining features: random next, trimmed, packed, masked."""
        seeds = tf.random.experimental.stateless_split(group_seed, 3)
        b, is_random_next = dynamic_pairs.swap_random_next(pairs["b"], pairs["doc"], seeds[0])
        a, b = dynamic_pairs.trim_pair(pairs["a"], b, self.options.max_num_tokens,
                                       self.options.short_seq_prob, seeds[1])
        packed = self._packer((a, b))
        features = self._masker(packed["input_ids"], packed["input_mask"], seeds[2])
        features["input_mask"] = packed["input_mask"]
        features["segment_ids"] = packed["segment_ids"]
        features["next_sentence_labels"] = tf.cast(is_random_next, tf.int32)[:, None]
        return features

    def dataset(self, input_patterns, batch_size, is_training, input_context=None,
                drop_remainder=True, cycle_length=None, shuffle_buffer_size=1000, seed=None):
        """Batches of freshly masked pretraining features from raw text files.

        Args:
          input_patterns: comma-separated globs or a list of globs of text files.
          batch_size: global batch size (see `readers.pretraining_dataset`).
          is_training: repeat forever, reshuffled (fresh masks every epoch);
            else one pass, shuffled the same way every time (by `seed`).
          input_context: optional `tf.distribute.InputContext`.
          drop_remainder: drop a last, smaller batch.
          cycle_length: files read at once in training (default min(4, files)).
          shuffle_buffer_size: documents, then sentence pairs, in the shuffle
            buffers (random next segments come from other documents of the
            same `PAIRS_PER_DRAW` pairs, so the pair buffer should span many
            documents).
          seed: seed of every shuffle and draw (None: fresh every run).

        Returns:
          A `tf.data.Dataset` of the features dict of `readers.pretraining_dataset`.

        Raises:
          ValueError: if a pattern matches no file or a file is not text.
        """
        files = expand_input_patterns(input_patterns)
        for path in files:
            check_text_file(path)
        if input_context is not None:
            batch_size = input_context.get_per_replica_batch_size(batch_size)
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
            self._pairs_of_document, num_parallel_calls=tf.data.AUTOTUNE).unbatch()
        pairs = pairs.shuffle(shuffle_buffer_size, seed=seed,
                              reshuffle_each_iteration=is_training)
        groups = pairs.ragged_batch(PAIRS_PER_DRAW)
        examples = tf.data.Dataset.zip(groups, _seed_stream(seed, 1)).map(
            self._features_of_group, num_parallel_calls=tf.data.AUTOTUNE).unbatch()
        return examples.batch(batch_size, drop_remainder=drop_remainder).prefetch(
            tf.data.AUTOTUNE)
