"""Import HuggingFace `BertModel` / `BertFor*` weights from safetensors.

HuggingFace names are a mechanical rewrite of the original's
(`bert/encoder/layer_3/attention/self/query/kernel` ->
`encoder.layer.3.attention.self.query.weight`) with PyTorch linear weights
stored `[out, in]`, so the import reuses the original-name map and
transposes dense kernels. Only safetensors are read: a PyTorch `.bin` is a
pickle, and unpickling a downloaded file can run arbitrary code.
"""

import os
import re

from absl import logging
from safetensors import SafetensorError, safe_open

from bert_tf.checkpoints.name_map import tf1_variable_map
from bert_tf.checkpoints.tf1 import (CheckpointError, LoadReport, assign_weights,
                                     check_compatible, check_float_weights,
                                     warn_unused_layers)

SAFETENSORS_NAME = "model.safetensors"
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


def resolve_safetensors(path):
    """Returns the `.safetensors` file for a file or a HuggingFace model folder."""
    if os.path.isdir(path):
        candidate = os.path.join(path, SAFETENSORS_NAME)
        if os.path.exists(candidate):
            return candidate
        if os.path.exists(os.path.join(path, "pytorch_model.bin")):
            raise CheckpointError(
                f"{path}: only pytorch_model.bin found; refusing to unpickle it (a pickle can "
                "run code). Convert it to model.safetensors first.")
        raise CheckpointError(f"{path}: no {SAFETENSORS_NAME} in this folder")
    if not os.path.exists(path):
        raise CheckpointError(f"{path}: file not found")
    if not path.endswith(".safetensors"):
        raise CheckpointError(f"{path}: not a .safetensors file; only safetensors are read")
    return path


def load_hf_safetensors(model, path):
    """Restores `model`'s weights from a HuggingFace BERT safetensors file.

    Same rules as `load_tf1_checkpoint`: all encoder weights must be present
    with matching shapes, missing head weights keep their initial values,
    and one error lists every offending name.

    Args:
        model: a built Keras model or layer containing our encoder and/or heads.
        path: a `.safetensors` file or a folder holding `model.safetensors`.

    Returns:
        A `LoadReport` in original names.
    """
    filename = resolve_safetensors(path)
    refs = tf1_variable_map(model)
    try:
        return _load(refs, filename)
    except SafetensorError as error:
        raise CheckpointError(f"{filename}: not a readable safetensors file ({error}); is it "
                              "truncated? Copy or convert it again") from None


def _load(refs, filename):
    with safe_open(filename, framework="numpy") as tensors:
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
    logging.info("%s: restored %d tensors", filename, len(restored))
    for name in report.not_in_checkpoint:
        logging.info("not in checkpoint, newly initialised: %s", name)
    for name in report.unused:
        logging.info("unused checkpoint tensor: %s", name)
    warn_unused_layers(report.unused, report.restored, filename)
    return report
