"""BertConfig: original bert_config.json compatibility, named sizes, clear errors."""

import json

import pytest

from bert_tf.config import BertConfig, ConfigError

# A released file (uncased_L-12_H-768_A-12/bert_config.json) plus extra keys
# that other releases carry.
RELEASED = {
    "attention_probs_dropout_prob": 0.1, "hidden_act": "gelu", "hidden_dropout_prob": 0.1,
    "hidden_size": 768, "initializer_range": 0.02, "intermediate_size": 3072,
    "max_position_embeddings": 512, "num_attention_heads": 12, "num_hidden_layers": 12,
    "type_vocab_size": 2, "vocab_size": 30522,
    "directionality": "bidi", "pooler_fc_size": 768, "pooler_num_attention_heads": 12,
}


def test_released_file_round_trips_with_unknown_keys(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps(RELEASED))
    config = BertConfig.from_json_file(str(path))
    assert config.hidden_size == 768 and config.extra["directionality"] == "bidi"
    config.to_json_file(str(tmp_path / "out.json"))
    assert json.loads((tmp_path / "out.json").read_text()) == RELEASED


def test_code_defaults_are_the_originals():
    config = BertConfig(vocab_size=10)
    assert (config.type_vocab_size, config.hidden_act, config.initializer_range) == (16, "gelu", 0.02)


@pytest.mark.parametrize("size,layers,hidden,heads", [
    ("tiny", 2, 128, 2), ("mini", 4, 256, 4), ("small", 4, 512, 8),
    ("medium", 8, 512, 8), ("base", 12, 768, 12), ("large", 24, 1024, 16)])
def test_named_sizes(size, layers, hidden, heads):
    config = BertConfig.named(size)
    assert (config.num_hidden_layers, config.hidden_size, config.num_attention_heads) == (
        layers, hidden, heads)
    assert config.intermediate_size == 4 * hidden and config.head_size == 64


def test_unknown_size():
    with pytest.raises(ConfigError, match="unknown model size 'huge'"):
        BertConfig.named("huge")


def test_missing_file_names_it(tmp_path):
    with pytest.raises(ConfigError, match="nope.json: config file not found"):
        BertConfig.from_json_file(str(tmp_path / "nope.json"))


def test_bad_json_names_file(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text('{"vocab_size": 3,')
    with pytest.raises(ConfigError, match=r"bert_config.json: not valid JSON"):
        BertConfig.from_json_file(str(path))


@pytest.mark.parametrize("change,message", [
    ({"hidden_size": 100}, "not a multiple of num_attention_heads"),
    ({"hidden_act": "sigmoid"}, "hidden_act 'sigmoid'"),
    ({"num_hidden_layers": "12"}, "num_hidden_layers must be a positive integer"),
    ({"hidden_dropout_prob": 1.5}, "hidden_dropout_prob must be a number"),
])
def test_invalid_fields_name_file_and_field(tmp_path, change, message):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps({**RELEASED, **change}))
    with pytest.raises(ConfigError, match=f"bert_config.json: .*{message}"):
        BertConfig.from_json_file(str(path))


def test_missing_vocab_size(tmp_path):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps({"hidden_size": 768}))
    with pytest.raises(ConfigError, match="missing required key 'vocab_size'"):
        BertConfig.from_json_file(str(path))


def test_huggingface_activation_names_are_translated():
    assert BertConfig.from_hf_dict({"vocab_size": 5, "hidden_act": "gelu"}).hidden_act == "gelu_exact"
    assert BertConfig.from_hf_dict({"vocab_size": 5, "hidden_act": "gelu_new"}).hidden_act == "gelu"


def test_huggingface_settings_we_do_not_compute_are_refused():
    with pytest.raises(ConfigError, match="layer_norm_eps 1e-05"):
        BertConfig.from_hf_dict({"vocab_size": 5, "layer_norm_eps": 1e-5})
