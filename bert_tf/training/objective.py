"""What a task gives the trainer: its losses, their weights, its metrics.

Every loss of BERT is a weighted mean over a batch's items:

    loss_term = sum(weights * per_item_loss) / (sum(weights) + epsilon)

(masked LM: items are predictions, weights `masked_lm_weights`, epsilon
1e-5; next sentence, classification, spans: items are examples with weight
1 and epsilon 0). The trainer takes the sums over the *whole* step's batch:
all replicas and all gradient-accumulation micro-batches. So a step's loss,
gradient and metrics do not depend on how the batch is split: one device,
eight GPUs or four accumulation steps give the same update for the same
examples. (A per-replica mean averaged over replicas would not: replicas
hold different numbers of masked tokens.)

To do that the trainer needs the weights before it runs the model (their
global sums scale each replica's gradient, and the model part may be
XLA-compiled, where no cross-replica sum can happen). Hence the split into
`loss_weights_fn(batch)` and `loss_fn(outputs, batch)`.
"""

import dataclasses
from typing import Callable, NamedTuple

import keras
from keras import ops


class LossWeights(NamedTuple):
    """The per-item weights of one loss term and the epsilon added to their total."""

    weights: object
    epsilon: float = 0.0


@dataclasses.dataclass(frozen=True)
class Objective:
    """The contract between a task and `bert_tf.training.trainer.Trainer`.

    Attributes:
        loss_weights_fn: `batch -> {term: LossWeights}`, from the batch alone.
        loss_fn: `(outputs, batch) -> {term: per-item losses}`, each shaped
            like its term's weights (float32).
        metrics_fn: `(outputs, batch) -> {name: (total, count)}`; a metric's
            value over any number of batches and replicas is
            sum(total) / sum(count).
        metric_names: the names `metrics_fn` returns, in order.

    Example (a classifier: mean cross-entropy and accuracy):

    >>> def loss_weights(batch):
    ...     return {"loss": LossWeights(ops.ones_like(batch["label_ids"], "float32"))}
    >>> def losses(outputs, batch):
    ...     return {"loss": keras.losses.sparse_categorical_crossentropy(
    ...         batch["label_ids"], outputs, from_logits=True)}
    >>> def metrics(outputs, batch):
    ...     correct = ops.cast(ops.argmax(outputs, -1) == batch["label_ids"], "float32")
    ...     return {"accuracy": (ops.sum(correct), ops.cast(ops.size(correct), "float32"))}
    >>> objective = Objective(loss_weights, losses, metrics, ("accuracy",))
    >>> import numpy as np
    >>> batch = {"label_ids": np.array([0, 1])}
    >>> logits = np.array([[2.0, 0.0], [3.0, 0.0]], "float32")
    >>> round(float(batch_loss(objective, logits, batch)[0]), 4)
    1.5878
    """

    loss_weights_fn: Callable
    loss_fn: Callable
    metrics_fn: Callable
    metric_names: tuple


def weight_totals(objective, batches):
    """`{term: sum of its weights}` over a sequence of (micro-)batches."""
    totals = {}
    for batch in batches:
        for term, (weights, _) in objective.loss_weights_fn(batch).items():
            total = ops.sum(ops.cast(weights, "float32"))
            totals[term] = totals[term] + total if term in totals else total
    return totals


def loss_scales(objective, batch, global_totals):
    """`{term: 1 / (global weight total + epsilon)}`, the factor each sum is scaled by."""
    return {term: 1.0 / (global_totals[term] + epsilon)
            for term, (_, epsilon) in objective.loss_weights_fn(batch).items()}


def _weighted_sums(objective, outputs, batch):
    weights = objective.loss_weights_fn(batch)
    losses = objective.loss_fn(outputs, batch)
    if set(losses) != set(weights):
        raise ValueError(f"loss_fn terms {sorted(losses)} differ from loss_weights_fn terms "
                         f"{sorted(weights)}")
    return {term: ops.sum(ops.cast(weights[term].weights, "float32") * losses[term])
            for term in sorted(losses)}


def scaled_loss(objective, outputs, batch, scales):
    """This batch's share of the step loss: sum over terms of sum(w * loss) * scale."""
    sums = _weighted_sums(objective, outputs, batch)
    return sum(sums[term] * scales[term] for term in sums)


def batch_loss(objective, outputs, batch):
    """The loss of one batch on its own: each term normalised by this batch's weights.

    Returns:
        `(total, {term: value})`.
    """
    sums = _weighted_sums(objective, outputs, batch)
    scales = loss_scales(objective, batch, weight_totals(objective, [batch]))
    terms = {term: sums[term] * scales[term] for term in sums}
    return sum(terms.values()), terms


def metric_values(sums):
    """`{name: total / count}` from accumulated `{name: (total, count)}` (0 when count is 0)."""
    return {name: float(total) / float(count) if float(count) else 0.0
            for name, (total, count) in sums.items()}
