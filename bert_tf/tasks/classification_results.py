"""Scores, result files and the base class of tasks that give one logits row per example.

Classification and multiple choice (and STS-B regression) report what the
original's `eval_results.txt` holds, for every task: `eval_accuracy`,
`eval_loss` and `loss` (the mean over evaluation batches of each batch's
mean loss, as an Estimator reports it), plus the task's own GLUE metrics;
their `test_results.tsv` holds one line of class probabilities per example.
"""

import functools
import os

import numpy as np

from bert_tf.atomic_files import write_text
from bert_tf.tasks.losses import classification_objective, cross_entropy
from bert_tf.tasks.metrics import glue_metrics
from bert_tf.tasks.prediction import probabilities
from bert_tf.tasks.task import Task
from bert_tf.tokenization import BertPreprocessor

TEST_RESULTS = "test_results.tsv"  # the original's name


def evaluation_results(task_name, logits, labels, batch_size, is_regression=False):
    """`eval_*` metrics, `eval_loss` and `loss` of dev-set logits.

    Args:
        task_name: picks the GLUE metrics (`glue_metrics`).
        logits: `[N, classes]` (or `[N, 1]` scores for regression).
        labels: `[N]` class ids (or scores).
        batch_size: the evaluation batch, for the per-batch `loss`.
        is_regression: squared error instead of cross-entropy.

    Example:

    >>> logits = np.log(np.array([[0.5, 0.5], [0.25, 0.75], [0.9, 0.1]]))
    >>> results = evaluation_results("cola", logits, [1, 1, 0], batch_size=2)
    >>> sorted(results)
    ['eval_accuracy', 'eval_loss', 'eval_matthews_corrcoef', 'loss']
    >>> round(results["eval_accuracy"], 4), round(results["eval_loss"], 4)
    (0.6667, 0.3621)
    >>> round(results["loss"], 4)  # mean of the two batches' means
    0.2979
    """
    labels = np.asarray(labels)
    if is_regression:
        predictions = logits[:, 0]
        losses = (predictions - labels) ** 2
    else:
        predictions = logits.argmax(axis=-1)
        losses = np.asarray(cross_entropy(logits, labels), np.float64)
    metrics = glue_metrics(task_name, labels, predictions)
    if not is_regression:
        metrics.setdefault("accuracy", float(np.mean(predictions == labels)))
    batch_means = [losses[i:i + batch_size].mean() for i in range(0, len(losses), batch_size)]
    return {**{f"eval_{name}": value for name, value in metrics.items()},
            "eval_loss": float(losses.mean()), "loss": float(np.mean(batch_means))}


def write_test_results(path, logits, is_regression=False):
    """One line per example: tab-separated class probabilities (or the score).

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "test_results.tsv")
    >>> write_test_results(path, np.log(np.array([[1.0, 3.0]])))
    >>> [round(float(p), 6) for p in open(path).read().split("\\t")]
    [0.25, 0.75]
    """
    rows = logits[:, :1] if is_regression else probabilities(logits)
    write_text(path, "".join("\t".join(str(float(v)) for v in row) + "\n" for row in rows))


class LogitsPerExampleTask(Task):
    """What classification and multiple choice share: text in, one logits row per example out.

    Subclasses set `name` and `is_regression` and provide `read_split`,
    `build_model`, `dataset` and `export`.

    Args:
        model_files: the resolved `ModelFiles` (config, vocabulary).
        max_seq_length: tokens per packed sequence.
        do_lower_case: lower-case and strip accents (uncased models).
        bilstm_units: see `Task.bilstm_units`; the head then reads the
            BiLSTM's final states, not the pooled output.
    """

    is_regression = False

    def __init__(self, model_files, max_seq_length, do_lower_case=True, bilstm_units=0):
        self.model_files = model_files
        self.max_seq_length = max_seq_length
        self.do_lower_case = do_lower_case
        self.bilstm_units = bilstm_units

    @property
    def reads_pooled_output(self):
        return not self.bilstm_units

    @functools.cached_property
    def preprocessor(self):
        """The in-graph `BertPreprocessor`, built on first use (after the strategy)."""
        return BertPreprocessor(self.model_files.vocab_file, seq_length=self.max_seq_length,
                                do_lower_case=self.do_lower_case)

    def record(self):
        return {"task": self.name, "max_seq_length": self.max_seq_length,
                "do_lower_case": self.do_lower_case}

    def objective(self):
        return classification_objective(self.is_regression)

    def evaluate(self, context, examples):
        logits = context.outputs(self, examples, context.options.eval_batch_size, "evaluating")
        return evaluation_results(self.name, logits, [e.label for e in examples],
                                  context.options.eval_batch_size, self.is_regression)

    def write_predictions(self, outputs, examples, output_dir):
        write_test_results(os.path.join(output_dir, TEST_RESULTS), outputs,
                           self.is_regression)

    output_files = (TEST_RESULTS,)
