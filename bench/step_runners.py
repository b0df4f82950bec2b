"""One training step per call, ours and PyTorch's, on one fixed batch: what step benches time.

Ours is a call of `Trainer.train_steps` (the loop every runner uses: forward,
losses, backward, clipping, optimizer update, finite checks) for one step
on the same batch every time. PyTorch's is a loss function followed by
`hf_recipe.update` (backward, clip to 1.0, AdamW with the original's decay
groups), optionally under `torch.autocast` for bfloat16. Both run with
dropout on. Each runner returns the step's loss, so the timed work cannot
be skipped. `pretraining_batch` is the fixed batch of the pretraining
benches (real records written by the original tool), `pretraining_step`
our step on it, and `keras_adamw` Keras' own AdamW with the same recipe.
"""

import pathlib
import tempfile

import keras
import tensorflow as tf
import torch

from bert_tf.data import readers
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.training.optimization import (NO_DECAY_NAMES, create_optimizer,
                                           learning_rate_schedule)
from bert_tf.training.trainer import Trainer
import hf_recipe

# Real pretraining records written by the original tool (../shared/data).
RECORDS = pathlib.Path(__file__).resolve().parent.parent.parent / (
    "shared/data/golden/sample_text_seed12345_dupe10.tfrecord")
SEQ_LENGTH, PREDICTIONS = 128, 20


def pretraining_batch(batch_size):
    """The first `batch_size` records of `RECORDS` (seq 128, 20 predictions) as numpy arrays."""
    dataset = readers.pretraining_dataset(str(RECORDS), SEQ_LENGTH, PREDICTIONS, batch_size,
                                          is_training=False)
    return {name: value.numpy() for name, value in next(iter(dataset.repeat())).items()}


def trainer_step(trainer, batch):
    """A call running one `trainer.train_steps` step on `batch` (a dict of arrays)."""
    iterator = iter(trainer.strategy.distribute_datasets_from_function(
        lambda context: tf.data.Dataset.from_tensors(batch).repeat()))
    one = tf.constant(1)
    return lambda: float(trainer.train_steps(iterator, one)[1])


def pretraining_step(model, batch, optimizer=None, jit_compile=False):
    """A `trainer_step` call of a pretraining `Trainer` of `model` on `batch`.

    `optimizer`: None for the runners' (`create_optimizer`, peak rate 1e-4).
    """
    trainer = Trainer(model, optimizer or create_optimizer(1e-4, 10000, 100),
                      pretraining_objective(), tf.distribute.get_strategy(),
                      tempfile.mkdtemp(), global_batch_size=len(batch["input_ids"]),
                      jit_compile=jit_compile)
    return trainer_step(trainer, batch)


def keras_adamw(global_clipnorm=None):
    """Keras' own AdamW with `create_optimizer`'s recipe (ours fuses the Adam step).

    `global_clipnorm`: Keras' clipping, for a model that `Trainer` does not clip.
    """
    optimizer = keras.optimizers.AdamW(learning_rate_schedule(1e-4, 10000, 100),
                                       weight_decay=0.01, beta_1=0.9, beta_2=0.999,
                                       epsilon=1e-6, global_clipnorm=global_clipnorm)
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY_NAMES))
    return optimizer


def autocast(dtype):
    """`torch.autocast` on the CPU to `dtype` (e.g. `torch.bfloat16`); None: off (float32)."""
    return torch.autocast("cpu", dtype=dtype, enabled=dtype is not None)


def torch_step(model, step_loss, learning_rate, autocast_dtype=None):
    """A call of one AdamW step of `model` on the loss `step_loss()` returns.

    Args:
        model: a `torch.nn.Module`; put in training mode (dropout on).
        step_loss: no-argument function computing the loss on the fixed batch.
        learning_rate: AdamW's learning rate.
        autocast_dtype: e.g. `torch.bfloat16` to compute the forward pass
            under `torch.autocast("cpu")`; None: float32.
    """
    optimizer = hf_recipe.adamw(model, learning_rate)
    model.train()

    def step():
        with autocast(autocast_dtype):
            loss = step_loss()
        return hf_recipe.update(model, optimizer, loss)

    return step
