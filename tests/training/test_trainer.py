"""The training loop on one device: checkpoints, resume, NaN stop, summaries, evaluation."""

import glob
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.training.objective import LossWeights, Objective, batch_loss
from bert_tf.tasks.pretraining_inputs import left_to_right_batch
from bert_tf.training.summaries import ScalarWriter, eval_results_text
from bert_tf.training.trainer import NonFiniteLossError, Trainer
from tests_shared import file_size_limit
from training.tiny_training import BATCH, dataset_fn, examples, make_trainer


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    output_dir = tmp_path_factory.mktemp("run")
    trainer = make_trainer(output_dir)
    trainer.train(dataset_fn(), num_steps=5)
    return trainer


def test_checkpoints_at_every_period_and_at_the_end(trained):
    names = sorted(os.path.basename(p) for p in glob.glob(f"{trained.output_dir}/ckpt-*.index"))
    assert names == ["ckpt-2.index", "ckpt-4.index", "ckpt-5.index"]
    assert int(trained.global_step.numpy()) == 5
    assert int(trained.optimizer.iterations.numpy()) == 5


def test_resume_restores_weights_optimizer_and_step(trained):
    resumed = make_trainer(trained.output_dir)
    assert resumed.checkpoints.restore_latest() == 5
    for a, b in zip(resumed.model.weights, trained.model.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())
    for a, b in zip(resumed.optimizer.variables, trained.optimizer.variables):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def _scalars(folder):
    values = {}
    for path in glob.glob(f"{folder}/events.out.tfevents.*"):
        for event in tf.compat.v1.train.summary_iterator(path):
            for value in event.summary.value:
                number = tf.make_ndarray(value.tensor).item()
                values.setdefault(value.tag, []).append((event.step, number))
                assert value.metadata.plugin_data.plugin_name == "scalars"
    return values


def test_tensorboard_scalars(trained):
    scalars = _scalars(os.path.join(trained.output_dir, "train"))
    assert {"loss", "masked_lm_accuracy", "masked_lm_loss", "next_sentence_accuracy",
            "next_sentence_loss", "learning_rate", "sequences_per_second"} <= set(scalars)
    assert [step for step, _ in scalars["loss"]] == [2, 4, 5]  # one per execution
    # The rate step 5 used: linear decay from 1e-3 at update 0 to 0 at update 20, the
    # fifth update at 4 (it was logged one update ahead, at 5).
    assert scalars["learning_rate"][-1][1] == pytest.approx(1e-3 * (1 - 4 / 20))


def test_a_scalars_folder_that_cannot_be_written_is_named_in_one_line(tmp_path):
    """TensorFlow's errors named the events file over three lines; a full disk's was an
    `OutOfRangeError`, which the scripts showed with a traceback."""
    (tmp_path / "a_file").write_text("in the way")
    with pytest.raises(OSError, match=rf"^cannot write {tmp_path}/a_file/train: .*a_file is not "
                                      "a directory$"):
        ScalarWriter(str(tmp_path / "a_file" / "train"))
    writer = ScalarWriter(str(tmp_path / "train"))
    with file_size_limit(512), pytest.raises(
            OSError, match=rf"^cannot write {tmp_path}/train: File too large$"):
        for step in range(20):
            writer.write(step, {"loss": 2.5, "learning_rate": 1e-4})


def test_evaluate_equals_direct_computation(trained, tmp_path):
    results = trained.evaluate(dataset_fn(repeat=False), max_steps=3)
    model, objective = trained.model, trained.objective
    data = examples()
    losses, sums = [], {}
    for start in range(0, 3 * BATCH, BATCH):
        batch = {k: v[start:start + BATCH] for k, v in data.items()}
        outputs = model({k: batch[k] for k in model.input})
        losses.append(float(batch_loss(objective, outputs, batch)[0]))
        for name, (total, count) in objective.metrics_fn(outputs, batch).items():
            sums[name] = sums.get(name, np.zeros(2)) + [float(total), float(count)]
    assert results["global_step"] == 5
    assert results["loss"] == pytest.approx(np.mean(losses), rel=1e-5)
    for name, (total, count) in sums.items():
        assert results[name] == pytest.approx(total / count, rel=1e-5)
    lines = eval_results_text(results).splitlines()
    assert [line.split(" = ")[0] for line in lines] == sorted(results)
    assert lines[0] == "global_step = 5"
    assert set(_scalars(os.path.join(trained.output_dir, "eval"))) == set(results) - {
        "global_step"}


