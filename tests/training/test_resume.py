"""Resuming from an output folder whose state file or newest checkpoint is damaged,
or that holds a checkpoint of the original code; never overwriting another run's files."""

import dataclasses
import glob
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.checkpoints import CheckpointError, tf1_variable_map
from bert_tf.training.resume import ResumeError, original_checkpoint
from tests_shared import file_size_limit
from training.tiny_training import BATCH, CONFIG, dataset_fn, make_trainer


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    folder = tmp_path_factory.mktemp("finished")
    make_trainer(folder, steps_per_execution=2).train(dataset_fn(), num_steps=4)
    return folder


@pytest.fixture
def earlier_run(finished_run, tmp_path):
    """A copy of a finished run of 4 steps (ckpt-2, ckpt-4): its folder and files' bytes."""
    folder = tmp_path / "run"
    shutil.copytree(finished_run, folder)
    files = {path: open(path, "rb").read() for path in glob.glob(f"{folder}/ckpt-*")}
    return folder, files


def _weights_of(prefix):
    """The model weights stored in a training checkpoint, read into a fresh model."""
    fresh = make_trainer(os.path.dirname(prefix) + "/elsewhere")
    tf.train.Checkpoint(model=fresh.model).read(prefix).expect_partial()
    return [w.numpy() for w in fresh.model.weights]


def _assert_unchanged(files):
    for path, content in files.items():
        with open(path, "rb") as f:
            assert f.read() == content, f"{path} was overwritten"


def test_corrupt_state_file_resumes_from_the_newest_checkpoint(earlier_run):
    folder, files = earlier_run
    (folder / "checkpoint").write_text("model_checkpoint_path: {{{ not a proto")
    trainer = make_trainer(folder, steps_per_execution=2)
    assert trainer.checkpoints.restore_latest() == 4
    trainer.train(dataset_fn(), num_steps=6)
    _assert_unchanged(files)
    assert tf.train.latest_checkpoint(str(folder)).endswith("ckpt-6")


def test_newest_checkpoint_with_missing_data_falls_back_and_is_set_aside(earlier_run):
    folder, files = earlier_run
    os.remove(folder / "ckpt-4.data-00000-of-00001")
    expected = _weights_of(str(folder / "ckpt-2"))
    trainer = make_trainer(folder, steps_per_execution=2)
    assert trainer.checkpoints.restore_latest() == 2
    for ours, theirs in zip(trainer.model.weights, expected):
        np.testing.assert_array_equal(ours.numpy(), theirs)
    assert os.listdir(folder / "unreadable_checkpoints") == ["ckpt-4.index"]
    assert tf.train.latest_checkpoint(str(folder)).endswith("ckpt-2")
    assert (folder / "unreadable_checkpoints" / "ckpt-4.index").read_bytes() == files[
        str(folder / "ckpt-4.index")]


def test_truncated_newest_checkpoint_falls_back(earlier_run):
    folder, _ = earlier_run
    with open(folder / "ckpt-4.data-00000-of-00001", "r+b") as f:
        f.truncate(100)
    assert make_trainer(folder).checkpoints.restore_latest() == 2


def test_no_readable_checkpoint_is_an_error_not_a_fresh_start(earlier_run):
    folder, files = earlier_run
    for path in glob.glob(f"{folder}/ckpt-*.data-*"):
        os.remove(path)
    trainer = make_trainer(folder)
    with pytest.raises(ResumeError, match=r"no checkpoint can be read \(ckpt-4, ckpt-2 are "
                                          r"damaged or incomplete\)"):
        trainer.checkpoints.restore_latest()
    _assert_unchanged({p: c for p, c in files.items() if os.path.exists(p)})


def test_checkpoint_of_another_model_is_a_clear_error(earlier_run):
    folder, _ = earlier_run
    wider = make_trainer(folder, config=dataclasses.replace(CONFIG, intermediate_size=40))
    with pytest.raises(ResumeError, match=r"ckpt-4: this checkpoint is of another model"):
        wider.checkpoints.restore_latest()


def test_a_run_that_does_not_resume_never_overwrites_checkpoints(earlier_run):
    folder, files = earlier_run
    fresh = make_trainer(folder, steps_per_execution=2)
    with pytest.raises(CheckpointError, match=r"ckpt-2 exists and was not written by this run"):
        fresh.train(dataset_fn(), num_steps=4)
    _assert_unchanged(files)


def test_saves_add_no_tensorflow_timing_lines_to_the_log(tmp_path, caplog):
    """TensorFlow's "Sharding callback duration" line came after every save."""
    with caplog.at_level("INFO"):
        make_trainer(tmp_path, steps_per_execution=1, save_checkpoints_steps=1).train(
            dataset_fn(), num_steps=2)
    assert "step 2/2 loss=" in caplog.text  # the run's own lines still go through
    assert len(glob.glob(f"{tmp_path}/ckpt-*.index")) == 2
    assert "Sharding callback" not in caplog.text


