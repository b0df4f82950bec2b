r"""Classifies text with the SavedModel of a model that run_classifier.py fine-tuned.

    python classify_text.py --model_dir=/tmp/mrpc_output \
      --text="The cat sat on the mat." --text_b="A cat was sitting on a mat."

`--model_dir` is a `run_classifier.py` output folder (bert_model.ckpt,
bert_config.json, vocab.txt, labels.txt): on first use it is exported as a
classifier SavedModel (see docs/SERVING.md) to `<model_dir>/saved_model`
(or `--export_dir`), with the `--max_seq_length` and `--do_lower_case` it
was trained with (run.json) unless given, and the export is reused while
it is newer than the checkpoint and was made with the same settings.
`--export_dir` alone classifies with an existing export.
Prints the predicted label and the text (a pair: both, tab-separated; a
tab, line break or backslash in a text shown as `\t`, `\n`, `\r` or `\\`,
so that each result keeps its one line and its fields), then the
probability of each label (the score, for a regression model).
"""

import json
import os

import tensorflow as tf
import tensorflow_text  # noqa: F401  (registers the ops of the in-graph tokenizer)
from absl import flags, logging

from bert_tf import serving
from bert_tf.checkpoints import (CHECKPOINT_BASENAME, READ_ERRORS, CheckpointError,
                                 checkpoint_folder, config_beside)
from bert_tf.checkpoints.huggingface import (SAFETENSORS_NAME, SHARD_INDEX_NAME,
                                             safetensors_files)
from bert_tf.checkpoints.labels import LABELS_FILE
from bert_tf.config import BertConfig, ConfigError
from bert_tf.config_uses import require_segment_pairs
from bert_tf.errors import UsageError
from bert_tf.script_output import print_output
from bert_tf.scripts import cli
from bert_tf.scripts.trained_settings import settings
from bert_tf.tasks.glue_data import TASKS
from bert_tf.tasks.run_record import recorded_run

CACHE_NAME = "saved_model"
# What the export depends on in a run_classifier.py output folder (or a HuggingFace one).
_SOURCE_FILES = (CHECKPOINT_BASENAME + ".index", "bert_config.json", SAFETENSORS_NAME,
                 SHARD_INDEX_NAME, "config.json", "vocab.txt", LABELS_FILE)

FLAGS = flags.FLAGS
flags.DEFINE_string("model_dir", None, "Folder written by run_classifier.py --do_train.")
flags.DEFINE_string("export_dir", None, "Classifier SavedModel to use; with --model_dir, "
                    f"where to export it (default: <model_dir>/{CACHE_NAME}).")
flags.DEFINE_multi_string("text", None, "Text to classify (repeat for several).")
flags.DEFINE_multi_string("text_b", None, "Second text of each pair, for pair tasks.")
flags.DEFINE_integer("max_seq_length", 128, "Sequence length after WordPiece (export; "
                     "default: as trained, else 128).", lower_bound=3)
flags.DEFINE_bool("do_lower_case", None, "Lower-case the input (export; default: as trained, "
                  "else the vocabulary's casing).")


def load_classifier(model_dir=None, export_dir=None, max_seq_length=128, do_lower_case=True):
    """The loaded classifier SavedModel: `export_dir`, or `model_dir`'s (re)made export.

    Raises:
        ValueError, OSError: one line naming the folder or file at fault.
    """
    if model_dir is None:
        if export_dir is None or not os.path.exists(os.path.join(export_dir, "saved_model.pb")):
            raise FileNotFoundError(f"--export_dir={export_dir}: no saved_model.pb there; "
                                    "give --model_dir to export one")
        served = _load(export_dir)
        kind = _made_with(served).get("kind", b"").decode() or "unknown (no bert_tf metadata)"
        if kind != "classifier":
            raise ValueError(f"--export_dir={export_dir}: the SavedModel there is of kind "
                             f"{kind}, not classifier (export_savedmodel.py "
                             "--kind=classifier makes one)")
        return served
    export_dir_given = export_dir is not None
    # Beside the checkpoint: a folder named after a prefix would hide the checkpoint.
    export_dir = export_dir or os.path.join(checkpoint_folder(model_dir), CACHE_NAME)
    wanted = {"kind": b"classifier", "max_seq_length": max_seq_length,
              "do_lower_case": do_lower_case}
    if _newer_than_sources(export_dir, checkpoint_folder(model_dir)):
        try:
            served = _load(export_dir)
        except OSError:  # damaged: made again below
            served = None
        if served is not None and all(_made_with(served).get(key) == value
                                      for key, value in wanted.items()):
            return served
    try:
        serving.export("classifier", model_dir, export_dir, max_seq_length=max_seq_length,
                       do_lower_case=do_lower_case)
    except OSError as error:
        if export_dir_given:
            raise
        # A model folder a user may only read (a shared one, a read-only volume).
        raise OSError(f"{error}; give --export_dir=FOLDER to export the model elsewhere") from None
    return _load(export_dir)


