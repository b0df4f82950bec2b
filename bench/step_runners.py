"""One training step per call, ours and PyTorch's, on one fixed batch: what step benches time.

Ours is a call of `Trainer.train_steps` (the loop every runner uses: forward,
losses, backward, clipping, optimizer update, finite checks) for one step
on the same batch every time. PyTorch's is a loss function followed by
`hf_recipe.update` (backward, clip to 1.0, AdamW with the original's decay
groups), optionally under `torch.autocast` for bfloat16 or float16 (with
dynamic loss scaling), on the CPU or a CUDA GPU. Both run with dropout on.
Each runner returns the step's loss, so the timed work cannot be skipped.
`pretraining_batch` is the fixed batch of the pretraining benches (real
records written by the original tool), `pretraining_step` our step on it,
`hf_pretraining_loss` HuggingFace's loss on it, and `keras_adamw` Keras'
own AdamW with the same recipe. `classification_batch` turns that batch
into sentence pairs labelled by their next-sentence labels, for
`classification_step` and `hf_classification_loss`.
"""

import tempfile

import keras
import tensorflow as tf

import peers

with peers.needed():
    import torch

from bert_tf.data import readers
from bert_tf.tasks.losses import classification_objective
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.training.optimization import (NO_DECAY_NAMES, create_optimizer,
                                           learning_rate_schedule)
from bert_tf.training.trainer import Trainer
import hf_recipe
from shared_data import GOLDEN_RECORDS as RECORDS, require

SEQ_LENGTH, PREDICTIONS = 128, 20


def pretraining_batch(batch_size, records=RECORDS):
    """The first `batch_size` records of `records` (seq 128, 20 predictions) as numpy arrays.

    A file of fewer records is read again from its start.
    """
    require(records)
    dataset = readers.pretraining_dataset(str(records), SEQ_LENGTH, PREDICTIONS, batch_size,
                                          is_training=False)
    return {name: value.numpy() for name, value in next(iter(dataset.repeat())).items()}


def trainer_step(trainer, batch):
    """A call running one `trainer.train_steps` step on `batch` (a dict of arrays)."""
    iterator = iter(trainer.strategy.distribute_datasets_from_function(
        lambda context: tf.data.Dataset.from_tensors(batch).repeat()))
    one = tf.constant(1)
    return lambda: float(trainer.train_steps(iterator, one)[1])


def _objective_step(model, objective, batch, optimizer, jit_compile):
    """A `trainer_step` call of a one-device `Trainer` of `model` and `objective` on `batch`."""
    trainer = Trainer(model, optimizer, objective, tf.distribute.get_strategy(),
                      tempfile.mkdtemp(), global_batch_size=len(batch["input_ids"]),
                      jit_compile=jit_compile)
    return trainer_step(trainer, batch)


def pretraining_step(model, batch, optimizer=None, jit_compile=False):
    """A `trainer_step` call of a pretraining `Trainer` of `model` on `batch`.

    `optimizer`: None for the runners' (`create_optimizer`, peak rate 1e-4).
    """
    return _objective_step(model, pretraining_objective(), batch,
                           optimizer or create_optimizer(1e-4, 10000, 100), jit_compile)


def classification_batch(batch):
    """`batch`'s token ids, mask and segments, its next-sentence labels as `label_ids`."""
    pairs = {name: batch[name] for name in ("input_ids", "input_mask", "segment_ids")}
    return dict(pairs, label_ids=batch["next_sentence_labels"][:, 0])


def classification_step(model, batch, optimizer, jit_compile=False):
    """A `trainer_step` call of a classification `Trainer` of `model` (logits) on `batch`."""
    return _objective_step(model, classification_objective(), batch, optimizer, jit_compile)


def keras_adamw(global_clipnorm=None):
    """Keras' own AdamW with `create_optimizer`'s recipe (ours fuses the Adam step).

    `global_clipnorm`: Keras' clipping, for a model that `Trainer` does not clip.
    """
    optimizer = keras.optimizers.AdamW(learning_rate_schedule(1e-4, 10000, 100),
                                       weight_decay=0.01, beta_1=0.9, beta_2=0.999,
                                       epsilon=1e-6, global_clipnorm=global_clipnorm)
    optimizer.exclude_from_weight_decay(var_names=list(NO_DECAY_NAMES))
    return optimizer


def autocast(dtype, device_type="cpu"):
    """`torch.autocast` on `device_type` to `dtype` (e.g. `torch.bfloat16`); None: off (float32)."""
    return torch.autocast(device_type, dtype=dtype, enabled=dtype is not None)


def torch_step(model, step_loss, learning_rate, autocast_dtype=None, device_type="cpu"):
    """A call of one AdamW step of `model` on the loss `step_loss()` returns.

    Args:
        model: a `torch.nn.Module` on `device_type`; put in training mode
            (dropout on).
        step_loss: no-argument function computing the loss on the fixed batch.
        learning_rate: AdamW's learning rate.
        autocast_dtype: e.g. `torch.bfloat16` to compute the forward pass
            under `torch.autocast`; `torch.float16` adds dynamic loss
            scaling; None: float32.
        device_type: "cpu" or "cuda"; on CUDA, AdamW is PyTorch's fused
            kernel (its fastest).
    """
    on_gpu = device_type == "cuda"
    optimizer = hf_recipe.adamw(model, learning_rate, fused=True if on_gpu else None)
    scaler = torch.amp.GradScaler(device_type) if autocast_dtype == torch.float16 else None
    model.train()

    def step():
        with autocast(autocast_dtype, device_type):
            loss = step_loss()
        return hf_recipe.update(model, optimizer, loss, scaler)

    return step


def hf_pretraining_loss(model, batch, device="cpu"):
    """The loss function of `transformers.BertForPreTraining` `model` on `batch`, as ours computes it.

    The masked-LM head runs on the gathered prediction positions only (as
    ours does, rather than on every position), the masked-LM loss is the
    weighted mean over real predictions, plus the next-sentence loss.
    """
    t = {k: torch.from_numpy(v).to(device) for k, v in batch.items()}
    rows = torch.arange(len(batch["input_ids"]), device=device)[:, None]

    def step_loss():
        outputs = model.bert(input_ids=t["input_ids"].long(),
                             attention_mask=t["input_mask"].long(),
                             token_type_ids=t["segment_ids"].long())
        gathered = outputs.last_hidden_state[rows, t["masked_lm_positions"].long()]
        logits = model.cls.predictions(gathered)
        nll = torch.nn.functional.cross_entropy(
            logits.transpose(1, 2).float(), t["masked_lm_ids"].long(), reduction="none")
        weights = t["masked_lm_weights"]
        next_sentence = torch.nn.functional.cross_entropy(
            model.cls.seq_relationship(outputs.pooler_output).float(),
            t["next_sentence_labels"][:, 0].long())
        return (weights * nll).sum() / (weights.sum() + 1e-5) + next_sentence

    return step_loss


def hf_classification_loss(model, batch, device="cpu"):
    """The loss function of `transformers.BertForSequenceClassification` `model` on `batch`."""
    inputs = {"input_ids": batch["input_ids"], "attention_mask": batch["input_mask"],
              "token_type_ids": batch["segment_ids"], "labels": batch["label_ids"]}
    inputs = {name: torch.from_numpy(value).long().to(device) for name, value in inputs.items()}
    return lambda: model(**inputs).loss