def _write_original_checkpoint(model, folder, step):
    """What the original code's Estimator leaves: model.ckpt-N with Adam slots, global_step
    and a `checkpoint` state file (written with raw SaveV2, as that code's saver does)."""
    refs = tf1_variable_map(model)
    names, tensors = [], []
    for name, ref in sorted(refs.items()):
        value = ref.variable.numpy()
        value = value.T if ref.transposed else value
        names += [name, f"{name}/adam_m", f"{name}/adam_v"]
        tensors += [value, np.full_like(value, 0.5), np.full_like(value, 0.25)]
    names.append("global_step")
    tensors.append(np.int64(step))
    prefix = os.path.join(folder, f"model.ckpt-{step}")
    tf.raw_ops.SaveV2(prefix=prefix, tensor_names=names, shape_and_slices=[""] * len(names),
                      tensors=tensors)
    tf.compat.v1.train.update_checkpoint_state(str(folder), prefix)
    return prefix


def test_checkpoint_of_the_original_code_loads_as_weights(tmp_path):
    source = make_trainer(tmp_path / "source").model
    for variable in source.weights:  # weights unlike any fresh initialisation
        variable.assign(np.random.default_rng(len(variable.path)).normal(
            size=variable.shape).astype("float32"))
    _write_original_checkpoint(source, tmp_path, step=7)
    trainer = make_trainer(tmp_path)
    assert trainer.checkpoints.restore_latest() == 0
    assert int(trainer.global_step.numpy()) == 0
    for ours, theirs in zip(trainer.model.weights, source.weights):
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())


def test_only_readable_name_based_checkpoints_count_as_the_original_codes(tmp_path, caplog):
    model = make_trainer(tmp_path / "source").model
    tf.train.Checkpoint(model=model).write(str(tmp_path / "model.ckpt-3"))  # object-based
    assert original_checkpoint(str(tmp_path)) is None
    (tmp_path / "model.ckpt-5.index").write_bytes(b"not an sstable")
    with caplog.at_level("WARNING"):
        assert original_checkpoint(str(tmp_path)) is None
    assert "model.ckpt-5.index: unreadable" in caplog.text
    _write_original_checkpoint(model, tmp_path, step=4)
    assert original_checkpoint(str(tmp_path)) == str(tmp_path / "model.ckpt-4")


def test_a_checkpoint_of_other_loss_scaling_is_named_not_called_damaged(earlier_run):
    """Resuming a float32 run with mixed_float16 (or back) was called damaged checkpoints."""
    folder, files = earlier_run
    scaled = make_trainer(folder, policy="mixed_float16")
    with pytest.raises(ResumeError, match=r"ckpt-4: this checkpoint does not fit .* written "
                                          r"without loss scaling and this run has it"):
        scaled.checkpoints.restore_latest()
    _assert_unchanged(files)
    assert not (folder / "unreadable_checkpoints").exists()


def test_a_repaired_state_file_keeps_every_older_checkpoint_to_delete(earlier_run):
    """A run killed between a checkpoint and its state file: the manager must still see
    the older ones, or they stay beyond max_to_keep for ever."""
    folder, _ = earlier_run
    tf.compat.v1.train.update_checkpoint_state(str(folder), str(folder / "ckpt-2"),
                                               all_model_checkpoint_paths=[str(folder / "ckpt-2")])
    trainer = make_trainer(folder, steps_per_execution=2, max_checkpoints_to_keep=2)
    assert trainer.checkpoints.restore_latest() == 4
    state = tf.train.get_checkpoint_state(str(folder))
    assert [os.path.basename(p) for p in state.all_model_checkpoint_paths] == ["ckpt-2", "ckpt-4"]
    trainer.train(dataset_fn(), num_steps=6)
    assert sorted(n for n in os.listdir(folder) if n.endswith(".index")) == [
        "ckpt-4.index", "ckpt-6.index"]


@pytest.fixture(scope="module")
def stopped_at_step_2(tmp_path_factory):
    """6 steps in one run, and the first 2 from the same start in a run that stopped there.

    Returns the config (no dropout), the whole run's final weights and the
    stopped run's folder (to be copied: each resume writes into its folder).
    """
    config = dataclasses.replace(CONFIG, hidden_dropout_prob=0.0,
                                 attention_probs_dropout_prob=0.0)
    root = tmp_path_factory.mktemp("data_position")
    uninterrupted = make_trainer(root / "whole", config=config, steps_per_execution=2)
    start = uninterrupted.model.get_weights()
    uninterrupted.train(dataset_fn(), num_steps=6, resume_data_position=True)
    interrupted = make_trainer(root / "stopped", config=config, steps_per_execution=2)
    interrupted.model.set_weights(start)
    interrupted.train(dataset_fn(), num_steps=2, resume_data_position=True)
    return config, [w.numpy() for w in uninterrupted.model.weights], root / "stopped"


