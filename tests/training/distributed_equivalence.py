"""Trains the same tiny pretrainer three ways on the same global batches; prints JSON.

Run as a script (the tests start it with sys.executable): logical CPU
devices must be configured before TensorFlow initialises. The runs:

* `one_device`: OneDeviceStrategy, global batch 8;
* `mirrored_xla`: MirroredStrategy over 2 logical CPUs, 4 sequences per
  replica, each replica's step XLA-compiled (without XLA the same loop runs
  on 2 worker processes in test_multi_worker.py);
* `accumulated`: one device, 2 micro-batches of 4 accumulated per step;
* `mirrored_loss_scaled`: as `mirrored_xla` without XLA, the optimizer
  wrapped in Keras' `LossScaleOptimizer` (the loss scale is a power of 2,
  so in float32 scaling and unscaling are exact): its update must run in
  each replica under a condition decided across replicas. It then runs 3
  more steps at a loss scale of 2^120, at which every gradient's norm
  overflows: each must be skipped on both replicas.

Prints, for each run but the first, the largest absolute difference of its
weights from `one_device`'s, every run's mean training loss, and what the
overflowing steps changed.
"""

import json
import sys
import tempfile

import tensorflow as tf

tf.config.set_logical_device_configuration(
    tf.config.list_physical_devices("CPU")[0], [tf.config.LogicalDeviceConfiguration()] * 2)

import keras  # noqa: E402
import numpy as np  # noqa: E402

from bert_tf.config import BertConfig  # noqa: E402
from bert_tf.data import readers  # noqa: E402
from bert_tf.modeling.pretrainer import BertPretrainer  # noqa: E402
from bert_tf.tasks.pretraining_objective import pretraining_objective  # noqa: E402
from bert_tf.training.trainer import Trainer  # noqa: E402

RECORDS = sys.argv[1]
STEPS, BATCH = 3, 8
CONFIG = BertConfig(vocab_size=30522, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                    intermediate_size=37, max_position_embeddings=128, type_vocab_size=2,
                    hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)


def dataset_fn(micro_batch):
    def make(input_context):
        # The records in file order, so every run sees the same global batches.
        return readers.pretraining_dataset(RECORDS, 128, 20, micro_batch, is_training=False,
                                           input_context=input_context).repeat()
    return make


def train(strategy, initial_weights, accumulation=1, jit_compile=False,
          loss_scaling=False):
    with strategy.scope():
        model = BertPretrainer(CONFIG)
        model.set_weights(initial_weights)
        # Plain SGD: its update is proportional to the gradient (Adam's first
        # steps are nearly its sign), so any error in the gradient shows.
        optimizer = keras.optimizers.SGD(learning_rate=0.5)
        if loss_scaling:
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
    with tempfile.TemporaryDirectory() as output_dir:
        trainer = Trainer(model, optimizer, pretraining_objective(), strategy, output_dir,
                          global_batch_size=BATCH, gradient_accumulation_steps=accumulation,
                          steps_per_execution=STEPS, jit_compile=jit_compile)
        loss = trainer.train(dataset_fn(BATCH // accumulation), STEPS)["loss"]
        weights = [w.numpy() for w in model.weights]
        overflowed = overflow(trainer, model, optimizer, weights) if loss_scaling else None
    return weights, loss, overflowed


def overflow(trainer, model, optimizer, weights):
    """`STEPS` more steps at a loss scale of 2^120, where every gradient's norm overflows.

    Returns how far the weights moved, the optimizer's step count and the
    final scale. Clipping zeroes an overflowed gradient, so the weights alone
    would not show an update that was not skipped; its step count does.
    """
    optimizer.dynamic_scale.assign(2.0**120)
    trainer.train(dataset_fn(BATCH), 2 * STEPS)
    return {"moved": largest_difference(weights, [w.numpy() for w in model.weights]),
            "iterations": int(optimizer.iterations.numpy()),
            "scale": float(optimizer.dynamic_scale.numpy())}


def largest_difference(weights, others):
    return max(float(np.abs(a - b).max()) for a, b in zip(weights, others))


def main():
    one_device = tf.distribute.OneDeviceStrategy("/cpu:0")
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0", "/cpu:1"])
    with one_device.scope():
        initial = BertPretrainer(CONFIG).get_weights()
    runs = {
        "one_device": train(one_device, initial),
        "mirrored_xla": train(mirrored, initial, jit_compile=True),
        "accumulated": train(one_device, initial, accumulation=2),
        "mirrored_loss_scaled": train(mirrored, initial, loss_scaling=True),
    }
    reference = runs["one_device"][0]
    report = {"replicas": mirrored.num_replicas_in_sync,
              "moved": largest_difference(reference, initial),
              "losses": {name: loss for name, (_, loss, _) in runs.items()},
              "max_weight_difference": {
                  name: largest_difference(reference, weights)
                  for name, (weights, _, _) in runs.items() if name != "one_device"},
              "overflowed": runs["mirrored_loss_scaled"][2]}
    print("RESULT " + json.dumps(report))


if __name__ == "__main__":
    main()
