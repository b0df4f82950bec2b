"""Damaged weight files fail with a message that names the file."""

import numpy as np
import pytest
from safetensors.numpy import save_file

from bert_tf.checkpoints import (CheckpointError, export_original, load_hf_safetensors,
                                 load_tf1_checkpoint)
from bert_tf.modeling import BertEncoder


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