@pytest.mark.parametrize("resume_data_position, accumulation", [(True, 1), (False, 1), (True, 2)])
def test_a_resumed_run_trains_on_what_the_uninterrupted_run_did(stopped_at_step_2, tmp_path,
                                                                resume_data_position,
                                                                accumulation):
    """With a seeded shuffle each run sees the same batches: without skipping those of the
    steps done, a resumed run trained on the first batches again and never on the rest.
    A run moved to a device with less memory may resume with more micro-batches per step
    (`accumulation`): each step still sums the gradient of the same examples."""
    config, uninterrupted, stopped = stopped_at_step_2
    shutil.copytree(stopped, tmp_path / "resumed")
    resumed = make_trainer(tmp_path / "resumed", config=config, steps_per_execution=2,
                           gradient_accumulation_steps=accumulation)
    assert resumed.checkpoints.restore_latest() == 2
    resumed.train(dataset_fn(batch=BATCH // accumulation), num_steps=6,
                  resume_data_position=resume_data_position)
    difference = max(float(np.abs(a - b.numpy()).max())
                     for a, b in zip(uninterrupted, resumed.model.weights))
    if resume_data_position:
        assert difference < 1e-6
    else:  # the test can tell: steps 3-6 on batches 1-4 give other weights
        assert difference > 1e-4


def test_a_checkpoint_save_on_a_full_disk_names_it_and_leaves_the_earlier_ones(earlier_run):
    folder, files = earlier_run
    trainer = make_trainer(folder, steps_per_execution=2)
    assert trainer.checkpoints.restore_latest() == 4
    with file_size_limit(64 * 1024), pytest.raises(
            OSError, match=rf"^cannot write {folder}/ckpt-6: File too large$"):
        trainer.train(dataset_fn(), num_steps=6)
    assert not glob.glob(f"{folder}/ckpt-6*")  # nor the `ckpt-6_temp/` it began
    _assert_unchanged(files)
    rerun = make_trainer(folder, steps_per_execution=2)
    assert rerun.checkpoints.restore_latest() == 4
    rerun.train(dataset_fn(), num_steps=6)
    assert tf.train.latest_checkpoint(str(folder)).endswith("ckpt-6")


def test_a_run_whose_output_folder_was_deleted_or_replaced_saves_no_more(tmp_path):
    """TensorFlow made the folder again and the run ended well: its checkpoints without its
    run.json, or beside those of a new run started there (whose lock is not this run's)."""
    from bert_tf.training.run_checkpoints import RunCheckpoints
    step = tf.Variable(1, dtype=tf.int64)
    folder = tmp_path / "run"
    checkpoints = RunCheckpoints(tf.train.Checkpoint(global_step=step), None, step,
                                 str(folder), is_chief=True)
    checkpoints.save()  # makes the folder
    shutil.rmtree(folder)
    step.assign(2)
    with pytest.raises(OSError, match=rf"^cannot write {folder}/ckpt-2: {folder} was deleted or "
                                      "replaced while this run wrote to it"):
        checkpoints.save()
    assert not folder.exists()
    folder.mkdir()  # a new run's
    with pytest.raises(OSError, match="was deleted or replaced"):
        checkpoints.save()
    assert os.listdir(folder) == []


def test_workers_compare_what_they_resumed_from_by_content(finished_run, earlier_run, tmp_path):
    """What each worker of a multi-worker run gathers after restoring (`resumed_from`), and
    what every worker then says: a copy of the run's folder elsewhere resumes from the same
    start; other files of the same name, an older checkpoint or none differ."""
    from bert_tf.training.worker_agreement import different_starts, resumed_from
    copy, _ = earlier_run
    other = tmp_path / "other"
    other.mkdir()
    for path in glob.glob(f"{finished_run}/ckpt-2.*"):  # other weights named ckpt-4
        shutil.copy(path, other / os.path.basename(path).replace("ckpt-2", "ckpt-4"))
    here = resumed_from(4, str(finished_run / "ckpt-4"))
    assert resumed_from(4, str(copy / "ckpt-4")) == here
    assert different_starts([[1, 0, *here], [1, 1, *here]]) is None
    for start, said in ((resumed_from(4, str(other / "ckpt-4")), "another ckpt-4 (step 4)"),
                        (resumed_from(2, str(finished_run / "ckpt-2")), "ckpt-2 (step 2)"),
                        (resumed_from(0, None), "no checkpoint (step 0)")):
        assert different_starts([[1, 0, *here], [1, 1, *start]]) == (
            f"worker 0 from ckpt-4 (step 4), worker 1 from {said}")


def test_a_training_checkpoint_of_another_model_as_start_weights_is_named_briefly(earlier_run):
    """TensorFlow's message listed the unmatched variables with their values: 90 lines."""
    import keras

    from bert_tf.modeling import BertEncoder
    from bert_tf.training.init_checkpoint import initialize_from_checkpoint
    folder, _ = earlier_run
    encoder = BertEncoder(CONFIG)
    other = keras.Model(encoder.input, keras.layers.Dense(3)(
        encoder(encoder.input)["pooled_output"]))
    prefix = tf.train.Checkpoint(model=other).write(str(folder / "other" / "ckpt-1"))
    with pytest.raises(CheckpointError) as error:
        initialize_from_checkpoint(make_trainer(folder / "new").model, prefix)
    message = str(error.value)
    assert message.startswith(f"{prefix}: a training checkpoint of another kind of model (")
    assert "of this model's weights are not in it" in message
    assert "\n" not in message and "value=" not in message and len(message) < 300
