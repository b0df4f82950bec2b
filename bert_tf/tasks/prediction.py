"""Running a model over a finite dataset, whatever its outputs look like.

Classifiers return one logits tensor, span models a pair of start and end
logits, encoders a dict of every layer: `predict` concatenates each leaf of
the output structure over the batches and gives numpy back, in dataset
order, with a progress line about every 10 s (`WorkProgress`).
"""

import numpy as np
import tensorflow as tf

from bert_tf.training.steps import model_inputs
from bert_tf.work_progress import WorkProgress


def predict(model, dataset, jit_compile=False, work="predicting"):
    """`model`'s outputs (inference mode) over every batch of `dataset`, as numpy.

    Args:
        model: a Keras model whose inputs are (a subset of) the batch's features.
        dataset: a finite dataset of feature dicts; extra features (labels) are ignored.
        jit_compile: XLA-compile the forward pass.
        work: what the progress lines call the pass ("evaluating", "predicting").

    Returns:
        The model's output structure with each leaf concatenated on axis 0.

    Example:

    >>> import keras
    >>> inputs = {"x": keras.Input((2,), name="x")}
    >>> model = keras.Model(inputs, {"double": inputs["x"] * 2,
    ...                              "sum": keras.ops.sum(inputs["x"], 1)})
    >>> data = tf.data.Dataset.from_tensor_slices({"x": np.ones((3, 2), "float32"),
    ...                                            "label_ids": np.zeros(3)}).batch(2)
    >>> out = predict(model, data)
    >>> out["double"].shape, out["sum"].tolist()
    ((3, 2), [2.0, 2.0, 2.0])
    """
    forward = tf.function(lambda batch: model(model_inputs(model, batch), training=False),
                          jit_compile=jit_compile, autograph=False)
    cardinality = int(dataset.cardinality())
    progress = WorkProgress(work, cardinality if cardinality >= 0 else None)
    batches = []
    for batch in dataset:
        batches.append(tf.nest.map_structure(lambda t: t.numpy(), forward(batch)))
        progress.advance()
    if not batches:
        raise ValueError("nothing to predict: the dataset is empty")
    progress.close()
    return tf.nest.map_structure(lambda *leaves: np.concatenate(leaves), *batches)


def probabilities(logits):
    """Softmax over the last axis, in float64 (what the original writes to test_results.tsv).

    >>> probabilities(np.array([[0.0, np.log(3.0)]])).round(3).tolist()
    [[0.25, 0.75]]
    """
    logits = np.asarray(logits, np.float64)
    exp = np.exp(logits - logits.max(axis=-1, keepdims=True))
    return exp / exp.sum(axis=-1, keepdims=True)