def _load(export_dir):
    """The SavedModel in `export_dir`; one line naming it where it does not load."""
    try:
        return tf.saved_model.load(export_dir)
    except (ValueError, OSError, *READ_ERRORS) as error:  # READ_ERRORS: damaged variables
        reason = (getattr(error, "message", None) or str(error)).splitlines()[0]
        raise OSError(f"--export_dir={export_dir}: not a SavedModel that loads ({reason}); "
                      "export it again") from None


def _made_with(served):
    """The export's `metadata` signature as numpy values; {} for other SavedModels."""
    if "metadata" not in served.signatures:
        return {}
    return {key: value.numpy() for key, value in served.signatures["metadata"]().items()}


def _newer_than_sources(export_dir, model_dir):
    saved = os.path.join(export_dir, "saved_model.pb")
    if not os.path.exists(saved):
        return False
    sources = [os.path.join(model_dir, name) for name in _SOURCE_FILES]
    if os.path.exists(os.path.join(model_dir, SHARD_INDEX_NAME)):  # and the shards it names
        try:
            sources += safetensors_files(os.path.join(model_dir, SHARD_INDEX_NAME))
        except CheckpointError:  # exported again, which names what is wrong
            return False
    return all(os.path.getmtime(saved) > os.path.getmtime(path)
               for path in sources if os.path.exists(path))


def classify(served, texts, texts_b=None):
    """Runs the export on texts (or pairs); returns its outputs as numpy arrays."""
    if texts_b:
        outputs = served.signatures["pairs"](text_a=tf.constant(texts),
                                             text_b=tf.constant(texts_b))
    else:
        outputs = served.signatures["serving_default"](text=tf.constant(texts))
    return {name: value.numpy() for name, value in outputs.items()}


def _check_pairs_fit(config, source):
    """Refuses `--text_b` for a model with one token type (`config_uses.require_segment_pairs`)."""
    try:
        require_segment_pairs(config, source, "--text_b")
    except ConfigError as error:
        raise UsageError(str(error)) from None


def _warn_if_trained_on_single_texts(model_dir):
    """Warns where `run.json` names a GLUE task of single sentences (SST-2, CoLA): pairs
    read by such a model score something it never learned."""
    task = ((recorded_run(checkpoint_folder(model_dir)) or {}).get("task") or {}).get("task")
    if task in TASKS and TASKS[task].columns["train"].text_b is None:
        logging.warning("--text_b: the model in %s was fine-tuned on single sentences (task "
                        "%s); it scores pairs as it never learned to", model_dir, task)


def run():
    """Prints the predicted label and every label's probability for each text."""
    if FLAGS.text_b and len(FLAGS.text_b) != len(FLAGS.text):
        raise UsageError("give one --text_b for each --text")
    for name in ("text", "text_b"):
        for text in FLAGS[name].value or ():
            try:
                text.encode("utf-8")
            except UnicodeEncodeError:  # bytes the terminal's encoding could not decode
                raise UsageError(f"--{name}={ascii(text)} is not UTF-8 text") from None
    if not (FLAGS.model_dir or FLAGS.export_dir):
        raise UsageError("give --model_dir or --export_dir")
    if FLAGS.model_dir:
        if FLAGS.export_dir:  # where the export goes: refused as the runners refuse it
            cli.check_export_dir_flag(FLAGS.export_dir)
        if FLAGS.text_b:  # before the export is made
            _check_pairs_fit(config_beside(FLAGS.model_dir), f"--model_dir={FLAGS.model_dir}")
            _warn_if_trained_on_single_texts(FLAGS.model_dir)
        chosen = settings(FLAGS, FLAGS.model_dir, ("max_seq_length", "do_lower_case"),
                          kind="classifier")
        served = load_classifier(FLAGS.model_dir, FLAGS.export_dir, chosen["max_seq_length"],
                                 chosen["do_lower_case"])
    else:
        cli.refuse_unused_flags(("max_seq_length", "do_lower_case"), "with --model_dir "
                                "(an export holds its own)")
        served = load_classifier(export_dir=FLAGS.export_dir)
        if FLAGS.text_b:
            _check_pairs_fit(BertConfig.from_dict(json.loads(_made_with(served)["bert_config"])),
                             f"--export_dir={FLAGS.export_dir}")
    labels = [label.decode() for label in _made_with(served)["labels"]]
    outputs = classify(served, FLAGS.text, FLAGS.text_b)
    for index, text in enumerate(FLAGS.text):
        text = _escaped(text)
        if FLAGS.text_b:
            text = f"{text}\t{_escaped(FLAGS.text_b[index])}"
        if "score" in outputs:
            print_output(f"{outputs['score'][index]:.4f}\t{text}")
            continue
        ranked = sorted(zip(labels, outputs["probabilities"][index]), key=lambda p: -p[1])
        print_output(f"{ranked[0][0]}\t{text}")
        print_output("    " + "  ".join(f"{label}={p:.3f}" for label, p in ranked))


def _escaped(text):
    """`text` with the characters that would break its output line or field escaped."""
    return text.translate({ord("\\"): "\\\\", ord("\t"): "\\t", ord("\n"): "\\n",
                           ord("\r"): "\\r"})


def console_main():
    cli.run_main(run, "classify_text", required=["text"])


if __name__ == "__main__":
    console_main()
