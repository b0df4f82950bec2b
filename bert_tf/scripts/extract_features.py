r"""Extracts per-token features from chosen BERT layers (the original's extract_features.py).

    python extract_features.py --input_file=input.txt --output_file=out.jsonl \
      --vocab_file=$BERT_DIR/vocab.txt --bert_config_file=$BERT_DIR/bert_config.json \
      --init_checkpoint=$BERT_DIR/bert_model.ckpt --layers=-1,-2,-3,-4 \
      --max_seq_length=128 --batch_size=8

`--init_checkpoint` may also be a HuggingFace folder with model.safetensors;
`--output_format=npz` writes one compact float32 file instead of JSON, and
`--concat_layers` writes the chosen layers concatenated per token (the
paper's feature-based input: the last four layers).

A left-to-right model (`"causal": true` in its bert_config.json, from
`run_pretraining.py --causal`) is run left to right, as it was pretrained:
each position sees itself and the positions before it only. Remove the key to
use it with attention both ways.
"""

import os

from absl import flags, logging

from bert_tf.atomic_files import prepare_folder_for
from bert_tf.checkpoints import checkpoint_folder, restore
from bert_tf.data.input_files import check_text_file
from bert_tf.errors import UsageError
from bert_tf.modeling import BertEncoder
from bert_tf.output_paths import check_outputs_apart
from bert_tf.scripts import cli, runner_flags
from bert_tf.tasks.feature_extraction import (LayerFeatures, check_pairs_fit, extract_features,
                                              read_examples, resolve_layer_indexes)
from bert_tf.tasks.feature_writers import WRITERS
from bert_tf.tokenization.full_tokenizer import FullTokenizer
from bert_tf.work_progress import WorkProgress

FLAGS = flags.FLAGS
runner_flags.define_model_flags()
flags.DEFINE_string("input_file", None, "Text, one example per line; pairs as `A ||| B`.")
flags.DEFINE_string("output_file", None, "Where to write the features.")
flags.DEFINE_string("layers", "-1,-2,-3,-4", "Comma list of layer indexes (-1 = last).")
flags.DEFINE_integer("batch_size", 32, "Examples per forward pass.", lower_bound=1)
flags.DEFINE_enum("output_format", "jsonl", sorted(WRITERS), "jsonl: the original's JSON "
                  "lines; npz: one compact float32 numpy archive.")
flags.DEFINE_bool("concat_layers", False, "Write the chosen layers concatenated per token.")
flags.DEFINE_bool("jit_compile", None, "XLA-compile the forward pass (default: where it is "
                  "faster: always on GPU/TPU; on a CPU up to hidden size 256, but not on CPUs "
                  "with AMX).")
# The original's device flags, accepted so its command lines run: the device is chosen by
# TensorFlow (a TPU is refused), and the embedding lookup is always a gather.
flags.DEFINE_bool("use_tpu", False, "Accepted for the original's command lines.")
flags.DEFINE_string("master", "", "Accepted for the original's command lines (empty).")
flags.DEFINE_integer("num_tpu_cores", 8, "Accepted for the original's command lines.")
flags.DEFINE_bool("use_one_hot_embeddings", False, "Accepted for the original's command lines.")


def run():
    """Builds the encoder, extracts and writes every example; returns the count."""
    cli.refuse_unused_flags(["use_tpu", "master"], "to the runners: extract_features runs on "
                            "the CPU or GPU TensorFlow picks, not on a TPU")
    if not os.path.exists(FLAGS.input_file):
        raise UsageError(f"--input_file={FLAGS.input_file}: file not found")
    check_text_file(FLAGS.input_file)
    model_files = runner_flags.model_files(FLAGS)
    check_pairs_fit(FLAGS.input_file, model_files)
    read_files = {"input_file": [FLAGS.input_file], "vocab_file": [model_files.vocab_file]}
    if FLAGS.bert_config_file:
        read_files["bert_config_file"] = [FLAGS.bert_config_file]
    if FLAGS.init_checkpoint:  # its weights, config and whatever else lies beside them
        folder = checkpoint_folder(FLAGS.init_checkpoint) or "."
        if os.path.isdir(folder):
            read_files["init_checkpoint"] = [os.path.join(folder, name)
                                             for name in os.listdir(folder)]
    check_outputs_apart([FLAGS.output_file], read_files)
    config = model_files.config
    layer_indexes = resolve_layer_indexes(FLAGS.layers, config.num_hidden_layers)
    prepare_folder_for(FLAGS.output_file)  # once the flags are checked: no folder otherwise
    # Made before the model loads, so that a name its format refuses fails at once; an
    # error while loading removes its temporary file.
    with WRITERS[FLAGS.output_format](FLAGS.output_file, layer_indexes,
                                      concat_layers=FLAGS.concat_layers) as writer:
        tokenizer = FullTokenizer(model_files.vocab_file, do_lower_case=FLAGS.do_lower_case)
        encoder = BertEncoder(config)
        if FLAGS.init_checkpoint:
            restore(encoder, FLAGS.init_checkpoint)
        else:
            logging.warning("no --init_checkpoint: features of a randomly initialised model")
        layer_features = LayerFeatures(encoder, layer_indexes, jit_compile=FLAGS.jit_compile)
        progress = WorkProgress(f"{FLAGS.output_file}: extracting features", unit="examples")
        for example, tokens, features in extract_features(
                read_examples(FLAGS.input_file), tokenizer, layer_features,
                FLAGS.max_seq_length, FLAGS.batch_size):
            writer.write(example.unique_id, tokens, features)
            progress.advance()
    progress.close()
    return progress.done


def console_main():
    cli.run_main(run, "extract_features", required=["input_file", "output_file"])


if __name__ == "__main__":
    console_main()
