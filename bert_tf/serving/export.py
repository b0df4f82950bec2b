"""`export`: one self-contained SavedModel per task, from a checkpoint folder or a model.

The one call that runners and `export_savedmodel.py` make. What the export
is made with (casing, sequence length, labels, config, vocabulary) is stored
in it, so a client loads it with `tf.saved_model.load` (after `import
tensorflow_text`, whose ops the tokenizer uses) and passes nothing but text.
The graphs hold no XLA-compiled function unless `jit_compile` asks for one.
"""

import errno
import os
import tempfile

import tensorflow as tf
from absl import logging

from bert_tf.atomic_files import prepare_folder_for
from bert_tf.file_set import cannot_write, discard
from bert_tf.leftover_files import (is_set_aside, left_by_dead_writer, remove_left_behind,
                                    set_aside_name, temporary_name)
from bert_tf.modeling.xla_elementwise import without_xla
from bert_tf.serving import sources
from bert_tf.serving.classifier_export import ClassifierServing
from bert_tf.serving.encoder_export import EncoderServing
from bert_tf.serving.masked_lm_export import MaskedLMServing
from bert_tf.serving.mount_points import is_mount_point
from bert_tf.serving.multiple_choice_export import MultipleChoiceServing
from bert_tf.serving.ner_export import NerServing
from bert_tf.serving.span_qa_export import SpanQAServing
from bert_tf.tokenization import validate_case_matches_checkpoint

# kind -> (serving module, model from a source folder)
KINDS = {
    "encoder": (EncoderServing, sources.encoder_from),
    "masked_lm": (MaskedLMServing, sources.pretrainer_from),
    "classifier": (ClassifierServing, sources.classifier_from),
    "span_qa": (SpanQAServing, sources.span_model_from),
    "ner": (NerServing, sources.token_classifier_from),
    "multiple_choice": (MultipleChoiceServing, sources.choice_scorer_from),
}
# The kinds whose outputs are named by a label list (`labels.txt` of a folder).
_LABELED = ("classifier", "ner")


