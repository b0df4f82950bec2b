"""A tiny pretraining model, its synthetic data and `Trainer`, shared by the trainer tests."""

import numpy as np
import tensorflow as tf

from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.training import precision
from bert_tf.training.optimization import create_optimizer
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.training.trainer import Trainer

CONFIG = BertConfig(vocab_size=99, hidden_size=32, num_hidden_layers=1, num_attention_heads=4,
                    intermediate_size=37, max_position_embeddings=64, type_vocab_size=2)
BATCH, LENGTH, PREDICTIONS = 4, 16, 4


def examples(count=32, seed=0):
    """Pretraining features with padding, padded prediction slots and both NSP labels."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(6, LENGTH + 1, count)
    mask = (np.arange(LENGTH)[None, :] < lengths[:, None]).astype("int32")
    ids = rng.integers(5, CONFIG.vocab_size, (count, LENGTH)).astype("int32") * mask
    positions = np.sort(np.argsort(rng.random((count, 6)), axis=1)[:, :PREDICTIONS] + 1,
                        axis=1).astype("int32")
    weights = (rng.random((count, PREDICTIONS)) < 0.8).astype("float32")
    return {"input_ids": ids, "input_mask": mask, "segment_ids": (np.arange(LENGTH) >= 8) * mask,
            "masked_lm_positions": positions * weights.astype("int32"),
            "masked_lm_ids": rng.integers(5, CONFIG.vocab_size, (count, PREDICTIONS)).astype(
                "int32") * weights.astype("int32"),
            "masked_lm_weights": weights,
            "next_sentence_labels": rng.integers(0, 2, (count, 1)).astype("int32")}


def dataset_fn(repeat=True, transform=None, batch=BATCH):
    def make(input_context=None):
        dataset = tf.data.Dataset.from_tensor_slices(examples())
        dataset = dataset.repeat() if repeat else dataset
        dataset = dataset.batch(batch, drop_remainder=True)
        return dataset.map(transform) if transform else dataset
    return make


def make_trainer(output_dir, policy="float32", causal=False, learning_rate=1e-3, config=CONFIG,
                 **kwargs):
    """A Trainer of a tiny pretraining model (default: 3 steps per call, a checkpoint every 2).

    Calls keep their sizes (`max_call_seconds=None`), so tests can count them;
    test_call_sizes.py runs the time-bounded ones.
    """
    strategy = tf.distribute.get_strategy()
    with precision.dtype_policy(policy):
        model = BertPretrainer(config, nsp=not causal, causal=causal)
    optimizer = create_optimizer(learning_rate, num_train_steps=20, num_warmup_steps=2,
                                 loss_scale=precision.needs_loss_scaling(policy))
    kwargs = dict(dict(steps_per_execution=3, save_checkpoints_steps=2, max_call_seconds=None),
                  **kwargs)
    return Trainer(model, optimizer, pretraining_objective(not causal, causal), strategy,
                   str(output_dir), global_batch_size=BATCH, **kwargs)
