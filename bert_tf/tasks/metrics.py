"""Evaluation metrics of the GLUE tasks, in numpy.

Each takes arrays of gold labels and predictions and returns a float;
`glue_metrics` picks the set a task reports (accuracy, plus F1 for MRPC and
QQP, Matthews correlation for CoLA, Pearson/Spearman for STS-B).
"""

import numpy as np

from bert_tf.tasks.glue_data import canonical_name


def accuracy(labels, predictions):
    """The share of predictions equal to their labels (0.0 for none).

    >>> accuracy([1, 0, 1, 1], [1, 1, 1, 0])
    0.5
    """
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    return float(np.mean(labels == predictions)) if labels.size else 0.0


def f1(labels, predictions, positive=1):
    """F1 of the positive class (MRPC and QQP report it for label 1)."""
    labels, predictions = np.asarray(labels), np.asarray(predictions)
    true_positive = np.sum((predictions == positive) & (labels == positive))
    predicted, actual = np.sum(predictions == positive), np.sum(labels == positive)
    if true_positive == 0:
        return 0.0
    precision, recall = true_positive / predicted, true_positive / actual
    return float(2 * precision * recall / (precision + recall))


def matthews_corrcoef(labels, predictions):
    """Matthews correlation of binary labels (CoLA); 0 when undefined."""
    labels, predictions = np.asarray(labels) == 1, np.asarray(predictions) == 1
    tp = float(np.sum(labels & predictions))
    tn = float(np.sum(~labels & ~predictions))
    fp = float(np.sum(~labels & predictions))
    fn = float(np.sum(labels & ~predictions))
    denominator = np.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))
    return float((tp * tn - fp * fn) / denominator) if denominator else 0.0


def pearson(labels, predictions):
    """Pearson's correlation (STS-B); 0.0 where either side is constant.

    >>> round(pearson([1, 2, 3], [2, 4, 7]), 4)
    0.9934
    """
    labels = np.asarray(labels, np.float64)
    predictions = np.asarray(predictions, np.float64)
    a, b = labels - labels.mean(), predictions - predictions.mean()
    denominator = np.sqrt(np.sum(a * a) * np.sum(b * b))
    return float(np.sum(a * b) / denominator) if denominator else 0.0


def _ranks(values):
    """Average ranks (ties share the mean of their positions), 1-based."""
    values = np.asarray(values, np.float64)
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), np.float64)
    sorted_values = values[order]
    start = 0
    for end in range(1, len(values) + 1):
        if end == len(values) or sorted_values[end] != sorted_values[start]:
            ranks[order[start:end]] = (start + end + 1) / 2.0
            start = end
    return ranks


def spearman(labels, predictions):
    """Spearman's rank correlation (STS-B): Pearson's over average ranks, ties shared.

    >>> spearman([1, 2, 3], [2, 4, 7])
    1.0
    """
    return pearson(_ranks(labels), _ranks(predictions))


_TASK_METRICS = {
    "cola": {"matthews_corrcoef": matthews_corrcoef},
    "mrpc": {"accuracy": accuracy, "f1": f1},
    "qqp": {"accuracy": accuracy, "f1": f1},
    "sts-b": {"pearson": pearson, "spearman": spearman},
}


def glue_metrics(task_name, labels, predictions):
    """`{metric name: value}` for a task (accuracy unless the task says otherwise).

    `task_name` may be a `--task_name` or a TFDS name such as `glue/stsb`.
    """
    metrics = _TASK_METRICS.get(canonical_name(task_name), {"accuracy": accuracy})
    return {name: fn(labels, predictions) for name, fn in metrics.items()}
