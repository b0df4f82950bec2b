"""Which model a folder given as a checkpoint means, and folders refused as ambiguous or foreign."""

import json

import pytest

from bert_tf.config import ConfigError
from bert_tf.tasks.model_files import resolve_model_files


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
