"""Import HuggingFace `BertModel` / `BertFor*` weights from safetensors.

HuggingFace names are a mechanical rewrite of the original's
(`bert/encoder/layer_3/attention/self/query/kernel` ->
`encoder.layer.3.attention.self.query.weight`) with PyTorch linear weights
stored `[out, in]`, so the import reuses the original-name map and
transposes dense kernels. Only safetensors are read: a PyTorch `.bin` is a
pickle, and unpickling a downloaded file can run arbitrary code. A sharded
save (`model.safetensors.index.json` naming `model-0000N-of-0000M.safetensors`,
what `save_pretrained(max_shard_size=...)` writes) reads as one file.
"""

import contextlib
import json
import os
import re

import numpy as np
from safetensors import SafetensorError, safe_open

from bert_tf.checkpoints.load_rules import (CheckpointError, LoadReport, assign_weights,
                                            check_compatible, check_float_weights)
from bert_tf.checkpoints.name_map import tf1_variable_map

SAFETENSORS_NAME = "model.safetensors"
SHARD_INDEX_NAME = "model.safetensors.index.json"
# The masked-LM head's output layer, where a model was saved with its own (untied).
_DECODER = "cls.predictions.decoder.weight"
_WORD_EMBEDDINGS = "bert/embeddings/word_embeddings"
# Buffers that some exports store beside the weights.
_BUFFERS = ("embeddings.position_ids",)

_HEAD_NAMES = {
    "cls/predictions/output_bias": "cls.predictions.bias",
    "cls/seq_relationship/output_weights": "cls.seq_relationship.weight",
    "cls/seq_relationship/output_bias": "cls.seq_relationship.bias",
    "output_weights": "classifier.weight",
    "output_bias": "classifier.bias",
    "cls/squad/output_weights": "qa_outputs.weight",
    "cls/squad/output_bias": "qa_outputs.bias",
}
_LEAF_NAMES = {"kernel": "weight", "gamma": "weight", "beta": "bias", "bias": "bias"}


def hf_name(original_name, encoder_prefix=""):
    """HuggingFace's name for an original checkpoint name.

    Example:

    >>> hf_name("bert/encoder/layer_3/attention/self/query/kernel")
    'encoder.layer.3.attention.self.query.weight'
    >>> hf_name("bert/embeddings/LayerNorm/gamma", encoder_prefix="bert.")
    'bert.embeddings.LayerNorm.weight'
    """
    if original_name in _HEAD_NAMES:
        return _HEAD_NAMES[original_name]
    parts = original_name.split("/")
    if parts[-1] in _LEAF_NAMES:
        parts[-1] = _LEAF_NAMES[parts[-1]]
    else:  # embedding tables: bert/embeddings/word_embeddings
        parts.append("weight")
    name = re.sub(r"layer_(\d+)", r"layer.\1", ".".join(parts))
    if name.startswith("bert."):
        name = encoder_prefix + name[len("bert."):]
    return name


def weights_file(path):
    """The file HuggingFace weights are read from: `path`, or the one in a model folder.

    That is `model.safetensors`, or `model.safetensors.index.json` for a
    sharded save (see `safetensors_files`).

    Raises:
        CheckpointError: naming what is missing, or a PyTorch pickle.
    """
    if os.path.isdir(path):
        for name in (SAFETENSORS_NAME, SHARD_INDEX_NAME):
            if os.path.exists(os.path.join(path, name)):
                return os.path.join(path, name)
        if os.path.exists(os.path.join(path, "pytorch_model.bin")):
            raise CheckpointError(
                f"{path}: only pytorch_model.bin found; refusing to unpickle it (a pickle can "
                "run code). Convert it to model.safetensors first.")
        raise CheckpointError(f"{path}: no {SAFETENSORS_NAME} in this folder")
    if not os.path.exists(path):
        raise CheckpointError(f"{path}: file not found")
    if not path.endswith((".safetensors", SHARD_INDEX_NAME)):
        raise CheckpointError(f"{path}: not a .safetensors file; only safetensors are read")
    return path


def safetensors_files(weights):
    """The `.safetensors` files of a `weights_file`: itself, or the shards its index names."""
    return _shards(weights) if weights.endswith(SHARD_INDEX_NAME) else [weights]


