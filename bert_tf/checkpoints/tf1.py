"""Read and write checkpoints in the original TF1 release's format.

A released model is a folder with `bert_model.ckpt.{index,data-*}`,
`bert_config.json` and `vocab.txt`; the checkpoint is a name-keyed V2
checkpoint with the variable names listed in docs/ORIGINAL_BEHAVIOUR.md. We read it
with `tf.train.load_checkpoint` and write it with `tf.raw_ops.SaveV2`
(eager, no graph mode), so the original code, HuggingFace's TF1 reader and
our own loader all read what we write.
"""

import os
import re

import tensorflow as tf

from bert_tf.file_set import FileSet, cannot_write
from bert_tf.leftover_files import temporary_name
from bert_tf.checkpoints.folders import CHECKPOINT_BASENAME, HUGGINGFACE_FILES, model_in_folder
from bert_tf.checkpoints.labels import LABELS_FILE, holds_labels, labels_text
from bert_tf.checkpoints.load_rules import (CheckpointError, LoadReport, assign_weights,
                                            check_compatible, check_float_weights)
from bert_tf.checkpoints.name_map import tf1_variable_map

# Optimizer slots and counters of the original's training runs: never model weights.
_TRAINING_SUFFIXES = ("/adam_m", "/adam_v")
_TRAINING_NAMES = ("global_step",)
# A checkpoint's own files, named where its prefix is meant (shell completion adds them).
_CHECKPOINT_FILE = re.compile(r"\.(index|meta|data-\d{5}-of-\d{5})$")
# Weights of other stacks: (file name endings, what they are).
_OTHER_FORMATS = (
    (("saved_model.pb", "saved_model.pbtxt"), "a SavedModel (an export for serving; pass "
                                              "the checkpoint it was exported from)"),
    (("tf_model.h5", "flax_model.msgpack"), "HuggingFace's TensorFlow or Flax weights "
                                             "(save the model again with save_pretrained, "
                                             "which writes model.safetensors)"),
    ((".keras", ".h5"), "a Keras file (keras-hub presets' model.weights.h5 included)"),
)
# The name under which `tf.train.Checkpoint` stores its object graph.
_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"

# What reading a checkpoint with missing or damaged files raises (a checkpoint
# of another model raises ValueError or AssertionError instead).
READ_ERRORS = (tf.errors.OpError, IndexError)


def resolve_checkpoint_prefix(path):
    """Returns the checkpoint prefix for a prefix, one of its files or a folder.

    Which checkpoint a folder means, and which folders are refused as
    holding two models, is `folders.model_in_folder`'s rule.

    >>> resolve_checkpoint_prefix("no/such/bert_model.ckpt.data-00000-of-00001")
    Traceback (most recent call last):
    ...
    bert_tf.checkpoints.load_rules.CheckpointError: no/such/bert_model.ckpt: no checkpoint
    found (no/such/bert_model.ckpt.index does not exist)
    """
    path = _CHECKPOINT_FILE.sub("", path)
    if os.path.isdir(path):
        found = model_in_folder(path)
        if found and os.path.basename(found) not in HUGGINGFACE_FILES:
            return found
        raise CheckpointError(f"{path}: folder holds no {CHECKPOINT_BASENAME}.index, no "
                              "numbered checkpoint (ckpt-N, model.ckpt-N) nor a TensorFlow "
                              f"'checkpoint' state file{_other_format(path)}")
    if not os.path.exists(path + ".index"):
        raise CheckpointError(f"{path}: no checkpoint found ({path}.index does not "
                              f"exist){_other_format(path)}")
    return path


def _other_format(path):
    """What else a file or folder given as a checkpoint is, and what to pass: "; ..." or ""."""
    names = os.listdir(path) if os.path.isdir(path) else [os.path.basename(path)]
    for files, what in _OTHER_FORMATS:
        found = [name for name in names if name.endswith(files)]
        if found:
            return (f"; {found[0]} is {what}, which bert_tf does not read: pass an original "
                    "TF1 checkpoint or HuggingFace safetensors")
    return ""


def read_checkpoint(prefix):
    """TensorFlow's reader of the checkpoint at `prefix`, or one error naming it.

    Raises:
        CheckpointError: the `.index` file is damaged or incomplete (an
            interrupted copy, say), which TensorFlow reports as "not an
            sstable (bad magic number)".
    """
    try:
        return tf.train.load_checkpoint(prefix)
    except READ_ERRORS as error:
        raise CheckpointError(
            f"{prefix}.index: unreadable ({str(error).splitlines()[0]}); the file is damaged "
            "or incomplete (an interrupted copy?)") from None


def is_training_checkpoint(names):
    """True for what `tf.train.Checkpoint` writes (a run's resumable `ckpt-N`), by its names."""
    return _OBJECT_GRAPH_KEY in names


def _is_training_state(name):
    return name in _TRAINING_NAMES or name.endswith(_TRAINING_SUFFIXES)


