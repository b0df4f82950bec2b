"""Damaged or mismatched weight and config files: a message that names the file."""

import dataclasses
import json

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import save_file

from bert_tf.checkpoints import (CheckpointError, config_beside, export_original,
                                 load_hf_safetensors, load_tf1_checkpoint, restore,
                                 tf1_variable_map)
from bert_tf.checkpoints.huggingface import hf_name
from bert_tf.config import BertConfig, ConfigError
from bert_tf.modeling import BertEncoder
from bert_tf.tasks.model_files import resolve_model_files


def test_truncated_safetensors_names_the_file(tmp_path, tiny_config):
    path = tmp_path / "model.safetensors"
    save_file({"embeddings.word_embeddings.weight": np.zeros((99, 32), "float32")}, str(path))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])
    with pytest.raises(CheckpointError, match=r"model.safetensors: not a readable safetensors "
                                              r"file .*truncated"):
        load_hf_safetensors(BertEncoder(tiny_config), str(path))


def test_truncated_original_checkpoint_names_the_file(tmp_path, tiny_config):
    folder = tmp_path / "release"
    export_original(BertEncoder(tiny_config), tiny_config, None, str(folder))
    data = folder / "bert_model.ckpt.data-00000-of-00001"
    data.write_bytes(data.read_bytes()[:100])
    with pytest.raises(CheckpointError, match=r"bert_model.ckpt: cannot read bert/.* its data "
                                              r"file is damaged or incomplete"):
        load_tf1_checkpoint(BertEncoder(tiny_config), str(folder / "bert_model.ckpt"))


@pytest.mark.parametrize("cut", [0.5, 0.0])
def test_a_truncated_or_empty_index_names_the_file(tmp_path, tiny_config, cut):
    folder = tmp_path / "release"
    export_original(BertEncoder(tiny_config), tiny_config, None, str(folder))
    index = folder / "bert_model.ckpt.index"
    index.write_bytes(index.read_bytes()[:int(len(index.read_bytes()) * cut)])
    with pytest.raises(CheckpointError, match=r"bert_model.ckpt.index: unreadable \(.*sstable"
                                              r".*\); the file is damaged or incomplete"):
        load_tf1_checkpoint(BertEncoder(tiny_config), str(folder))


def test_a_training_checkpoint_is_named_as_such(tmp_path, tiny_config):
    encoder = BertEncoder(tiny_config)
    prefix = tf.train.Checkpoint(model=encoder).write(str(tmp_path / "ckpt-3"))
    with pytest.raises(CheckpointError, match=r"ckpt-3: an object-based checkpoint, such as a "
                                              r"run's ckpt-N \(for resuming\), not a model"):
        load_tf1_checkpoint(BertEncoder(tiny_config), prefix)


def test_config_files_read_by_their_kind_and_missing_folders_named(tmp_path, minilm_dir):
    # HuggingFace's own config.json given as --bert_config_file: its "gelu" is the exact one.
    assert BertConfig.from_json_file(str(minilm_dir / "config.json")).hidden_act == "gelu_exact"
    distilbert = tmp_path / "config.json"
    distilbert.write_text(json.dumps({"model_type": "distilbert", "dim": 384, "n_layers": 6}))
    with pytest.raises(ConfigError, match=r"config.json: model_type 'distilbert' is not BERT"):
        BertConfig.from_json_file(str(distilbert))
    (tmp_path / "cut").mkdir()
    (tmp_path / "cut" / "config.json").write_text('{"model_type": "bert", "hidden_')
    with pytest.raises(ConfigError, match=r"cut/config.json: not valid JSON"):
        config_beside(str(tmp_path / "cut"))
    with pytest.raises(CheckpointError, match=r"no_such_model: not found"):
        config_beside(str(tmp_path / "no_such_model"))


def test_layers_left_out_and_other_architectures_are_warned_about(tmp_path, tiny_config,
                                                                   caplog):
    folder = tmp_path / "release"
    export_original(BertEncoder(tiny_config), tiny_config, None, str(folder))
    one_layer = dataclasses.replace(tiny_config, num_hidden_layers=1)
    with caplog.at_level("WARNING"):
        load_tf1_checkpoint(BertEncoder(one_layer), str(folder))
    assert "encoder layers 1 of the checkpoint are not in the model" in caplog.text
    other_heads = tmp_path / "heads.json"
    dataclasses.replace(tiny_config, num_attention_heads=2).to_json_file(str(other_heads))
    caplog.clear()
    with caplog.at_level("WARNING"):
        resolve_model_files(str(other_heads), None, str(folder), needs_vocab=False)
    assert "num_attention_heads=2 (beside it: 4)" in caplog.text


