"""Pretraining logits, losses and metrics against HuggingFace BertForPreTraining.

Our pretrainer is written as an original TF1 checkpoint, read by
HuggingFace's own reader of such checkpoints (`load_tf_weights_in_bert`) into
a PyTorch `BertForPreTraining`, and both score the same real batch of the
original tool's records.
"""

import numpy as np
import pytest
import torch

from bert_tf.checkpoints import save_tf1_checkpoint
from bert_tf.config import BertConfig
from bert_tf.data import readers
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.training.objective import batch_loss, metric_values
from bert_tf.tasks.pretraining_objective import pretraining_objective
from tests_shared import shared_path

CONFIG = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=2, num_attention_heads=4,
                    intermediate_size=37, max_position_embeddings=128, type_vocab_size=2)


@pytest.fixture(scope="module")
def batch():
    records = str(shared_path("golden", "sample_text_seed12345_dupe10.tfrecord"))
    dataset = readers.pretraining_dataset(records, 128, 20, batch_size=16, is_training=False)
    return {name: value.numpy() for name, value in next(iter(dataset)).items()}


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    import transformers
    from transformers.models.bert.modeling_bert import load_tf_weights_in_bert
    ours = BertPretrainer(CONFIG)
    prefix = str(tmp_path_factory.mktemp("ckpt") / "bert_model.ckpt")
    save_tf1_checkpoint(ours, prefix)
    hf_config = transformers.BertConfig(
        vocab_size=CONFIG.vocab_size, hidden_size=32, num_hidden_layers=2,
        num_attention_heads=4, intermediate_size=37, max_position_embeddings=128,
        type_vocab_size=2, hidden_act="gelu_new", layer_norm_eps=1e-12)
    theirs = load_tf_weights_in_bert(transformers.BertForPreTraining(hf_config), hf_config,
                                     prefix).eval()
    return ours, theirs


def _hf_run(theirs, batch):
    labels = np.full(batch["input_ids"].shape, -100, "int64")
    for row, (positions, ids, weights) in enumerate(zip(
            batch["masked_lm_positions"], batch["masked_lm_ids"], batch["masked_lm_weights"])):
        real = weights > 0
        labels[row, positions[real]] = ids[real]
    with torch.no_grad():
        return theirs(input_ids=torch.from_numpy(batch["input_ids"]).long(),
                      attention_mask=torch.from_numpy(batch["input_mask"]).long(),
                      token_type_ids=torch.from_numpy(batch["segment_ids"]).long(),
                      labels=torch.from_numpy(labels),
                      next_sentence_label=torch.from_numpy(batch["next_sentence_labels"][:, 0]).long())


def test_logits_and_losses_match_huggingface(models, batch):
    ours, theirs = models
    objective = pretraining_objective()
    outputs = ours({name: batch[name] for name in ours.input})
    total, terms = batch_loss(objective, outputs, batch)
    hf = _hf_run(theirs, batch)

    rows = np.arange(len(batch["input_ids"]))[:, None]
    hf_masked = hf.prediction_logits.numpy()[rows, batch["masked_lm_positions"]]
    np.testing.assert_allclose(outputs["masked_lm_logits"], hf_masked, atol=2e-5)
    np.testing.assert_allclose(outputs["next_sentence_logits"], hf.seq_relationship_logits,
                               atol=2e-5)
    # HF: mean nll over labelled tokens + mean NSP cross-entropy; ours adds 1e-5
    # to the MLM denominator, a relative difference below 1e-6 here.
    assert float(total) == pytest.approx(float(hf.loss), rel=2e-6)
    nsp = torch.nn.functional.cross_entropy(hf.seq_relationship_logits,
                                            torch.from_numpy(batch["next_sentence_labels"][:, 0]).long())
    assert float(terms["next_sentence_loss"]) == pytest.approx(float(nsp), rel=1e-6)


def test_masked_lm_loss_is_weighted_sum_over_weight_plus_epsilon(models, batch):
    """The original's formula in numpy, on HF's logits; padded slots weigh 0."""
    ours, theirs = models
    outputs = ours({name: batch[name] for name in ours.input})
    _, terms = batch_loss(pretraining_objective(), outputs, batch)
    rows = np.arange(len(batch["input_ids"]))[:, None]
    logits = _hf_run(theirs, batch).prediction_logits.numpy()[rows, batch["masked_lm_positions"]]
    logits = logits.astype("float64")
    log_probs = logits - np.log(np.exp(logits - logits.max(-1, keepdims=True)).sum(-1,
                                keepdims=True)) - logits.max(-1, keepdims=True)
    nll = -np.take_along_axis(log_probs, batch["masked_lm_ids"][..., None], -1)[..., 0]
    weights = batch["masked_lm_weights"]
    assert 0 < weights.sum() < weights.size  # real records pad some slots
    expected = (weights * nll).sum() / (weights.sum() + 1e-5)
    assert float(terms["masked_lm_loss"]) == pytest.approx(expected, rel=1e-6)


def test_metrics_match_numpy_on_huggingface_logits(models, batch):
    ours, theirs = models
    objective = pretraining_objective()
    outputs = ours({name: batch[name] for name in ours.input})
    values = metric_values({k: (float(t), float(c))
                            for k, (t, c) in objective.metrics_fn(outputs, batch).items()})
    hf = _hf_run(theirs, batch)
    rows = np.arange(len(batch["input_ids"]))[:, None]
    predicted = hf.prediction_logits.numpy()[rows, batch["masked_lm_positions"]].argmax(-1)
    weights = batch["masked_lm_weights"]
    accuracy = (weights * (predicted == batch["masked_lm_ids"])).sum() / weights.sum()
    nsp_predicted = hf.seq_relationship_logits.numpy().argmax(-1)
    assert values["masked_lm_accuracy"] == pytest.approx(accuracy, abs=1e-7)
    assert values["next_sentence_accuracy"] == pytest.approx(
        (nsp_predicted == batch["next_sentence_labels"][:, 0]).mean(), abs=1e-7)
    _, terms = batch_loss(objective, outputs, batch)
    assert values["masked_lm_loss"] == pytest.approx(float(terms["masked_lm_loss"]), rel=1e-5)
    assert values["next_sentence_loss"] == pytest.approx(float(terms["next_sentence_loss"]),
                                                         rel=1e-6)
    assert list(values) == list(objective.metric_names)


def test_no_nsp_objective_has_masked_lm_only(batch):
    objective = pretraining_objective(nsp=False)
    model = BertPretrainer(CONFIG, nsp=False)
    outputs = model({name: batch[name] for name in model.input})
    assert set(outputs) == {"masked_lm_logits"}
    total, terms = batch_loss(objective, outputs, batch)
    assert set(terms) == {"masked_lm_loss"} and float(total) == float(terms["masked_lm_loss"])
    assert objective.metric_names == ("masked_lm_accuracy", "masked_lm_loss")
