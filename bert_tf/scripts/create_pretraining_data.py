r"""Makes masked-LM / next-sentence pretraining TFRecords (the original's tool).

    python create_pretraining_data.py --input_file=./sample_text.txt \
      --output_file=/tmp/tf_examples.tfrecord --vocab_file=$BERT_DIR/vocab.txt \
      --do_lower_case=True --max_seq_length=128 --max_predictions_per_seq=20 \
      --masked_lm_prob=0.15 --random_seed=12345 --dupe_factor=5

Input: one sentence per line, a blank line between documents; `--input_file`
takes a comma list of files or globs, `--output_file` a comma list of files
written round-robin. The flags and their defaults are the original's.

With `--num_workers=1` (the default) the records are the original tool's,
record for record, in the same order. `--num_workers=N` (N > 1) is the fast
mode for big corpora: input files are streamed in shards of about
`--shard_bytes` of text, N processes make the shards' instances, memory stays
bounded; records are deterministic per input, flags and shard size (not per
N), and follow the same distribution, but are not the original's.
"""

import dataclasses

from absl import flags

from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.errors import UsageError
from bert_tf.scripts import cli

FLAGS = flags.FLAGS
flags.DEFINE_string("input_file", None, "Text to learn from: a comma list of files or globs; "
                    "one sentence per line, a blank line between documents.")
flags.DEFINE_string("output_file", None, "TFRecord file(s) to write: a comma list, filled in "
                    "turn (record i goes to file i mod n).")
flags.DEFINE_string("vocab_file", None, "WordPiece vocabulary of the model to pretrain.")
flags.DEFINE_bool("do_lower_case", True, "Lower-case and strip accents: True for uncased "
                  "models, False for cased ones.")
flags.DEFINE_bool("do_whole_word_mask", False, "Mask all the pieces of a word together "
                  "instead of each WordPiece on its own.")
flags.DEFINE_integer("max_seq_length", 128, "Tokens per instance, [CLS] and [SEP]s included.")
flags.DEFINE_integer("max_predictions_per_seq", 20, "Most masked-LM targets per instance.")
flags.DEFINE_integer("random_seed", 12345, "Seed of every random choice.")
flags.DEFINE_integer("dupe_factor", 10, "Passes over the input, each with new masks and pairs.")
flags.DEFINE_float("masked_lm_prob", 0.15, "Share of the tokens to predict.")
flags.DEFINE_float("short_seq_prob", 0.1, "Chance that a document aims at a random length "
                   "shorter than max_seq_length.")
flags.DEFINE_integer("num_workers", 1, "1: the original's records exactly. N > 1: fast mode, "
                     "N processes over shards of the input (bounded memory).", lower_bound=1)
flags.DEFINE_integer("shard_bytes", None, "Fast mode: characters of sentence text per shard "
                     "(default 2**20); random next sentences and the shuffle stay within a shard.",
                     lower_bound=1)


def _options() -> PretrainingDataOptions:
    names = [field.name for field in dataclasses.fields(PretrainingDataOptions)]
    try:
        return PretrainingDataOptions(**{name: FLAGS[name].value for name in names})
    except ValueError as error:
        raise UsageError(f"--{error}") from None


def _create(output_files, options):
    # Imported here rather than at the top: fast mode's worker processes
    # re-import the main module, and these modules load TensorFlow, which
    # the workers do not need.
    from bert_tf.data.input_files import expand_input_patterns
    from bert_tf.data.pretraining_data import create_exact
    from bert_tf.data.sharded_pretraining_data import create_sharded

    try:
        input_files = expand_input_patterns(FLAGS.input_file)
    except ValueError as error:  # a glob that matches nothing: the command line is wrong
        raise UsageError(f"--input_file: {error}") from None
    if FLAGS.num_workers == 1:
        create_exact(input_files, output_files, FLAGS.vocab_file, options)
    else:
        shard_bytes = {} if FLAGS.shard_bytes is None else {"shard_bytes": FLAGS.shard_bytes}
        create_sharded(input_files, output_files, FLAGS.vocab_file, options, FLAGS.num_workers,
                       **shard_bytes)


def run():
    """Writes the records the flags ask for."""
    if FLAGS.num_workers == 1:
        cli.refuse_unused_flags(("shard_bytes",), "in fast mode (--num_workers=N, N > 1)")
    options = _options()
    output_files = [path.strip() for path in FLAGS.output_file.split(",") if path.strip()]
    if not output_files:
        raise UsageError(f"--output_file={FLAGS.output_file!r} names no file")
    _create(output_files, options)


def console_main():
    cli.run_main(run, "create_pretraining_data",
                 required=["input_file", "output_file", "vocab_file"])


if __name__ == "__main__":
    console_main()