def export(kind, model_or_folder, export_dir, *, vocab_file=None, labels=None,
           max_seq_length=128, do_lower_case=True, top_k=5, span_options=None,
           jit_compile=False):
    """Writes a SavedModel that answers raw text for one kind of model.

    Args:
        kind: "encoder", "masked_lm", "classifier", "span_qa", "ner" or
            "multiple_choice" (see docs/SERVING.md for each one's signatures).
        model_or_folder: a checkpoint folder or prefix (ours, the original
            release's, or HuggingFace safetensors), or a built Keras model:
            for "encoder" any model containing a `BertEncoder`, for
            "masked_lm" a `BertPretrainer`, for "classifier" a model from
            encoder inputs to logits, for "span_qa" one from encoder inputs
            to start and end logits (`build_span_model`), for "ner" one
            from encoder inputs to per-token logits (`build_token_classifier`),
            for "multiple_choice" `build_multiple_choice_model`'s (or a
            scorer of single sequences).
        export_dir: a local folder; a SavedModel there (nothing but its
            entries) is replaced whole, through a link the folder it points
            to; any other non-empty folder is refused.
        vocab_file: the vocabulary; default: `vocab.txt` of the folder.
        labels: label names (classifier; BIO tags for "ner"); default:
            `labels.txt` of the folder.
        max_seq_length: length texts are packed (and truncated) to.
        do_lower_case: lower-case and strip accents (uncased models).
        top_k: tokens returned per mask ("masked_lm").
        span_options: "span_qa": a dict of `SpanOptions` fields
            (`doc_stride`, `max_query_length`, `n_best_size`,
            `max_answer_length`, `version_2_with_negative`,
            `null_score_diff_threshold`); the original's defaults otherwise.
        jit_compile: XLA-compile the model inside the export, on lengths
            rounded up to multiples of 16 (`text_module`): faster calls
            once each shape is compiled; TF Serving then needs
            `--xla_cpu_compilation_enabled`.

    Returns:
        `export_dir`.

    Raises:
        ValueError: unknown kind, missing vocab/labels for a model, a
            checkpoint that does not fit (`CheckpointError`).
        OSError: missing files, or a non-SavedModel folder at `export_dir`.

    Example:

    >>> import tempfile
    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling import BertEncoder
    >>> folder = tempfile.mkdtemp()
    >>> with open(f"{folder}/vocab.txt", "w") as f:
    ...     _ = f.write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\nhello\\n")
    >>> encoder = BertEncoder(BertConfig.named("tiny", vocab_size=5))
    >>> path = export("encoder", encoder, f"{folder}/served", vocab_file=f"{folder}/vocab.txt",
    ...               max_seq_length=16)
    >>> served = tf.saved_model.load(path)
    >>> served.signatures["serving_default"](tf.constant(["hello"]))["pooled_output"].shape
    TensorShape([1, 128])
    """
    if kind not in KINDS:
        raise ValueError(f"unknown export kind {kind!r}; choose one of {sorted(KINDS)}")
    serving_class, model_from_source = KINDS[kind]
    export_dir = os.fspath(export_dir)
    check_export_dir(export_dir)
    export_dir = os.path.realpath(export_dir)  # a link's folder is replaced, the link kept
    if isinstance(model_or_folder, (str, os.PathLike)):
        validate_case_matches_checkpoint(do_lower_case, os.fspath(model_or_folder))
        source = sources.read_source(
            model_or_folder, needs_labels=kind in _LABELED and labels is None,
            vocab_file=vocab_file)
        serving_class.check_config(source.config, os.fspath(model_or_folder))  # before loading
        model, vocab_file = model_from_source(source), source.vocab_file
        labels = labels if labels is not None else source.labels
    else:
        model = model_or_folder
        if vocab_file is None:
            raise ValueError("exporting a model needs its vocab_file")
        if kind == "encoder":
            model = sources.find_encoder(model)
    if kind in _LABELED and labels is None:
        raise ValueError(f"a {kind} export needs its label names")
    options = {"classifier": {"labels": labels}, "ner": {"labels": labels},
               "masked_lm": {"top_k": top_k}, "span_qa": span_options or {}}.get(kind, {})
    # Exports run where XLA may be off (TF Serving's default): no XLA-fused
    # element-wise work in their graphs, only what `jit_compile` asks for.
    with tempfile.TemporaryDirectory() as asset_dir, without_xla():
        module = serving_class(model, vocab_file, asset_dir, max_seq_length, do_lower_case,
                               jit_compile=jit_compile, **options)
        _save(module, export_dir)
    return export_dir


# What `tf.saved_model.save` writes in its folder: an export holding anything else
# (a run's folder, a user's files) is not replaced, since replacing deletes it all.
SAVED_MODEL_ENTRIES = {"saved_model.pb", "variables", "assets", "assets.extra",
                       "fingerprint.pb"}


