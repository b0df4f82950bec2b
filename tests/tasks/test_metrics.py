"""Our GLUE metrics equal scikit-learn's and scipy's on random and edge-case inputs."""

import numpy as np
import pytest
import scipy.stats
import sklearn.metrics

from bert_tf.tasks import metrics


@pytest.mark.parametrize("seed", range(5))
def test_classification_metrics_match_sklearn(seed):
    rng = np.random.default_rng(seed)
    labels, predictions = rng.integers(0, 2, 200), rng.integers(0, 2, 200)
    assert metrics.accuracy(labels, predictions) == pytest.approx(
        sklearn.metrics.accuracy_score(labels, predictions), abs=1e-12)
    assert metrics.f1(labels, predictions) == pytest.approx(
        sklearn.metrics.f1_score(labels, predictions), abs=1e-12)
    assert metrics.matthews_corrcoef(labels, predictions) == pytest.approx(
        sklearn.metrics.matthews_corrcoef(labels, predictions), abs=1e-12)


def test_degenerate_predictions():
    labels, constant = np.array([0, 1, 1, 0]), np.zeros(4, int)
    assert metrics.matthews_corrcoef(labels, constant) == sklearn.metrics.matthews_corrcoef(
        labels, constant) == 0.0
    assert metrics.f1(labels, constant) == 0.0


@pytest.mark.parametrize("seed", range(5))
def test_correlations_match_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    labels = np.round(rng.uniform(0, 5, 300), 1)  # many ties, like STS-B scores
    predictions = labels + rng.normal(0, 1, 300)
    predictions[:50] = np.round(predictions[:50])
    assert metrics.pearson(labels, predictions) == pytest.approx(
        scipy.stats.pearsonr(labels, predictions)[0], abs=1e-12)
    assert metrics.spearman(labels, predictions) == pytest.approx(
        scipy.stats.spearmanr(labels, predictions)[0], abs=1e-12)


def test_task_metric_sets():
    assert set(metrics.glue_metrics("MRPC", [1, 0], [1, 1])) == {"accuracy", "f1"}
    assert set(metrics.glue_metrics("cola", [1, 0], [1, 1])) == {"matthews_corrcoef"}
    assert set(metrics.glue_metrics("STS-B", [1.0, 0.0], [1.0, 0.5])) == {"pearson", "spearman"}
    assert set(metrics.glue_metrics("rte", [1, 0], [1, 1])) == {"accuracy"}


def test_tfds_names_pick_the_task_metrics():
    assert set(metrics.glue_metrics("glue/stsb", [1.0, 0.0], [1.0, 0.5])) == {"pearson", "spearman"}
    assert set(metrics.glue_metrics("glue/mrpc", [1, 0], [1, 1])) == {"accuracy", "f1"}
