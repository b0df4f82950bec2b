"""The training loop on one device: checkpoints, resume, NaN stop, summaries, evaluation."""

import glob
import os

import keras
import numpy as np
import pytest
import tensorflow as tf

from bert_tf.config import BertConfig
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.training import precision
from bert_tf.training.objective import batch_loss
from bert_tf.training.optimization import create_optimizer
from bert_tf.tasks.pretraining_inputs import left_to_right_batch
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.training.summaries import write_eval_results
from bert_tf.training.trainer import NonFiniteLossError, Trainer

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


def dataset_fn(repeat=True, transform=None):
    def make(input_context=None):
        dataset = tf.data.Dataset.from_tensor_slices(examples())
        dataset = dataset.repeat() if repeat else dataset
        dataset = dataset.batch(BATCH, drop_remainder=True)
        return dataset.map(transform) if transform else dataset
    return make


def make_trainer(output_dir, policy="float32", causal=False, **kwargs):
    strategy = tf.distribute.get_strategy()
    with precision.dtype_policy(policy):
        model = BertPretrainer(CONFIG, nsp=not causal, causal=causal)
    optimizer = create_optimizer(1e-3, num_train_steps=20, num_warmup_steps=2,
                                 loss_scale=precision.needs_loss_scaling(policy))
    kwargs = dict(dict(steps_per_execution=3, save_checkpoints_steps=2), **kwargs)
    return Trainer(model, optimizer, pretraining_objective(not causal), strategy,
                   str(output_dir), global_batch_size=BATCH, **kwargs)


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
    assert resumed.restore_latest() == 5
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
    # The rate after step 5: linear decay from 1e-3 at step 0 to 0 at step 20.
    assert scalars["learning_rate"][-1][1] == pytest.approx(1e-3 * (1 - 5 / 20))


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
    write_eval_results(str(tmp_path / "eval_results.txt"), results)
    lines = (tmp_path / "eval_results.txt").read_text().splitlines()
    assert [line.split(" = ")[0] for line in lines] == sorted(results)
    assert lines[0] == "global_step = 5"
    assert set(_scalars(os.path.join(trained.output_dir, "eval"))) == set(results) - {
        "global_step"}


def test_nan_loss_stops_with_step_and_keeps_last_good_checkpoint(tmp_path):
    trainer = make_trainer(tmp_path, steps_per_execution=2)
    trainer.train(dataset_fn(), num_steps=2)
    kernel = trainer.model.encoder.blocks[0].intermediate.kernel
    kernel.assign(np.full(kernel.shape, np.nan, "float32"))
    with pytest.raises(NonFiniteLossError, match=r"loss is nan at training step 3.*ckpt-2"):
        trainer.train(dataset_fn(), num_steps=6)
    assert int(trainer.global_step.numpy()) == 2
    assert sorted(glob.glob(f"{tmp_path}/ckpt-*.index")) == [f"{tmp_path}/ckpt-2.index"]
    fresh = make_trainer(tmp_path)
    assert fresh.restore_latest() == 2
    assert np.all(np.isfinite(fresh.model.encoder.blocks[0].intermediate.kernel.numpy()))


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
    assert set(after) == {"global_step", "loss", "masked_lm_accuracy", "masked_lm_loss"}
    assert after["masked_lm_loss"] < before["masked_lm_loss"]
