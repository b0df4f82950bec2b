"""Read and write checkpoints in the original TF1 release's format.

A released model is a folder with `bert_model.ckpt.{index,data-*}`,
`bert_config.json` and `vocab.txt`; the checkpoint is a name-keyed V2
checkpoint with the variable names listed in docs/ORIGINAL_BEHAVIOUR.md. We read it
with `tf.train.load_checkpoint` and write it with `tf.raw_ops.SaveV2`
(eager, no graph mode), so the original code, HuggingFace's TF1 reader and
our own loader all read what we write.
"""

import dataclasses
import os
import re

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.atomic_files import copy_file, temporary_name
from bert_tf.checkpoints.name_map import encoder_names, tf1_variable_map

CHECKPOINT_BASENAME = "bert_model.ckpt"
# Optimizer slots and counters of the original's training runs: never model weights.
_TRAINING_SUFFIXES = ("/adam_m", "/adam_v")
_TRAINING_NAMES = ("global_step",)
# An encoder layer's tensors, in the original's names and in HuggingFace's.
_ENCODER_LAYER = re.compile(r"encoder[/.]layer[_.](\d+)[/.]")
# The name under which `tf.train.Checkpoint` stores its object graph.
_OBJECT_GRAPH_KEY = "_CHECKPOINTABLE_OBJECT_GRAPH"


class CheckpointError(ValueError):
    """A checkpoint that does not fit the model it is loaded into."""


# What reading a checkpoint with missing or damaged files raises (a checkpoint
# of another model raises ValueError or AssertionError instead).
READ_ERRORS = (tf.errors.OpError, IndexError)


@dataclasses.dataclass
class LoadReport:
    """What a load did: names restored, model names left as initialised, file names unused."""

    restored: list
    not_in_checkpoint: list
    unused: list


def resolve_checkpoint_prefix(path):
    """Returns the checkpoint prefix for a prefix, a `.index` file or a folder."""
    if path.endswith(".index"):
        path = path[: -len(".index")]
    if os.path.isdir(path):
        candidate = os.path.join(path, CHECKPOINT_BASENAME)
        if os.path.exists(candidate + ".index"):
            return candidate
        latest = tf.train.latest_checkpoint(path)
        if latest:
            return latest
        raise CheckpointError(f"{path}: folder holds no {CHECKPOINT_BASENAME}.index "
                              "nor a TensorFlow 'checkpoint' state file")
    if not os.path.exists(path + ".index"):
        raise CheckpointError(f"{path}: no checkpoint found ({path}.index does not exist)")
    return path


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


def warn_unused_layers(unused, restored, source):
    """Warns, in one line, of encoder layers a checkpoint holds and the model's encoder has not.

    A config with fewer `num_hidden_layers` than the checkpoint loads its
    first layers and drops the rest: on purpose when a smaller model starts
    from a bigger one's lower layers, by mistake when the config is the
    wrong one. Either way the user should read it, not find it among one
    log line per unused tensor. A model without encoder layers (a tagger
    on cached features) uses none of them, rightly.

    >>> warn_unused_layers(["bert/encoder/layer_4/output/dense/kernel",
    ...                     "encoder.layer.5.output.dense.bias", "cls/squad/output_bias"],
    ...                    ["bert/encoder/layer_3/output/dense/kernel"], "x")
    [4, 5]
    >>> warn_unused_layers(["bert/encoder/layer_4/output/dense/kernel"], ["lstm/kernel"], "x")
    []
    """
    if not any(map(_ENCODER_LAYER.search, restored)):
        return []
    layers = sorted({int(match.group(1)) for match in map(_ENCODER_LAYER.search, unused)
                     if match})
    if layers:
        logging.warning("%s: encoder layers %s of the checkpoint are not in the model, which "
                        "uses only the layers below them; is num_hidden_layers in "
                        "bert_config.json the one it was trained with?", source,
                        ", ".join(map(str, layers)))
    return layers


def _is_training_state(name):
    return name in _TRAINING_NAMES or name.endswith(_TRAINING_SUFFIXES)


_SHOWN_PROBLEMS = 3