def _write_safetensors(encoder, path, dtype):
    """`encoder`'s weights in HuggingFace's names and layout, as `dtype`."""
    tensors = {}
    for name, ref in tf1_variable_map(encoder).items():
        shape = ref.original_shape[::-1] if ref.is_kernel != ref.transposed else ref.original_shape
        tensors[hf_name(name)] = np.ones(shape, dtype)
    save_file(tensors, str(path))


def test_weights_that_are_not_floating_point_are_refused(tmp_path, tiny_config):
    """Assigning integers would cast them: a model of wrong weights, and no error."""
    encoder = BertEncoder(tiny_config)
    _write_safetensors(encoder, tmp_path / "model.safetensors", "float16")
    load_hf_safetensors(encoder, str(tmp_path / "model.safetensors"))  # converts exactly
    _write_safetensors(encoder, tmp_path / "model.safetensors", "int32")
    with pytest.raises(CheckpointError, match=r"model.safetensors: \d+ weights are not floating "
                                              r"point, e.g. bert/.*: I32; is it a model"):
        load_hf_safetensors(encoder, str(tmp_path / "model.safetensors"))
    prefix = str(tmp_path / "ints" / "bert_model.ckpt")
    names = list(tf1_variable_map(encoder))
    tf.io.gfile.makedirs(str(tmp_path / "ints"))
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=[np.ones(ref.original_shape, "int32")
                               for ref in tf1_variable_map(encoder).values()])
    with pytest.raises(CheckpointError, match=r"bert_model.ckpt: \d+ weights are not floating "
                                              r"point, e.g. bert/.*: int32"):
        load_tf1_checkpoint(encoder, prefix)


def test_a_folder_with_both_formats_must_be_named_more_precisely(tmp_path, tiny_config):
    folder = tmp_path / "both"
    encoder = BertEncoder(tiny_config)
    export_original(encoder, tiny_config, None, str(folder))
    _write_safetensors(encoder, folder / "model.safetensors", "float32")
    hf_config = {**tiny_config.to_dict(), "model_type": "bert", "hidden_act": "gelu"}
    (folder / "config.json").write_text(json.dumps(hf_config))
    with pytest.raises(CheckpointError, match=r"both: holds both bert_model.ckpt and "
                                              r"model.safetensors; name the one to use"):
        restore(BertEncoder(tiny_config), str(folder))
    # Named: each file with its own config.
    restore(BertEncoder(tiny_config), str(folder / "model.safetensors"))
    assert config_beside(str(folder / "model.safetensors")).hidden_act == "gelu_exact"
    assert config_beside(str(folder / "bert_model.ckpt")).hidden_act == tiny_config.hidden_act


def test_a_config_that_is_not_utf8_is_named(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_bytes(b"\xff\xfe{}")
    with pytest.raises(ConfigError, match=r"bert_config.json: not UTF-8 text"):
        BertConfig.from_json_file(str(path))


def test_a_checkpoint_named_by_any_of_its_files_loads(tmp_path, tiny_config):
    """Shell completion ends a prefix with .data-00000-of-00001 or .meta (the release has one)."""
    encoder = BertEncoder(tiny_config)
    export_original(encoder, tiny_config, None, str(tmp_path))
    (tmp_path / "bert_model.ckpt.meta").write_bytes(b"a TF1 graph")
    for suffix in (".data-00000-of-00001", ".meta", ".index"):
        other = BertEncoder(tiny_config)
        assert not restore(other, str(tmp_path / ("bert_model.ckpt" + suffix))).not_in_checkpoint
        np.testing.assert_array_equal(other.weights[0].numpy(), encoder.weights[0].numpy())


@pytest.mark.parametrize("name, what", [
    ("saved_model.pb", "a SavedModel"), ("tf_model.h5", "HuggingFace's TensorFlow or Flax"),
    ("model.weights.h5", "a Keras file"), ("model.keras", "a Keras file")])
def test_weights_of_other_stacks_are_named(tmp_path, tiny_config, name, what):
    (tmp_path / name).write_bytes(b"weights")
    for path in (tmp_path, tmp_path / name):
        with pytest.raises(CheckpointError, match=rf"; {name} is {what}.*, which bert_tf does "
                                                  r"not read: pass an original TF1 checkpoint "
                                                  r"or HuggingFace safetensors$"):
            restore(BertEncoder(tiny_config), str(path))
