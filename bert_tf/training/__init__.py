"""Training: optimizer recipe, strategies, precision, and the one distributed loop.

A task gives `Trainer` a Keras model and optimizer (built in the strategy's
scope), an `Objective` (its losses, their weights and its metrics) and input
functions; see `bert_tf.training.trainer`.
"""

from bert_tf.training.distribution import STRATEGIES, get_strategy, is_chief
from bert_tf.training.objective import LossWeights, Objective, batch_loss
from bert_tf.training.optimization import create_optimizer, learning_rate_schedule
from bert_tf.training.trainer import NonFiniteLossError, Trainer

__all__ = [
    "LossWeights", "NonFiniteLossError", "Objective", "STRATEGIES", "Trainer", "batch_loss",
    "create_optimizer", "get_strategy", "is_chief", "learning_rate_schedule",
]
