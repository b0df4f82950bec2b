"""The losses and per-item metrics every task family builds its `Objective` from.

Cross-entropy is written once, here: the fused softmax cross-entropy of
`keras.ops` (half the time of a log-softmax and a gather), in float32 even
under a mixed-precision policy. It takes numpy arrays as well as tensors,
so evaluation code scores predictions with the same function training uses.

Over a vocabulary's worth of classes (the masked LM's 30522), traced on a
CPU, the cross-entropy and its gradient are each one XLA-compiled pass
(`xla_cross_entropy`). Forward and backward over 640 x 30522 logits took
79 ms with TensorFlow's kernel and 30 ms with XLA on the Intel AMX
machine (169 and 84 ms on the AVX2 AMD one); the BERT-Mini pretraining
step ran 1.03x-1.05x faster on the AMX machine (Small: level; AVX2: within
its noise). Classification's few classes and eager scoring keep Keras' op.

The arg-max of `correct` is TensorFlow's own: `keras.ops.argmax` first
rewrites every -0.0 in its input (five extra passes over the logits), which
over the masked LM's 640 x 30522 logits cost about 4% of a BERT-Mini
pretraining step (`bench/step_ablation.py`).
"""

import functools

import tensorflow as tf
from keras import ops

from bert_tf.cpu_features import cpu_only_tensorflow
from bert_tf.tasks.batching import LABEL_KEY
from bert_tf.training.objective import LossWeights, Objective


# The weight of each token in a tagging batch: 1 on the first piece of a word, else 0.
WEIGHTS_KEY = "label_weights"
# Classes from which a traced cross-entropy on a CPU takes the XLA-compiled form.
XLA_CROSS_ENTROPY_MIN_CLASSES = 1024


def cross_entropy(logits, labels):
    """Per-item negative log-likelihood of integer `labels` under `logits` (float32).

    >>> import numpy as np
    >>> round(float(cross_entropy(np.zeros((1, 4)), np.array([2]))[0]), 5)
    1.38629
    """
    logits, labels = ops.cast(logits, "float32"), ops.cast(labels, "int32")
    if (logits.shape[-1] or 0) >= XLA_CROSS_ENTROPY_MIN_CLASSES and (
            not tf.executing_eagerly() and cpu_only_tensorflow()):
        return xla_cross_entropy(logits, labels)
    return ops.sparse_categorical_crossentropy(labels, logits, from_logits=True)


@tf.custom_gradient
def xla_cross_entropy(logits, labels):
    """`cross_entropy` of float32 `logits` and int32 `labels`, forward and backward each by XLA."""
    forward, backward = _xla_cross_entropy_passes()
    return forward(logits, labels), lambda upstream: (backward(logits, labels, upstream), None)


@functools.cache
def _xla_cross_entropy_passes():
    @tf.function(jit_compile=True, autograph=False)
    def forward(logits, labels):
        return tf.nn.sparse_softmax_cross_entropy_with_logits(labels, logits)

    @tf.function(jit_compile=True, autograph=False)
    def backward(logits, labels, upstream):
        one_hot = tf.one_hot(labels, tf.shape(logits)[-1], dtype=logits.dtype)
        return (tf.nn.softmax(logits) - one_hot) * upstream[..., None]

    return forward, backward


def correct(logits, labels):
    """1.0 where the arg-max of `logits` is the label, else 0.0 (float32).

    >>> import numpy as np
    >>> correct(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([1, 1])).numpy().tolist()
    [1.0, 0.0]
    """
    predictions = tf.argmax(logits, axis=-1, output_type=tf.int32)
    return ops.cast(predictions == ops.cast(labels, "int32"), "float32")


def _one_weight_per_example(batch):
    return {"loss": LossWeights(ops.ones_like(batch[LABEL_KEY], "float32"))}


def _classification_losses(logits, batch):
    return {"loss": cross_entropy(logits, batch[LABEL_KEY])}


def _accuracy(logits, batch):
    hits = correct(logits, batch[LABEL_KEY])
    return {"accuracy": (ops.sum(hits), ops.cast(ops.size(hits), "float32"))}


def _regression_losses(logits, batch):
    return {"loss": ops.square(ops.cast(logits[:, 0], "float32")
                               - ops.cast(batch[LABEL_KEY], "float32"))}


def _no_metrics(logits, batch):
    return {}


def classification_objective(is_regression=False):
    """Mean cross-entropy and accuracy over `label_ids`; mean squared error for regression.

    Serves every task whose model gives one logits row per example
    (classification, multiple choice over its choices).

    >>> import numpy as np
    >>> from bert_tf.training.objective import batch_loss
    >>> total, _ = batch_loss(classification_objective(), np.zeros((2, 2), "float32"),
    ...                       {"label_ids": np.array([0, 1])})
    >>> round(float(total), 5)
    0.69315
    """
    if is_regression:
        return Objective(_one_weight_per_example, _regression_losses, _no_metrics, ())
    return Objective(_one_weight_per_example, _classification_losses, _accuracy, ("accuracy",))


def _tag_weights(batch):
    return {"loss": LossWeights(batch[WEIGHTS_KEY])}


def _tag_losses(logits, batch):
    return {"loss": cross_entropy(logits, batch[LABEL_KEY])}


def _tag_accuracy(logits, batch):
    weights = ops.cast(batch[WEIGHTS_KEY], "float32")
    return {"accuracy": (ops.sum(correct(logits, batch[LABEL_KEY]) * weights),
                         ops.sum(weights))}


def tagging_objective():
    """Mean cross-entropy and accuracy over the first pieces of words (`label_weights`).

    Other tokens (later pieces, `[CLS]`, `[SEP]`, padding) have weight 0 and
    change nothing, whatever their logits:

    >>> import numpy as np
    >>> from bert_tf.training.objective import batch_loss
    >>> logits = np.array([[[0.0, 0.0], [50.0, -50.0]]], "float32")
    >>> batch = {"label_ids": np.array([[0, 1]]), "label_weights": np.array([[1.0, 0.0]])}
    >>> round(float(batch_loss(tagging_objective(), logits, batch)[0]), 5)
    0.69315
    """
    return Objective(_tag_weights, _tag_losses, _tag_accuracy, ("accuracy",))