def load_tf1_checkpoint(model, path):
    """Restores every variable of `model` that the original checkpoint at `path` holds.

    Encoder variables must all be present with the right shapes; head
    variables absent from the file (a new task's classifier, say) keep their
    initial values. What was restored, left alone and unused is logged and
    returned.

    Args:
        model: a built Keras model or layer containing our encoder and/or heads.
        path: checkpoint prefix (`.../bert_model.ckpt`), its `.index`, or a folder.

    Returns:
        A `LoadReport`.

    Raises:
        CheckpointError: naming the file and every offending variable.
    """
    prefix = resolve_checkpoint_prefix(path)
    reader = read_checkpoint(prefix)
    shapes = reader.get_variable_to_shape_map()
    if is_training_checkpoint(shapes):
        raise CheckpointError(
            f"{prefix}: an object-based checkpoint, such as a run's ckpt-N (for resuming), "
            "not a model in the original's layout; pass the bert_model.ckpt that a runner "
            "writes beside it when training finishes")
    refs = tf1_variable_map(model)
    check_compatible(refs, shapes, prefix)
    restored = sorted(set(refs) & set(shapes))
    dtypes = reader.get_variable_to_dtype_map()
    check_float_weights({name: dtypes[name].name for name in restored}, prefix)

    def read_tensor(name):
        try:
            return reader.get_tensor(name)
        except READ_ERRORS as error:
            raise CheckpointError(
                f"{prefix}: cannot read {name} ({str(error).splitlines()[0]}); its data file "
                "is damaged or incomplete (an interrupted copy?)") from None

    assign_weights(refs, read_tensor, restored)
    report = LoadReport(
        restored=restored,
        not_in_checkpoint=sorted(set(refs) - set(shapes)),
        unused=sorted(n for n in set(shapes) - set(refs) if not _is_training_state(n)))
    report.log(prefix, "variable")
    return report


def save_tf1_checkpoint(model, prefix):
    """Writes `model`'s variables under their original names at `prefix`.

    The checkpoint's `.index` and `.data` files are one `FileSet`: they
    appear under their final names only once both are complete (the index
    last), so an interrupted save never leaves a half-written checkpoint, nor
    a new data file beside an earlier index, in their place; a failed one
    removes its temporary files (`PREFIX.tmp-PID*`; those of a killed
    process are removed by `bert_tf.training.run_dir.remove_leftovers`).

    Returns:
        The prefix written.

    Raises:
        CheckpointError: when `model` has trainable variables that no name
            map covers (a layer of no known kind): they would be lost.
        OSError: "cannot write PREFIX: reason" (a full disk, a read-only folder).
    """
    with FileSet() as files:
        _add_checkpoint(files, model, prefix)
    return prefix


def _add_checkpoint(files, model, prefix):
    """Writes the checkpoint of `model` at `prefix` as two members of `files`, index first."""
    refs = tf1_variable_map(model)
    mapped = {id(ref.variable) for ref in refs.values()}
    unnamed = sorted(v.path for v in model.trainable_variables if id(v) not in mapped)
    if unnamed:
        raise CheckpointError(
            f"{prefix}: {len(unnamed)} trainable variables have no name in the original "
            f"checkpoint layout and would be lost: {', '.join(unnamed)} (map their layer in "
            "bert_tf/checkpoints/name_map.py)")
    names = sorted(refs)
    tensors = []
    for name in names:
        value = refs[name].variable.numpy()
        tensors.append(value.T if refs[name].transposed else value)
    directory = os.path.dirname(os.path.abspath(prefix))
    os.makedirs(directory, exist_ok=True)
    temp = temporary_name(prefix)
    for suffix in (".index", ".data-00000-of-00001"):  # the index makes it visible: first
        files.add(prefix + suffix, temp + suffix)
    try:
        tf.raw_ops.SaveV2(prefix=temp, tensor_names=names, shape_and_slices=[""] * len(names),
                          tensors=tensors)
    except BaseException as error:  # also Ctrl-C: no half-written files left behind
        for path in tf.io.gfile.glob(temp + "*"):  # SaveV2's own partial files too
            tf.io.gfile.remove(path)
        if isinstance(error, (OSError, tf.errors.OpError)):
            raise cannot_write(prefix, error) from None
        raise


def _holds_config(path, config):
    """Whether `path` is a readable `bert_config.json` of `config`."""
    try:
        return os.path.isfile(path) and type(config).from_json_file(path) == config
    except ValueError:  # ConfigError: a damaged file, written anew
        return False


def _same_local_file(path, other):
    """Whether local `path` is the file `other` (a link to it included); a URL never is."""
    return "://" not in path and os.path.exists(other) and os.path.samefile(path, other)


def export_original(model, config, vocab_file, output_dir, labels=None):
    """Writes a release-style folder: bert_model.ckpt.*, bert_config.json, vocab.txt.

    `vocab_file=None` (a model trained on records alone) writes no vocab.txt;
    `labels` (a classifier's or tagger's class names) writes `labels.txt`.
    The files are one `FileSet`, replaced all or none: a failure on any
    (a full disk on the vocabulary) leaves an earlier export there whole,
    never new weights beside another model's vocabulary or labels. A
    config, vocabulary or labels file already there with the same content
    is left as it is (it may be the run's own input).
    """
    os.makedirs(output_dir, exist_ok=True)
    with FileSet() as files:
        _add_checkpoint(files, model, os.path.join(output_dir, CHECKPOINT_BASENAME))
        config_file = os.path.join(output_dir, "bert_config.json")
        if not _holds_config(config_file, config):
            files.write_text(config_file, config.to_json_string())
        target = os.path.join(output_dir, "vocab.txt")
        if vocab_file and not _same_local_file(vocab_file, target):
            files.copy_file(vocab_file, target)
        labels_file = os.path.join(output_dir, LABELS_FILE)
        if labels is not None and not holds_labels(labels_file, labels):
            files.write_text(labels_file, labels_text(labels))
    return output_dir
