"""Which model a folder given as a checkpoint means, and folders refused as ambiguous or foreign."""

import dataclasses
import json

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import (CheckpointError, config_beside, export_original, restore,
                                 save_tf1_checkpoint)
from bert_tf.checkpoints.tf1 import resolve_checkpoint_prefix
from bert_tf.config import ConfigError
from bert_tf.modeling import BertEncoder
from bert_tf.tasks.model_files import resolve_model_files


def _write_checkpoints(folder, names):
    """Real checkpoints of one variable under `names`: ours (`ckpt-N`, object-based) as
    `tf.train.Checkpoint` writes them, the others by name as the original's are."""
    folder.mkdir(exist_ok=True)
    for name in names:
        if name.startswith("ckpt-"):
            tf.train.Checkpoint(step=tf.Variable(1)).write(str(folder / name))
        else:
            tf.raw_ops.SaveV2(prefix=str(folder / name), tensor_names=["global_step"],
                              shape_and_slices=[""], tensors=[np.int64(1)])


@pytest.mark.parametrize("names, state, expected", [
    # A finished run of ours: the model it exported, not a training checkpoint.
    (["bert_model.ckpt", "ckpt-3", "ckpt-5"], None, "bert_model.ckpt"),
    # The original's fine-tuning output: the newest by step, whatever the state file says.
    (["model.ckpt-9", "model.ckpt-10"], "model.ckpt-9", "model.ckpt-10"),
    (["model.ckpt-9", "model.ckpt-10"], None, "model.ckpt-10"),
    # A run of ours that went on from the original's run in its folder.
    (["model.ckpt-10", "ckpt-2"], None, "ckpt-2"),
    # Another name: the state file's.
    (["my_model-7"], "my_model-7", "my_model-7"),
])
def test_a_folder_means_its_export_else_its_newest_checkpoint(tmp_path, names, state, expected):
    _write_checkpoints(tmp_path / "run", names)
    if state:
        tf.compat.v1.train.update_checkpoint_state(str(tmp_path / "run"),
                                                   str(tmp_path / "run" / state))
    assert resolve_checkpoint_prefix(str(tmp_path / "run")) == str(tmp_path / "run" / expected)


def test_a_release_beside_the_original_codes_checkpoints_must_be_named(tmp_path, tiny_config):
    """The original's run_pretraining.py given the release folder as --output_dir leaves
    both: either may be the one meant, and they are different models."""
    folder, config = tmp_path / "release", dataclasses.replace(tiny_config, num_hidden_layers=1)
    release, trained = BertEncoder(config), BertEncoder(config)
    export_original(release, config, None, str(folder))
    for step in (100, 200):
        save_tf1_checkpoint(trained, str(folder / f"model.ckpt-{step}"))
    tf.compat.v1.train.update_checkpoint_state(str(folder), str(folder / "model.ckpt-200"))
    with pytest.raises(CheckpointError) as refused:
        # before any work, with every other file given
        resolve_model_files(str(folder / "bert_config.json"), None, str(folder),
                            needs_vocab=False)
    assert str(refused.value) == (
        f"{folder}: holds both bert_model.ckpt and model.ckpt-200; name the one to use "
        f"({folder}/bert_model.ckpt or {folder}/model.ckpt-200); model.ckpt-200 is the newest "
        "of 2 numbered checkpoints")
    loaded = BertEncoder(config)
    for model, name in ((release, "bert_model.ckpt"), (trained, "model.ckpt-200")):
        restore(loaded, str(folder / name))
        np.testing.assert_array_equal(loaded.weights[0].numpy(), model.weights[0].numpy())
    with pytest.raises(CheckpointError, match="holds both bert_model.ckpt and model.ckpt-200"):
        restore(loaded, str(folder))


def test_a_folder_without_weights_is_refused_before_any_work(tmp_path, tiny_config):
    """The load would refuse it only once the training data was read and tokenized."""
    tiny_config.to_json_file(str(tmp_path / "bert_config.json"))
    with pytest.raises(CheckpointError, match=rf"^{tmp_path}: folder holds no "
                                              r"bert_model.ckpt.index, no numbered checkpoint"):
        resolve_model_files(init_checkpoint=str(tmp_path), needs_vocab=False)


def test_huggingface_weights_beside_a_numbered_checkpoint_must_be_named(tmp_path):
    _write_checkpoints(tmp_path / "both", ["ckpt-4"])
    (tmp_path / "both" / "model.safetensors").write_bytes(b"weights")
    with pytest.raises(CheckpointError, match=r"both: holds both ckpt-4 and model.safetensors; "
                                              r"name the one to use \(.*/ckpt-4 or "):
        resolve_model_files(init_checkpoint=str(tmp_path / "both"), needs_vocab=False)


@pytest.fixture(scope="module")
def keras_hub_preset(tmp_path_factory):
    """A tiny preset as keras-hub saves one: config.json, model.weights.h5, tokenizer."""
    keras_hub = pytest.importorskip("keras_hub")
    folder = tmp_path_factory.mktemp("preset")
    vocabulary = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "hi"]
    keras_hub.models.BertBackbone(vocabulary_size=len(vocabulary), num_layers=1, num_heads=2,
                                  hidden_dim=8, intermediate_dim=16,
                                  max_sequence_length=16).save_to_preset(str(folder))
    keras_hub.models.BertTokenizer(vocabulary=vocabulary).save_to_preset(str(folder))
    return folder


def test_a_keras_hub_preset_is_refused_by_name(keras_hub_preset):
    """Its config.json is no HuggingFace config: read as one, every size took HuggingFace's
    default (a BERT-Base of 12 layers) without a word."""
    config_file = keras_hub_preset / "config.json"
    assert json.loads(config_file.read_text())["class_name"] == "BertBackbone"
    assert (keras_hub_preset / "assets" / "tokenizer" / "vocabulary.txt").exists()
    message = (rf"^{config_file}: the saved config of a Keras object \(keras_hub>BertBackbone\), "
               r"as a keras-hub preset holds, not a bert_config.json nor a HuggingFace "
               r"config.json; bert_tf does not read keras-hub presets: use the model's original "
               r"release \(bert_model.ckpt, bert_config.json, vocab.txt\) or its HuggingFace "
               r"folder$")
    for files in ({"init_checkpoint": str(keras_hub_preset)},
                  {"bert_config_file": str(config_file)}):
        with pytest.raises(ConfigError, match=message):
            resolve_model_files(**files, needs_vocab=False)
    # Its weights, given with another config: test_damaged_files.py, test_weights_of_other_stacks.


def test_two_configs_that_describe_other_models_are_warned_about(tmp_path, tiny_config, caplog):
    """Each kind of weights reads its own config; the other one is likely stale."""
    tiny_config.to_json_file(str(tmp_path / "bert_config.json"))
    other = {**tiny_config.to_dict(), "model_type": "bert", "num_attention_heads": 2}
    (tmp_path / "config.json").write_text(json.dumps(other))
    with caplog.at_level("WARNING"):
        assert config_beside(str(tmp_path)) == tiny_config
    assert (f"{tmp_path}/bert_config.json is read, and config.json beside it describes another "
            "model: num_attention_heads=4 (config.json: 2)") in caplog.text
    caplog.clear()
    (tmp_path / "config.json").write_text(json.dumps({**other, "num_attention_heads": 4}))
    with caplog.at_level("WARNING"):
        config_beside(str(tmp_path))  # HuggingFace's "gelu" differs by name only: no warning
    assert "describes another model" not in caplog.text