def check_compatible(refs, shapes, source):
    """Raises one `CheckpointError`, one line, on shape mismatches and missing encoder names.

    The line counts them, names the first few, and says which config
    sizes differ where the word embeddings show it (a wrong
    bert_config.json is the usual cause); the log lists them all.

    Args:
        refs: our `{original name: WeightRef}`.
        shapes: the file's `{original name: shape}`.
        source: the file, named in the message.
    """
    problems = [f"{name}: checkpoint {tuple(shapes[name])}, model {ref.original_shape}"
                for name, ref in sorted(refs.items())
                if name in shapes and tuple(shapes[name]) != ref.original_shape]
    problems += [f"{name}: missing from the checkpoint"
                 for name in sorted(encoder_names(refs) - set(shapes))]
    if not problems:
        return
    for problem in problems:
        logging.info("%s: %s", source, problem)
    word = "bert/embeddings/word_embeddings"
    sizes = [f"{size}: checkpoint {had}, model {wanted}"
             for size, had, wanted in zip(("vocab_size", "hidden_size"), shapes.get(word, ()),
                                          refs[word].original_shape if word in refs else ())
             if had != wanted]
    hint = f" ({', '.join(sizes)}; is this the right bert_config.json?)" if sizes else ""
    more = (f"; and {len(problems) - _SHOWN_PROBLEMS} more"
            if len(problems) > _SHOWN_PROBLEMS else "")
    raise CheckpointError(f"{source}: checkpoint does not fit the model{hint}: "
                          f"{len(problems)} weights differ: "
                          f"{'; '.join(problems[:_SHOWN_PROBLEMS])}{more}")


# Float dtypes as TensorFlow and safetensors name them.
_FLOAT_TYPES = {"float16", "bfloat16", "float32", "float64", "F16", "BF16", "F32", "F64"}


def check_float_weights(dtypes, source):
    """Refuses weights stored as anything but floating point (assigning would cast them).

    Args:
        dtypes: `{original name: dtype name}` of the weights to restore, e.g.
            "float32", "bfloat16", or safetensors' "F16", "I32".
        source: the file, named in the message.
    """
    others = {name: dtype for name, dtype in sorted(dtypes.items())
              if dtype not in _FLOAT_TYPES}
    if others:
        name, dtype = next(iter(others.items()))
        raise CheckpointError(f"{source}: {len(others)} weights are not floating point, "
                              f"e.g. {name}: {dtype}; is it a model checkpoint?")


def assign_weights(refs, read_tensor, names):
    """Assigns `read_tensor(name)` (original layout) to each named variable."""
    for name in names:
        value = np.asarray(read_tensor(name))
        ref = refs[name]
        ref.variable.assign(value.T if ref.transposed else value)


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
    logging.info("%s: restored %d variables", prefix, len(report.restored))
    for name in report.not_in_checkpoint:
        logging.info("not in checkpoint, newly initialised: %s", name)
    for name in report.unused:
        logging.info("unused checkpoint variable: %s", name)
    warn_unused_layers(report.unused, report.restored, prefix)
    return report


def save_tf1_checkpoint(model, prefix):
    """Writes `model`'s variables under their original names at `prefix`.

    The files appear under their final names only once complete, so an
    interrupted save never leaves a half-written checkpoint in their place;
    a failed one removes its temporary files (`PREFIX.tmp-PID*`; those of a
    killed process are removed by `bert_tf.training.run_dir.remove_leftovers`).

    Returns:
        The prefix written.

    Raises:
        CheckpointError: when `model` has trainable variables that no name
            map covers (a layer of no known kind): they would be lost.
    """
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
    try:
        tf.raw_ops.SaveV2(prefix=temp, tensor_names=names, shape_and_slices=[""] * len(names),
                          tensors=tensors)
        for suffix in (".data-00000-of-00001", ".index"):  # index last: it makes it visible
            os.replace(temp + suffix, prefix + suffix)
    except BaseException:  # also Ctrl-C: no half-written files left behind
        for path in tf.io.gfile.glob(temp + "*"):
            tf.io.gfile.remove(path)
        raise
    return prefix


def _holds_config(path, config):
    """Whether `path` is a readable `bert_config.json` of `config`."""
    try:
        return os.path.isfile(path) and type(config).from_json_file(path) == config
    except ValueError:  # ConfigError: a damaged file, written anew
        return False


def _same_local_file(path, other):
    """Whether local `path` is the file `other` (a link to it included); a URL never is."""
    return "://" not in path and os.path.exists(other) and os.path.samefile(path, other)


def export_original(model, config, vocab_file, output_dir):
    """Writes a release-style folder: bert_model.ckpt.*, bert_config.json, vocab.txt.

    `vocab_file=None` (a model trained on records alone) writes no vocab.txt.
    """
    os.makedirs(output_dir, exist_ok=True)
    save_tf1_checkpoint(model, os.path.join(output_dir, CHECKPOINT_BASENAME))
    config_file = os.path.join(output_dir, "bert_config.json")
    if not _holds_config(config_file, config):  # the run's own input, maybe: left as it is
        config.to_json_file(config_file)
    target = os.path.join(output_dir, "vocab.txt")
    if vocab_file and not _same_local_file(vocab_file, target):
        copy_file(vocab_file, target)
    return output_dir
