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
    with pytest.raises(ConfigError, match=f"^{tmp_path}: a folder, not a config file"):
        BertConfig.from_json_file(str(tmp_path))


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
    ({"causal": "true"}, "\"causal\" must be true or false, got 'true'"),
    ({"causal": 1}, "\"causal\" must be true or false, got 1"),
])
def test_invalid_fields_name_file_and_field(tmp_path, change, message):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps({**RELEASED, **change}))
    with pytest.raises(ConfigError, match=f"bert_config.json: .*{message}"):
        BertConfig.from_json_file(str(path))


@pytest.mark.parametrize("field", ["vocab_size", "hidden_size", "num_hidden_layers",
                                   "num_attention_heads", "intermediate_size", "hidden_act",
                                   "max_position_embeddings", "type_vocab_size"])
def test_missing_field_is_an_error_naming_file_and_field(tmp_path, field):
    """A missing size must not silently become the code default (768 wide, 12 layers...)."""
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps({k: v for k, v in RELEASED.items() if k != field}))
    with pytest.raises(ConfigError, match=f"bert_config.json: missing required key '{field}'$"):
        BertConfig.from_json_file(str(path))


def test_training_only_fields_take_the_original_defaults(tmp_path):
    path = tmp_path / "bert_config.json"
    optional = ("hidden_dropout_prob", "attention_probs_dropout_prob", "initializer_range")
    path.write_text(json.dumps({k: v for k, v in RELEASED.items() if k not in optional}))
    config = BertConfig.from_json_file(str(path))
    assert (config.hidden_dropout_prob, config.attention_probs_dropout_prob,
            config.initializer_range) == (0.1, 0.1, 0.02)


@pytest.mark.parametrize("typo,field", [("num_hidden_layer", "num_hidden_layers"),
                                        ("hiden_size", "hidden_size"),
                                        ("Vocab_Size", "vocab_size"),
                                        ("type_vocab_sizes", "type_vocab_size"),
                                        ("intermediate_sise", "intermediate_size")])
def test_misspelled_key_is_an_error_suggesting_the_field(tmp_path, typo, field):
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps({**RELEASED, typo: 3}))
    with pytest.raises(ConfigError, match=f"bert_config.json: unknown key '{typo}'; "
                                          f"did you mean '{field}'"):
        BertConfig.from_json_file(str(path))


def test_unrelated_unknown_keys_are_kept(tmp_path):
    extras = {"pooler_type": "first_token_transform", "pooler_num_fc_layers": 3,
              "pooler_size_per_head": 128, "my_note": "trained on wiki"}
    path = tmp_path / "bert_config.json"
    path.write_text(json.dumps({**RELEASED, **extras}))
    config = BertConfig.from_json_file(str(path))
    assert {k: config.extra[k] for k in extras} == extras


def test_a_huggingface_config_without_a_size_is_refused(minilm_dir):
    """HuggingFace would take its default (12 heads): the weights would load, shapes and all,
    into a model that computes something else."""
    values = json.loads((minilm_dir / "config.json").read_text())
    del values["num_attention_heads"]
    with pytest.raises(ConfigError, match=r"^my/config.json: missing required key "
                                          r"'num_attention_heads'$"):
        BertConfig.from_hf_dict(values, "my/config.json")


def test_real_huggingface_config_reads(minilm_dir):
    config = BertConfig.from_hf_dict(json.loads((minilm_dir / "config.json").read_text()))
    assert (config.hidden_size, config.num_hidden_layers, config.hidden_act) == (
        384, 6, "gelu_exact")


def test_huggingface_activation_names_are_translated():
    assert BertConfig.from_hf_dict({**RELEASED, "hidden_act": "gelu"}).hidden_act == "gelu_exact"
    assert BertConfig.from_hf_dict({**RELEASED, "hidden_act": "gelu_new"}).hidden_act == "gelu"


def test_huggingface_settings_we_do_not_compute_are_refused():
    with pytest.raises(ConfigError, match="layer_norm_eps 1e-05"):
        BertConfig.from_hf_dict({"vocab_size": 5, "layer_norm_eps": 1e-5})


def test_a_config_json_of_huggingface_reads_as_one_without_its_model_type(tmp_path):
    """Read as the original's, its "gelu" became the tanh form: another activation than
    the same file beside HuggingFace weights gave."""
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**RELEASED, "architectures": ["BertModel"]}))
    assert BertConfig.from_json_file(str(path)).hidden_act == "gelu_exact"
    path.write_text(json.dumps(RELEASED))  # nothing says whose: the original's
    assert BertConfig.from_json_file(str(path)).hidden_act == "gelu"


def test_a_huggingface_decoder_is_causal_and_cross_attention_refused():
    assert BertConfig.from_hf_dict({**RELEASED, "is_decoder": True}).extra["causal"] is True
    assert "causal" not in BertConfig.from_hf_dict({**RELEASED, "is_decoder": False}).extra
    with pytest.raises(ConfigError, match="add_cross_attention: an encoder-decoder's decoder"):
        BertConfig.from_hf_dict({**RELEASED, "is_decoder": True, "add_cross_attention": True})


def test_a_config_that_is_not_a_mapping_is_named():
    with pytest.raises(ConfigError, match=r"^my.json: expected a mapping of config keys, got "
                                          r"list$"):
        BertConfig.from_dict([1, 2], "my.json")