def _shards(index_path):
    """The files a shard index's `weight_map` names, each checked to be beside it."""
    try:
        with open(index_path, encoding="utf-8") as f:
            names = sorted(set(json.load(f)["weight_map"].values()))
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as error:
        raise CheckpointError(f"{index_path}: not a safetensors shard index with a "
                              f"weight_map ({type(error).__name__}: {error})") from None
    files = [os.path.join(os.path.dirname(index_path), name) for name in names]
    missing = [name for name, file in zip(names, files) if not os.path.isfile(file)]
    if missing or not files:
        raise CheckpointError(f"{index_path}: its shards are not all beside it (missing: "
                              f"{', '.join(missing) or 'it names none'})")
    return files


class _Tensors:
    """The tensors of one or more open safetensors files, by name."""

    def __init__(self, stack, filenames):
        self._files = {}
        for filename in filenames:
            try:
                tensors = stack.enter_context(safe_open(filename, framework="numpy"))
            except SafetensorError as error:
                raise CheckpointError(f"{filename}: not a readable safetensors file ({error}); "
                                      "is it truncated? Copy or convert it again") from None
            self._files.update(dict.fromkeys(tensors.keys(), tensors))

    def keys(self):
        return set(self._files)

    def get_slice(self, key):
        return self._files[key].get_slice(key)

    def get_tensor(self, key):
        return self._files[key].get_tensor(key)


def load_hf_safetensors(model, path):
    """Restores `model`'s weights from a HuggingFace BERT safetensors file.

    Same rules as `load_tf1_checkpoint`: all encoder weights must be present
    with matching shapes, missing head weights keep their initial values,
    and one error lists every offending name.

    Args:
        model: a built Keras model or layer containing our encoder and/or heads.
        path: a `.safetensors` file, a `model.safetensors.index.json` (shards),
            or a folder holding either.

    Returns:
        A `LoadReport` in original names.
    """
    weights = weights_file(path)
    refs = tf1_variable_map(model)
    with contextlib.ExitStack() as stack:
        tensors = _Tensors(stack, safetensors_files(weights))
        try:
            return _load(refs, tensors, weights)
        except SafetensorError as error:
            raise CheckpointError(f"{weights}: not a readable safetensors file ({error}); is "
                                  "it truncated? Copy or convert it again") from None


def _load(refs, tensors, filename):
    """Assigns `tensors` (a `_Tensors`) to `refs`; `filename` names them in messages."""
    keys = set(tensors.keys())
    prefix = "bert." if any(k.startswith("bert.") for k in keys) else ""
    # Older exports call LayerNorm parameters gamma/beta.
    aliases = {k.replace("LayerNorm.gamma", "LayerNorm.weight")
                .replace("LayerNorm.beta", "LayerNorm.bias"): k for k in keys}
    to_file = {name: aliases[hf_name(name, prefix)] for name in refs
               if hf_name(name, prefix) in aliases}

    def original_layout(name):
        value = tensors.get_tensor(to_file[name])
        return value.T if refs[name].is_kernel != refs[name].transposed else value

    _refuse_untied_decoder(refs, tensors, to_file, filename)
    shapes = {name: tuple(tensors.get_slice(key).get_shape()) for name, key in to_file.items()}
    shapes = {name: (s[::-1] if refs[name].is_kernel != refs[name].transposed else s)
              for name, s in shapes.items()}
    check_compatible(refs, shapes, filename)
    check_float_weights({name: tensors.get_slice(key).get_dtype()
                         for name, key in to_file.items()}, filename)
    restored = sorted(to_file)
    assign_weights(refs, original_layout, restored)
    report = LoadReport(
        restored=restored,
        not_in_checkpoint=sorted(set(refs) - set(to_file)),
        unused=sorted(keys - set(to_file.values()) - {prefix + b for b in _BUFFERS}))
    report.log(filename, "tensor")
    return report


def _refuse_untied_decoder(refs, tensors, to_file, filename):
    """Refuses a masked-LM output layer of its own where `refs` (the model) holds a
    masked-LM head.

    BERT's head scores the vocabulary with the word embeddings themselves
    (HuggingFace's `tie_word_embeddings: true`, which then saves one copy).
    A file saved untied holds `cls.predictions.decoder.weight` apart: the
    head would score with the embeddings instead, other logits.
    """
    if (_DECODER not in tensors.keys() or "cls/predictions/output_bias" not in refs
            or _WORD_EMBEDDINGS not in to_file):
        return
    if not np.array_equal(tensors.get_tensor(_DECODER),
                          tensors.get_tensor(to_file[_WORD_EMBEDDINGS])):
        raise CheckpointError(
            f"{filename}: {_DECODER}: a masked-LM output layer of its own (saved with "
            "tie_word_embeddings false); BERT's head scores with the word embeddings, so its "
            "logits would not be this model's. Load the encoder alone, or a tied model")