def check_export_dir(export_dir):
    """Refuses, before any work, a folder an export cannot replace whole or cannot write.

    An export replaces nothing but nothing, an empty folder or a SavedModel
    (a folder of `SAVED_MODEL_ENTRIES` alone, `saved_model.pb` among them).
    Nor is it written under a checkpoint's prefix (`.../bert_model.ckpt`,
    the `--model_dir` it may be made from): a folder there would hide the
    checkpoint from every later reader of that prefix or its folder.
    The folder above it is made here, and must be writable: the export is
    written beside it first, and renamed into place (so `export_dir` is no
    mount point: that rename failed once the export was written, "Device or
    resource busy").

    Raises:
        FileExistsError: naming `export_dir` and what is in the way.
        OSError: "cannot write ...", the folder above it cannot be written,
            a mount point, or a URL: exports are written to a local folder.
    """
    if "://" in export_dir:
        raise OSError(f"{export_dir}: exports are written to a local folder; copy the "
                      "SavedModel there afterwards")
    if os.path.exists(f"{export_dir}.index"):
        raise FileExistsError(f"{export_dir}: a checkpoint's prefix ({export_dir}.index is "
                              "there); a folder of that name would hide the checkpoint")
    if os.path.exists(export_dir):
        if not os.path.isdir(export_dir):
            raise FileExistsError(f"{export_dir}: a file, not a folder; not overwriting it")
        entries = set(os.listdir(export_dir))
        others = sorted(entries - SAVED_MODEL_ENTRIES)
        if others:
            raise FileExistsError(f"{export_dir}: holds {', '.join(others[:3])}"
                                  f"{', ...' if len(others) > 3 else ''}, not only a "
                                  "SavedModel; not replacing it")
        if entries and "saved_model.pb" not in entries:
            raise FileExistsError(f"{export_dir}: exists and is not a SavedModel (no "
                                  "saved_model.pb); not replacing it")
        if is_mount_point(export_dir):  # a container's volume, say
            raise _mount_point_error(export_dir)
    prepare_folder_for(os.path.abspath(export_dir))


def _mount_point_error(export_dir):
    """The error of an export to a mount point, which the export's rename cannot move."""
    return OSError(f"{export_dir}: a mount point, which an export cannot replace (it renames "
                   "a whole folder into place); export to a folder inside it")


def _restore_set_aside(export_dir):
    """Puts back the export a killed writer renamed aside, where nothing took its place."""
    parent, name = os.path.split(export_dir)
    if os.path.exists(export_dir):
        return
    for sibling in sorted(os.listdir(parent)):
        if is_set_aside(sibling, name) and left_by_dead_writer(sibling):
            os.replace(os.path.join(parent, sibling), export_dir)
            logging.info("put back %s, set aside by an interrupted export", export_dir)
            return


def _save(module, export_dir):
    """Saves to a sibling folder, then swaps it into place (never half-written).

    The export it replaces is renamed aside first and deleted only once the
    new one is in place, so an interruption leaves one whole export or the
    other under `export_dir`. Staging and replaced folders of earlier
    exports whose process was killed (hundreds of MB for BERT-Base) are
    removed first; where one was killed between its two renames, the export
    it had set aside is put back first.

    Raises:
        OSError: "cannot write EXPORT_DIR: reason" (a full disk, a read-only folder,
            another export to the same folder swapped in first).
    """
    _restore_set_aside(export_dir)
    remove_left_behind(export_dir)
    staging = temporary_name(export_dir)
    replaced = set_aside_name(export_dir)
    try:
        absl_level = logging.get_absl_logger().level
        try:
            tf.saved_model.save(module, staging, signatures=module.signatures())
        except (OSError, tf.errors.OpError) as error:
            raise cannot_write(export_dir, error) from None
        finally:
            # TensorFlow's saver silences absl while it walks the objects, then sets the
            # verbosity it read back, explicitly: where absl's flags were never parsed (a
            # notebook, a library caller) absl stayed at WARNING, and every later INFO line
            # of ours (progress, results) vanished.
            logging.get_absl_logger().setLevel(absl_level)
        if os.path.exists(export_dir):
            try:
                os.replace(export_dir, replaced)
            except OSError as error:
                if error.errno == errno.EBUSY:
                    raise _mount_point_error(export_dir) from None
                raise cannot_write(export_dir, error) from None
        try:
            os.replace(staging, export_dir)
        except BaseException as error:
            if os.path.exists(replaced) and not os.path.exists(export_dir):
                os.replace(replaced, export_dir)
            if isinstance(error, OSError) and error.errno in (errno.ENOTEMPTY, errno.EEXIST):
                raise OSError(f"cannot write {export_dir}: another export put its SavedModel "
                              "there while this one was saving; that one is kept, this one "
                              "is discarded") from None
            raise
    finally:
        discard(staging)
        discard(replaced)
