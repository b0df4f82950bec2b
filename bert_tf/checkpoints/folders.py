"""Which model a folder means where one is given in place of a file, or why none.

`--init_checkpoint` (and the exporters' `--model_dir`) may name a folder.
A folder may hold:

- `bert_model.ckpt`: an original release, or the model a run of ours
  exported when its training finished;
- HuggingFace weights: `model.safetensors`, a sharded save's
  `model.safetensors.index.json`, or a `pytorch_model.bin` (to be refused
  by name);
- numbered training checkpoints: our trainer's `ckpt-N` (object-based, for
  resuming) and the original code's `model.ckpt-N` (its Estimator runs).

`model_in_folder` reads a folder so:

1. `bert_model.ckpt` beside our own `ckpt-N` is the model: a run of ours
   exported it from them when it finished (and refuses to train into a
   folder holding a model it did not write).
2. Two models from different sources are refused, naming both, so that
   the path names one: HuggingFace weights beside any TF checkpoint, or
   `bert_model.ckpt` beside the original code's `model.ckpt-N` (a run of
   the original code given the release folder as its output folder, or
   files copied together). Taking either would run one of them without
   a word.
3. Otherwise the newest numbered checkpoint by its step N, ours before the
   original code's (a run of ours that went on from an original run in
   its folder wrote them later): the files themselves, not TensorFlow's
   `checkpoint` state file, which may be missing or name deleted or older
   files (resuming, `bert_tf.training.resume`, reads them so too).
4. A checkpoint of another name is found through the state file alone.
"""

import os
import re

import tensorflow as tf

from bert_tf.checkpoints.huggingface import SAFETENSORS_NAME, SHARD_INDEX_NAME
from bert_tf.checkpoints.load_rules import CheckpointError

CHECKPOINT_BASENAME = "bert_model.ckpt"
# What `tf.train.CheckpointManager` calls our trainer's checkpoints: ckpt-N.
TRAINING_CHECKPOINT = "ckpt"
# What the original code's Estimator calls its checkpoints: model.ckpt-N.
ORIGINAL_CHECKPOINT = "model.ckpt"
# HuggingFace's weight files in a model folder, in the order they are read.
HUGGINGFACE_FILES = (SAFETENSORS_NAME, SHARD_INDEX_NAME, "pytorch_model.bin")


def numbered_checkpoints(folder, name):
    """`[(N, prefix)]` of the checkpoints `name-N` in `folder`, newest (highest N) first.

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> for step in (9, 10, 8):
    ...     _ = open(os.path.join(folder, f"model.ckpt-{step}.index"), "w")
    >>> [(n, os.path.basename(p)) for n, p in numbered_checkpoints(folder, ORIGINAL_CHECKPOINT)]
    [(10, 'model.ckpt-10'), (9, 'model.ckpt-9'), (8, 'model.ckpt-8')]
    >>> numbered_checkpoints(folder, TRAINING_CHECKPOINT)
    []
    """
    if not tf.io.gfile.isdir(folder):
        return []
    pattern = re.compile(rf"^{re.escape(name)}-(\d+)\.index$")
    found = [(int(match.group(1)), os.path.join(folder, entry[: -len(".index")]))
             for entry in tf.io.gfile.listdir(folder) if (match := pattern.match(entry))]
    return sorted(found, reverse=True)


def model_in_folder(folder):
    """The weights `folder` means (module docstring): a HuggingFace file or a TF prefix.

    Returns:
        The path of a `HUGGINGFACE_FILES` file or a checkpoint prefix, or
        None where the folder holds no model of a kind listed above.

    Raises:
        CheckpointError: the folder holds two models; the message names both.
    """
    release = os.path.join(folder, CHECKPOINT_BASENAME)
    release = release if tf.io.gfile.exists(release + ".index") else None
    huggingface = next((os.path.join(folder, name) for name in HUGGINGFACE_FILES
                        if tf.io.gfile.exists(os.path.join(folder, name))), None)
    ours = numbered_checkpoints(folder, TRAINING_CHECKPOINT)
    original = numbered_checkpoints(folder, ORIGINAL_CHECKPOINT)
    numbered = ours or original
    if huggingface and (release or numbered):
        _refuse_two(folder, release or numbered[0][1], huggingface, numbered)
    if release and original:
        _refuse_two(folder, release, original[0][1], original)
    if huggingface or release:
        return huggingface or release
    if numbered:
        return numbered[0][1]
    return tf.train.latest_checkpoint(folder)


def _refuse_two(folder, first, second, numbered):
    """Raises the one line that names the two models in `folder` (`numbered`: the
    `numbered_checkpoints` one of them is the newest of)."""
    names = [os.path.basename(path) for path in (first, second)]
    others = (f"; {os.path.basename(numbered[0][1])} is the newest of {len(numbered)} numbered "
              "checkpoints" if len(numbered) > 1 and numbered[0][1] in (first, second) else "")
    raise CheckpointError(f"{folder}: holds both {names[0]} and {names[1]}; name the one to use "
                          f"({first} or {second}){others}")
