"""One entry point that restores weights from any checkpoint format we read.

`--init_checkpoint` in every runner may name an original TF1 checkpoint
(prefix, `.index` or release folder) or a
HuggingFace safetensors file or folder; `restore` tells them apart (which
model a folder means: `folders.model_in_folder`).
"""

import os

import tensorflow as tf
from absl import logging

from bert_tf.checkpoints.folders import HUGGINGFACE_FILES, model_in_folder
from bert_tf.checkpoints.huggingface import (SHARD_INDEX_NAME, load_hf_safetensors,
                                             safetensors_files, weights_file)
from bert_tf.checkpoints.load_rules import CheckpointError
from bert_tf.checkpoints.tf1 import load_tf1_checkpoint, resolve_checkpoint_prefix
from bert_tf.config import REQUIRED_FIELDS, BertConfig
from bert_tf.file_digests import file_sha256


def is_huggingface(path):
    """True for HuggingFace weights: a `.safetensors` file, a shard index, or a folder of them.

    A folder with only a `pytorch_model.bin` counts too (to be refused by name).

    Raises:
        CheckpointError: a folder holding HuggingFace weights and a TF
            checkpoint, or two TF models (`folders.model_in_folder`): the
            path must say which.
    """
    if not os.path.isdir(path):
        return path.endswith((".safetensors", SHARD_INDEX_NAME))
    found = model_in_folder(path)
    return found is not None and os.path.basename(found) in HUGGINGFACE_FILES


def checkpoint_folder(path):
    """The folder of a checkpoint given as a prefix, an `.index` file or a folder (or URL).

    >>> checkpoint_folder("models/uncased_L-12_H-768_A-12/bert_model.ckpt")
    'models/uncased_L-12_H-768_A-12'
    """
    return path if tf.io.gfile.isdir(path) else os.path.dirname(path)


def restore(model, path):
    """Loads weights into `model` from `path`, whichever format it is in.

    Returns:
        The `LoadReport` of the format's loader.
    """
    if is_huggingface(path):
        return load_hf_safetensors(model, path)
    return load_tf1_checkpoint(model, path)


def weights_identity(path):
    """What the weights at `path` are, by their content: the same files give the same
    string wherever they lie, and other weights at the same path another one.

    A multi-worker run compares its workers' start weights by it (each host
    may keep them elsewhere), as `run.json` does a resumed run's, and NER's
    feature caches are keyed by it.

    * A TF1 checkpoint (a release's `bert_model.ckpt`, the original's
      `model.ckpt-N`, our `ckpt-N`): the SHA-256 of its `.index`, which
      holds every tensor's name, dtype, shape, place in the data files and
      CRC32C of its bytes: kilobytes, whatever the model's size.
    * HuggingFace safetensors, one file or shards: the SHA-256 of each file,
      shards in name order (`file_sha256`). Nothing inside holds a checksum,
      and the header alone (names, dtypes, shapes, offsets) is the same for
      every fine-tuning of one architecture; so the whole model is read,
      0.35 s for BERT-Base's 440 MB, which the load then reads again from
      the page cache. Size and modification time would differ for the same
      file copied to another host.
    * A folder with only `pytorch_model.bin`: refused, as by `restore`.

    Raises:
        CheckpointError: where `restore` would find no weights at `path`.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "model.safetensors")
    >>> _ = open(path, "wb").write(b"weights")
    >>> weights_identity(path) == "safetensors sha256 " + file_sha256(path)
    True
    """
    if is_huggingface(path):
        return "safetensors sha256 " + " ".join(
            file_sha256(file) for file in safetensors_files(weights_file(path)))
    return "index sha256 " + file_sha256(resolve_checkpoint_prefix(path) + ".index")


def config_beside(path):
    """The `BertConfig` stored beside a checkpoint (`bert_config.json` or HF `config.json`).

    Where a folder holds both, each kind of weights reads its own (HuggingFace
    weights `config.json`, a TF checkpoint `bert_config.json`), with a warning
    if the other describes another model: one of them is stale or misplaced.

    Raises:
        CheckpointError: if the checkpoint's folder has neither file.
    """
    if "://" not in path and not (os.path.exists(path) or os.path.exists(path + ".index")):
        raise CheckpointError(f"{path}: not found")
    folder = checkpoint_folder(path) or "."
    original = os.path.join(folder, "bert_config.json")
    huggingface = os.path.join(folder, "config.json")
    if not (os.path.exists(original) or os.path.exists(huggingface)):
        raise CheckpointError(f"{folder}: neither bert_config.json nor config.json found; "
                              "pass --bert_config_file")
    hf = os.path.exists(huggingface) and ("://" not in path and is_huggingface(path)
                                          or not os.path.exists(original))
    read, other = (huggingface, original) if hf else (original, huggingface)
    config = BertConfig.from_json_file(read, huggingface=hf)
    if os.path.exists(other):
        _warn_if_other_model(config, read, other, huggingface=not hf)
    return config


def _warn_if_other_model(config, path, other_path, huggingface):
    """Warns where the other config file beside a checkpoint gives other sizes.

    `hidden_act` is left out: HuggingFace's "gelu" is another function than
    the original's, so a model converted from one to the other reads so.
    """
    try:
        other = BertConfig.from_json_file(other_path, huggingface=huggingface)
    except ValueError:  # not a config of a BERT model: nothing to compare
        return
    changes = config_changes(config, other, os.path.basename(other_path),
                             [name for name in REQUIRED_FIELDS if name != "hidden_act"])
    if changes:
        logging.warning("%s is read, and %s beside it describes another model: %s; is one of "
                        "them left from another model?", path, os.path.basename(other_path),
                        ", ".join(changes))


def config_changes(config, other, other_name, fields=REQUIRED_FIELDS):
    """`["name=value (other_name: its value)"]` for each of `fields` where the configs differ.

    >>> tiny, mini = BertConfig.named("tiny", vocab_size=9), BertConfig.named("mini", vocab_size=9)
    >>> config_changes(tiny, mini, "config.json", ["vocab_size", "num_hidden_layers"])
    ['num_hidden_layers=2 (config.json: 4)']
    """
    return [f"{name}={getattr(config, name)!r} ({other_name}: {getattr(other, name)!r})"
            for name in fields if getattr(config, name) != getattr(other, name)]


def resolve_config(bert_config_file=None, init_checkpoint=None):
    """The config a runner should build: `--bert_config_file`, else the checkpoint's own.

    Raises:
        ValueError: naming the flags when neither gives a config.
    """
    if bert_config_file:
        return BertConfig.from_json_file(bert_config_file)
    if init_checkpoint:
        return config_beside(init_checkpoint)
    raise ValueError("pass --bert_config_file, or an --init_checkpoint whose folder "
                     "holds bert_config.json or config.json")