def test_nan_stop_keeps_a_checkpoint_whose_next_step_is_finite(tmp_path):
    """lr=1e10: the update after ckpt-3 makes weights of ~1e10 whose loss is not finite.

    (Or whose gradient is not: which one depends on the dropout masks.)

    ckpt-4 holds those weights (finite, but poisoned): it must not be the
    checkpoint left as good; resuming from the one that is, with a sane rate,
    trains on with a finite loss and finite weights.
    """
    sane = make_trainer(tmp_path, steps_per_execution=1, save_checkpoints_steps=1)
    sane.train(dataset_fn(), num_steps=3)
    wild = make_trainer(tmp_path, learning_rate=1e10, steps_per_execution=1,
                        save_checkpoints_steps=1)
    assert wild.checkpoints.restore_latest() == 3
    with pytest.raises(NonFiniteLossError, match=(
            r"(loss is nan|gradient is not finite \(loss \S+\)) at training step 5; "
            r"stopping\. Moved \S+ckpt-4, whose weights led to it, to \S+nonfinite_checkpoints\. "
            r"The last good checkpoint is \S+ckpt-3\.")):
        wild.train(dataset_fn(), num_steps=10)
    assert sorted(os.path.basename(p) for p in glob.glob(f"{tmp_path}/ckpt-*.index")) == [
        "ckpt-1.index", "ckpt-2.index", "ckpt-3.index"]
    assert os.path.exists(f"{tmp_path}/nonfinite_checkpoints/ckpt-4.index")
    assert tf.train.latest_checkpoint(str(tmp_path)).endswith("ckpt-3")
    again = make_trainer(tmp_path, steps_per_execution=1)
    assert again.checkpoints.restore_latest() == 3
    results = again.train(dataset_fn(), num_steps=4)
    assert np.isfinite(results["loss"])
    assert all(np.all(np.isfinite(w.numpy())) for w in again.model.weights)
    assert max(float(np.abs(w.numpy()).max()) for w in again.model.weights) < 100


class SquareRoot(keras.layers.Layer):
    """sqrt(w * x) at w = 0: the value is 0, its gradient x / (2 sqrt(w x)) infinite."""

    def build(self, input_shape):
        self.w = self.add_weight(shape=(), initializer="zeros", name="w")

    def call(self, x):
        return keras.ops.sqrt(self.w * x)


def test_infinite_gradient_with_finite_loss_stops_before_saving(tmp_path):
    inputs = {"x": keras.Input(shape=(), name="x")}
    model = keras.Model(inputs, SquareRoot()(inputs["x"]))
    objective = Objective(lambda batch: {"loss": LossWeights(keras.ops.ones_like(batch["x"]))},
                          lambda outputs, batch: {"loss": outputs}, lambda outputs, batch: {}, ())
    trainer = Trainer(model, keras.optimizers.SGD(0.1), objective, tf.distribute.get_strategy(),
                      str(tmp_path), global_batch_size=2, save_checkpoints_steps=1)
    data = lambda context: tf.data.Dataset.from_tensors({"x": [1.0, 2.0]}).repeat()  # noqa: E731
    with pytest.raises(NonFiniteLossError,
                       match=r"^gradient is not finite \(loss 0\) at training step 1; stopping\. "
                             r"The last good checkpoint is none\.$"):
        trainer.train(data, num_steps=3)
    assert int(trainer.global_step.numpy()) == 0
    assert not glob.glob(f"{tmp_path}/ckpt-*")


def test_float16_trains_with_loss_scaling(tmp_path):
    """(mixed_bfloat16 runs in tests/scripts/test_run_pretraining.py.)"""
    trainer = make_trainer(tmp_path, policy="mixed_float16")
    assert isinstance(trainer.optimizer, keras.optimizers.LossScaleOptimizer)
    initial_scale = float(trainer.optimizer.dynamic_scale.numpy())
    first = trainer.train(dataset_fn(), num_steps=3)
    assert np.isfinite(first["loss"])
    assert all(v.dtype == "float32" for v in trainer.model.weights)
    assert trainer.model.encoder.blocks[0].compute_dtype == "float16"
    # Finite scaled gradients: updates applied, scale kept (it grows after 2000 good steps).
    assert int(trainer.optimizer.iterations.numpy()) == 3
    assert float(trainer.optimizer.dynamic_scale.numpy()) == initial_scale


def test_left_to_right_ablation_trains(tmp_path):
    trainer = make_trainer(tmp_path, causal=True, steps_per_execution=4)
    before = trainer.evaluate(dataset_fn(False, left_to_right_batch), max_steps=4)
    trainer.train(dataset_fn(transform=left_to_right_batch), num_steps=4)
    after = trainer.evaluate(dataset_fn(False, left_to_right_batch), max_steps=4)
    assert set(after) == {"global_step", "loss", "lm_accuracy", "lm_loss"}
    assert after["lm_loss"] < before["lm_loss"]
