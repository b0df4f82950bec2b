"""Evaluation and prediction report how far they are: a line per interval, one at the end."""

import keras
import numpy as np
import tensorflow as tf

from bert_tf.tasks.prediction import predict
from bert_tf.work_progress import WorkProgress
from training.tiny_training import dataset_fn, make_trainer


def _lines(caplog, what):
    return [r.getMessage() for r in caplog.records if r.getMessage().startswith(what)]


def test_a_line_per_interval_with_share_and_time_left_where_the_total_is_known(caplog):
    with caplog.at_level("INFO"):
        every_batch = WorkProgress("predicting", total=4, every_seconds=0)
        for _ in range(4):
            every_batch.advance()
        rarely = WorkProgress("evaluating", total=None, every_seconds=3600)
        for _ in range(3):
            rarely.advance()
        rarely.close()
    shown = _lines(caplog, "predicting")
    assert [line.split(" batches")[0] for line in shown] == [
        "predicting: 1/4", "predicting: 2/4", "predicting: 3/4", "predicting: 4/4"]
    assert "(50%)" in shown[1] and shown[1].endswith(" left")
    closing = _lines(caplog, "evaluating")  # no total, no interval passed: the last line only
    assert len(closing) == 1 and closing[0].startswith("evaluating: 3 batches in ")


def test_predict_and_evaluate_end_with_the_batches_they_ran(tmp_path, caplog):
    inputs = {"x": keras.Input((2,), name="x")}
    model = keras.Model(inputs, inputs["x"] * 2)
    data = tf.data.Dataset.from_tensor_slices({"x": np.ones((5, 2), "float32")}).batch(2)
    trainer = make_trainer(tmp_path)
    with caplog.at_level("INFO"):
        assert predict(model, data).shape == (5, 2)
        trainer.evaluate(dataset_fn(repeat=False), max_steps=3)
    assert [line.split(" in ")[0] for line in _lines(caplog, "predicting")] == [
        "predicting: 3 batches"]
    assert [line.split(" in ")[0] for line in _lines(caplog, "evaluating: ")] == [
        "evaluating: 3 batches"]
