"""The pretraining losses and evaluation metrics of the original release.

* masked LM: `sum(w * nll) / (sum(w) + 1e-5)` over the predictions, with
  `w = masked_lm_weights` (0 on padded prediction slots);
* next sentence: mean cross-entropy over the examples;
* total loss: their sum.

Metrics, named and defined as in the original's `eval_results.txt`:
`masked_lm_accuracy` (weighted by `masked_lm_weights`), `masked_lm_loss`
(weighted mean nll), `next_sentence_accuracy`, `next_sentence_loss`. The
left-to-right ablation masks nothing and predicts every next token
(`pretraining_inputs.left_to_right_batch`): the same two terms are named
`lm_accuracy` and `lm_loss` there, so that its `eval_results.txt` and
TensorBoard say what was measured.
"""

from keras import ops

from bert_tf.tasks.losses import correct, cross_entropy
from bert_tf.training.objective import LossWeights, Objective

MASKED_LM_EPSILON = 1e-5
MASKED_LM_METRICS = ("masked_lm_accuracy", "masked_lm_loss")
LEFT_TO_RIGHT_METRICS = ("lm_accuracy", "lm_loss")
NEXT_SENTENCE_METRICS = ("next_sentence_accuracy", "next_sentence_loss")


def masked_lm_losses(logits, masked_lm_ids):
    """Per-prediction negative log-likelihood, `[B, P]` float32."""
    return cross_entropy(logits, masked_lm_ids)


def next_sentence_losses(logits, next_sentence_labels):
    """Per-example cross-entropy, `[B]` float32 (labels `[B, 1]` or `[B]`)."""
    return cross_entropy(logits, ops.reshape(next_sentence_labels, (-1,)))


def pretraining_objective(nsp=True, causal=False):
    """The `Objective` of BERT pretraining (masked LM, plus next sentence if `nsp`).

    Expects the model outputs of `BertPretrainer` and the batch features of
    `bert_tf.data.readers.pretraining_dataset`. `causal`: the left-to-right
    ablation's batches (`left_to_right_batch`), whose language-model terms
    are named `LEFT_TO_RIGHT_METRICS`.

    Example:

    >>> import numpy as np
    >>> from bert_tf.training.objective import batch_loss
    >>> outputs = {"masked_lm_logits": np.zeros((1, 2, 4), "float32"),
    ...            "next_sentence_logits": np.zeros((1, 2), "float32")}
    >>> batch = {"masked_lm_ids": np.array([[1, 0]]),
    ...          "masked_lm_weights": np.array([[1.0, 0.0]], "float32"),
    ...          "next_sentence_labels": np.array([[0]])}
    >>> total, terms = batch_loss(pretraining_objective(), outputs, batch)
    >>> round(float(terms["masked_lm_loss"]), 5), round(float(terms["next_sentence_loss"]), 5)
    (1.38628, 0.69315)
    >>> pretraining_objective(nsp=False, causal=True).metric_names
    ('lm_accuracy', 'lm_loss')
    """
    accuracy_name, loss_name = LEFT_TO_RIGHT_METRICS if causal else MASKED_LM_METRICS

    def loss_weights_fn(batch):
        weights = {loss_name: LossWeights(batch["masked_lm_weights"], MASKED_LM_EPSILON)}
        if nsp:
            labels = ops.reshape(batch["next_sentence_labels"], (-1,))
            weights["next_sentence_loss"] = LossWeights(ops.ones_like(labels, "float32"))
        return weights

    def loss_fn(outputs, batch):
        losses = {loss_name: masked_lm_losses(outputs["masked_lm_logits"],
                                              batch["masked_lm_ids"])}
        if nsp:
            losses["next_sentence_loss"] = next_sentence_losses(
                outputs["next_sentence_logits"], batch["next_sentence_labels"])
        return losses

    def metrics_fn(outputs, batch):
        logits, ids = outputs["masked_lm_logits"], batch["masked_lm_ids"]
        weights = ops.cast(batch["masked_lm_weights"], "float32")
        count = ops.sum(weights)
        metrics = {
            accuracy_name: (ops.sum(weights * correct(logits, ids)), count),
            loss_name: (ops.sum(weights * masked_lm_losses(logits, ids)), count),
        }
        if nsp:
            logits = outputs["next_sentence_logits"]
            labels = ops.reshape(batch["next_sentence_labels"], (-1,))
            examples = ops.cast(ops.shape(labels)[0], "float32")
            metrics["next_sentence_accuracy"] = (ops.sum(correct(logits, labels)), examples)
            metrics["next_sentence_loss"] = (
                ops.sum(next_sentence_losses(logits, labels)), examples)
        return metrics

    names = (accuracy_name, loss_name) + (NEXT_SENTENCE_METRICS if nsp else ())
    return Objective(loss_weights_fn, loss_fn, metrics_fn, names)
