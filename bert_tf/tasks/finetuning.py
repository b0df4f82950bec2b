"""The fine-tuning flow that every task runner shares.

A task gives a model builder, its `Objective` and its input functions; this
module does the rest the same way for all of them: build model and
optimizer under the strategy (and dtype policy), resume from `output_dir`
or start from `--init_checkpoint`, and train for a number of epochs with
linear warmup over `warmup_proportion` of the steps, as the original's
runners do.
"""

import dataclasses

from bert_tf.training import precision
from bert_tf.training.init_checkpoint import initialize_from_checkpoint
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.trainer import Trainer


@dataclasses.dataclass
class FineTuningOptions:
    """How to train: the original runners' hyper-parameters plus our speed switches."""

    output_dir: str
    train_batch_size: int = 32
    learning_rate: float = 5e-5
    num_train_epochs: float = 3.0
    warmup_proportion: float = 0.1
    optimizer: str = "adamw"
    mixed_precision: str = "float32"
    jit_compile: bool = False
    gradient_accumulation_steps: int = 1
    steps_per_execution: int = 100
    save_checkpoints_steps: int = 1000

    @property
    def micro_batch_size(self):
        return self.train_batch_size // self.gradient_accumulation_steps


def num_train_steps(num_examples, batch_size, num_epochs):
    """Optimizer steps for `num_epochs` over `num_examples` (at least 1), as the original."""
    return max(1, int(num_examples / batch_size * num_epochs))


def build_trainer(model_fn, objective, strategy, options, train_steps, init_checkpoint=None):
    """Builds the model and a `Trainer` for it, restored or initialised.

    Args:
        model_fn: `() -> keras.Model`, called under the strategy's scope.
        objective: the task's `Objective`.
        strategy: a `tf.distribute.Strategy`.
        options: `FineTuningOptions`.
        train_steps: the optimizer steps of the whole run (for the schedule).
        init_checkpoint: weights to start from when `output_dir` holds no
            checkpoint of this run (original TF1, HF safetensors, ours).

    Returns:
        The `Trainer`; its `model` holds the weights.
    """
    with precision.dtype_policy(options.mixed_precision), strategy.scope():
        model = model_fn()
        optimizer = create_optimizer(
            options.learning_rate, train_steps, int(train_steps * options.warmup_proportion),
            options.optimizer, loss_scale=precision.needs_loss_scaling(options.mixed_precision))
    trainer = Trainer(
        model, optimizer, objective, strategy, options.output_dir,
        global_batch_size=options.train_batch_size,
        gradient_accumulation_steps=options.gradient_accumulation_steps,
        steps_per_execution=options.steps_per_execution,
        save_checkpoints_steps=options.save_checkpoints_steps,
        jit_compile=options.jit_compile)
    if trainer.restore_latest() is None and init_checkpoint:
        initialize_from_checkpoint(model, init_checkpoint)
    return trainer
