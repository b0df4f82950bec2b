"""Shared fixtures: paths to the real data in ../shared/data and tiny configs."""

import pytest

from tests_shared import shared_path

# Files the tests load or start as processes: --doctest-modules must not import them
# (importing one registers a TFDS builder or configures devices for the whole suite).
collect_ignore = ["scripts/tiny_tfds_builder.py", "training/distributed_equivalence.py",
                  "training/tiny_training_run.py"]


@pytest.fixture(scope="session")
def uncased_vocab_file():
    return str(shared_path("vocab", "bert-base-uncased-vocab.txt"))


@pytest.fixture(scope="session")
def minilm_dir():
    return shared_path("models", "all-MiniLM-L6-v2")


@pytest.fixture
def tiny_config():
    from bert_tf.config import BertConfig
    return BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=2,
                      num_attention_heads=4, intermediate_size=37,
                      max_position_embeddings=64, type_vocab_size=2)


@pytest.fixture(scope="session")
def minilm_encoder(minilm_dir):
    """all-MiniLM-L6-v2 in our encoder, imported from its safetensors."""
    from bert_tf.checkpoints import config_beside, restore
    from bert_tf.modeling import BertEncoder
    encoder = BertEncoder(config_beside(str(minilm_dir)))
    restore(encoder, str(minilm_dir))
    return encoder


@pytest.fixture(scope="session")
def hf_minilm(minilm_dir):
    import transformers
    return transformers.BertModel.from_pretrained(str(minilm_dir)).eval()
