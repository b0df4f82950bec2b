"""bench/matmul_flops.py against the weights of HF's BERT modules.

Every dense layer costs 2 FLOPs per weight per token (or per position or
sequence it runs on), so counting HF's `Linear` weights gives the FLOPs
independently of our formulas; attention adds `Q.K^T` and `P.V`, 2 * T * H
multiply-adds per token each.
"""

import pytest
import torch
import transformers

import matmul_flops
from bert_tf.config import BertConfig
from peer_models import hf_bert_config

BATCH, LENGTH, PREDICTIONS = 3, 7, 2


def linear_weights(module):
    return sum(m.weight.numel() for m in module.modules() if isinstance(m, torch.nn.Linear))


def hf_encoder_forward(config, model):
    attention = config.num_hidden_layers * 2 * 2 * BATCH * LENGTH * LENGTH * config.hidden_size
    return 2 * BATCH * LENGTH * linear_weights(model.bert.encoder) + attention


@pytest.mark.parametrize("size", ["tiny", "base"])
def test_encoder_forward_counts_every_encoder_weight(size):
    config = BertConfig.named(size)
    model = transformers.BertForPreTraining(hf_bert_config(config))
    assert matmul_flops.encoder_forward(config, BATCH, LENGTH) == hf_encoder_forward(config, model)


def test_pretraining_step_adds_the_heads_and_triples():
    config = BertConfig.named("tiny")
    model = transformers.BertForPreTraining(hf_bert_config(config))
    heads = model.cls.predictions
    masked_lm = 2 * BATCH * PREDICTIONS * (linear_weights(heads.transform)
                                           + heads.decoder.weight.numel())
    next_sentence = 2 * BATCH * (linear_weights(model.bert.pooler)
                                 + model.cls.seq_relationship.weight.numel())
    expected = 3 * (hf_encoder_forward(config, model) + masked_lm + next_sentence)
    assert matmul_flops.pretraining_step(config, BATCH, LENGTH, PREDICTIONS) == expected


def test_last_block_at_a_few_positions_counts_its_weights_there():
    config = BertConfig.named("tiny")
    model = transformers.BertForPreTraining(hf_bert_config(config))
    last = model.bert.encoder.layer[-1]
    everywhere = last.attention.self.key.weight.numel() + last.attention.self.value.weight.numel()
    queries = 3  # 2 predictions and [CLS]
    saved = (2 * BATCH * (LENGTH - queries) * (linear_weights(last) - everywhere)
             + 2 * 2 * BATCH * (LENGTH - queries) * LENGTH * config.hidden_size)
    assert (matmul_flops.pretraining_step(config, BATCH, LENGTH, PREDICTIONS)
            - matmul_flops.our_pretraining_step(config, BATCH, LENGTH, PREDICTIONS)) == 3 * saved
    step = matmul_flops.pretraining_matmuls(config, BATCH, LENGTH, PREDICTIONS, queries)
    assert sum(m.flops for m in step.values()) == matmul_flops.our_pretraining_step(
        config, BATCH, LENGTH, PREDICTIONS)


def test_classification_step_adds_pooler_and_output_layer():
    config = BertConfig.named("tiny")
    model = transformers.BertForSequenceClassification(hf_bert_config(config, num_labels=3))
    head = 2 * BATCH * (linear_weights(model.bert.pooler) + model.classifier.weight.numel())
    expected = 3 * (hf_encoder_forward(config, model) + head)
    assert matmul_flops.classification_step(config, BATCH, LENGTH, num_labels=3) == expected
