"""Fixtures for checkpoint tests: the real MiniLM model, ours and HuggingFace's."""

import numpy as np
import pytest

from bert_tf.checkpoints import config_beside, restore
from bert_tf.modeling import BertEncoder


@pytest.fixture(scope="session")
def minilm_encoder(minilm_dir):
    encoder = BertEncoder(config_beside(str(minilm_dir)))
    restore(encoder, str(minilm_dir))
    return encoder


@pytest.fixture(scope="session")
def hf_minilm(minilm_dir):
    import transformers
    return transformers.BertModel.from_pretrained(str(minilm_dir)).eval()


def weights_by_name(model):
    from bert_tf.checkpoints import tf1_variable_map
    return {name: np.array(ref.variable.numpy()) for name, ref in tf1_variable_map(model).items()}
