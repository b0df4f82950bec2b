r"""Learns a WordPiece vocabulary (vocab.txt) from text files.

To pretrain BERT on a new language or domain, learn its vocabulary first:

    python learn_vocab.py --input_file='corpus/*.txt' --output_file=vocab.txt \
        --vocab_size=30522 --do_lower_case=True

The file has the released vocabularies' layout: [PAD], [unused0..98], [UNK],
[CLS], [SEP], [MASK], further [unused*] if asked, then the learned pieces
(see `bert_tf.data.vocab_learning`). Give its length as `vocab_size` in the
model's bert_config.json.
"""

from absl import flags, logging

from bert_tf.atomic_files import prepare_folder_for
from bert_tf.data import vocab_learning
from bert_tf.data.input_files import expand_input_patterns
from bert_tf.errors import UsageError
from bert_tf.output_paths import check_outputs_apart
from bert_tf.scripts import cli

FLAGS = flags.FLAGS

flags.DEFINE_string("input_file", None,
                    "Text files to learn from: comma-separated paths or globs.")
flags.DEFINE_string("output_file", None, "Where to write the vocabulary.")
flags.DEFINE_integer("vocab_size", 30522,
                     "Most entries in the vocabulary, reserved ones included.",
                     lower_bound=1)
flags.DEFINE_bool("do_lower_case", True,
                  "Lower-case and strip accents (an uncased vocabulary).")
flags.DEFINE_integer("num_unused", 99,
                     "[unused*] entries to reserve (994 in the released vocabularies).",
                     lower_bound=0)
flags.DEFINE_integer("min_count", 10,
                     "Lowest piece count the learner tries; lower it for small corpora.",
                     lower_bound=1)
flags.DEFINE_integer("max_unique_chars", 1000,
                     "Alphabet size; words with rarer characters are not learned from.",
                     lower_bound=1)


def run():
    """Learns the vocabulary and writes it."""
    try:
        files = expand_input_patterns(FLAGS.input_file)
    except ValueError as error:
        raise UsageError(f"--input_file: {error}") from None
    check_outputs_apart([FLAGS.output_file], {"input_file": files})
    prepare_folder_for(FLAGS.output_file)
    # Its UsageError (a --vocab_size too small) exits 2; bad input files exit 1.
    vocab = vocab_learning.learn_wordpiece_vocab(
        files, FLAGS.vocab_size, lower_case=FLAGS.do_lower_case,
        num_unused=FLAGS.num_unused, min_count=FLAGS.min_count,
        max_unique_chars=FLAGS.max_unique_chars)
    vocab_learning.write_vocab(vocab, FLAGS.output_file)
    logging.info("wrote %d tokens to %s", len(vocab), FLAGS.output_file)


def console_main():
    cli.run_main(run, "learn_vocab", required=["input_file", "output_file"])


if __name__ == "__main__":
    console_main()
