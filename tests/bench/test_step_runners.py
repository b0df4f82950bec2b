"""bench/step_runners.py's HuggingFace losses are the losses our trainer minimises.

The pretraining benches (`pretraining_speed.py`, `gpu_training_step.py`)
time `transformers.BertForPreTraining` on a loss written for them,
`hf_pretraining_loss`: the masked-LM head on the gathered positions, a
weighted mean over the real predictions, plus next sentence. The GPU bench
also times `BertForSequenceClassification` against our classifier on
`classification_batch`. Unless HF's loss is ours, the benches time
different work. So HF's weights, every one of them perturbed, go into our
model through safetensors, and both losses on real records must agree; and
one step of each of our runners must train.
"""

import numpy as np
import torch
import transformers

from bert_tf.checkpoints.huggingface import load_hf_safetensors
from bert_tf.config import BertConfig
from bert_tf.modeling.classifier import build_classifier
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.tasks.losses import classification_objective
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.objective import batch_loss
from bert_tf.training.steps import model_inputs
from peer_models import hf_bert_config
from step_runners import (classification_batch, classification_step, hf_classification_loss,
                          hf_pretraining_loss, pretraining_batch)
from tests_shared import shared_path

RECORDS = shared_path("golden", "sample_text_seed12345_dupe10.tfrecord")


def perturbed(hf_model):
    """`hf_model` in eval mode with every parameter moved, so a weight left unloaded shows."""
    torch.manual_seed(0)
    with torch.no_grad():
        for parameter in hf_model.parameters():  # biases and LayerNorms too
            parameter.add_(0.05 * torch.randn_like(parameter))
    return hf_model.eval()


def test_hf_pretraining_loss_is_ours_on_the_same_weights(tmp_path):
    config = BertConfig.named("tiny")
    hf = perturbed(transformers.BertForPreTraining(hf_bert_config(config)))
    hf.save_pretrained(tmp_path, safe_serialization=True)
    batch = pretraining_batch(8, RECORDS)
    assert 0 < batch["masked_lm_weights"].sum() < batch["masked_lm_weights"].size  # padding too

    ours = BertPretrainer(config)
    ours(model_inputs(ours, batch))
    load_hf_safetensors(ours, tmp_path)
    our_loss, _ = batch_loss(pretraining_objective(), ours(model_inputs(ours, batch)), batch)
    with torch.no_grad():
        their_loss = hf_pretraining_loss(hf, batch)()

    assert float(their_loss) > 1.0  # far from a trivial loss
    np.testing.assert_allclose(float(their_loss), float(our_loss), rtol=1e-5)


def test_hf_classification_loss_is_ours_on_the_same_weights(tmp_path):
    config = BertConfig.named("tiny")
    hf = perturbed(transformers.BertForSequenceClassification(hf_bert_config(config)))
    hf.save_pretrained(tmp_path, safe_serialization=True)
    batch = classification_batch(pretraining_batch(8, RECORDS))
    assert 0 < batch["label_ids"].sum() < 8  # both labels, so a swapped head shows

    ours = build_classifier(config, num_labels=2)
    load_hf_safetensors(ours, tmp_path)
    head = ours.get_layer("classifier").dense
    head.kernel.assign(hf.classifier.weight.detach().numpy().T)
    head.bias.assign(hf.classifier.bias.detach().numpy())
    our_loss, _ = batch_loss(classification_objective(), ours(model_inputs(ours, batch)), batch)
    with torch.no_grad():
        their_loss = hf_classification_loss(hf, batch)()

    assert abs(float(their_loss) - np.log(2)) > 0.05  # not the untrained head's log 2
    np.testing.assert_allclose(float(their_loss), float(our_loss), rtol=1e-5)


def test_classification_step_trains_our_classifier():
    batch = classification_batch(pretraining_batch(8, RECORDS))
    step = classification_step(build_classifier(BertConfig.named("tiny"), num_labels=2), batch,
                               create_optimizer(1e-3, 100, 0))

    losses = [step() for _ in range(5)]

    assert losses[-1] < losses[0]  # the same batch five times: its loss falls
