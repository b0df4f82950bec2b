"""What the workers of a multi-worker run compare before any work (`worker_settings`),
and what a resumed run compares with its `run.json`: files by what they hold, never by
where each host keeps them.

Two hosts keep the same release at `/home/alice/bert` and `/mnt/models/bert`: their
workers must agree; other weights written at the same path must not. Each kind of start
weights is a tiny real checkpoint (TensorFlow's own writers, safetensors' `save_file`),
and the settings are the ones each worker would all-gather, built in-process.
"""

import json
import os
import shutil

import numpy as np
import pytest
import tensorflow as tf
from safetensors.numpy import save_file

from bert_tf.tasks import runner
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tasks.glue_data import get_task
from bert_tf.tasks.run_record import record_differences, run_record
from bert_tf.tasks.worker_settings import worker_settings
from tasks.task_runs import glue_subset, quick_options, tiny_model_files

EMBEDDINGS = "bert/embeddings/word_embeddings"


def _release(folder, values):
    """An original release folder: `bert_model.ckpt`, a name-based TF1 checkpoint."""
    tf.raw_ops.SaveV2(prefix=str(folder / "bert_model.ckpt"), tensor_names=[EMBEDDINGS],
                      shape_and_slices=[""], tensors=[values])
    return str(folder)


def _training_checkpoint(folder, values):
    """A training run's `ckpt-N` (`tf.train.Checkpoint`), given by its prefix."""
    return tf.train.Checkpoint(embeddings=tf.Variable(values)).write(str(folder / "ckpt-3"))


def _safetensors(folder, values):
    save_file({"bert.embeddings.word_embeddings.weight": values},
              str(folder / "model.safetensors"))
    return str(folder)


def _shards(folder, values):
    """A sharded HuggingFace save: two `.safetensors` files and their index."""
    names = ["bert.embeddings.word_embeddings.weight", "bert.pooler.dense.bias"]
    files = ["model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"]
    for name, file, part in zip(names, files, (values, values[0])):
        save_file({name: part}, str(folder / file))
    (folder / "model.safetensors.index.json").write_text(
        json.dumps({"weight_map": dict(zip(names, files))}))
    return str(folder)


KINDS = [_release, _training_checkpoint, _safetensors, _shards]


def _weights(seed):
    return np.random.default_rng(seed).standard_normal((5, 4)).astype(np.float32)


def _host(root, name, write, seed):
    """`(init_checkpoint, data_dir)` of a host that keeps its files under `root/name`: the
    weights in `bert/`, 8 real MRPC rows in `MRPC/`."""
    folder = root / name / "bert"
    folder.mkdir(parents=True)
    return write(folder, _weights(seed)), glue_subset(root / name, "MRPC", 8,
                                                      files=("train.tsv", "dev.tsv"))


def _put_in_place(folder, write, seed):
    """Writes other weights over those in `folder`: files of the same names and sizes, put
    in place as a copy would be, each with the modification time of the one it replaces."""
    other = folder.parent / "other"
    other.mkdir()
    write(other, _weights(seed))
    for file in sorted(other.iterdir()):
        replaced = os.stat(folder / file.name)
        assert file.stat().st_size == replaced.st_size
        os.utime(file, ns=(replaced.st_atime_ns, replaced.st_mtime_ns))
        os.replace(file, folder / file.name)


def _records(init_checkpoint, data_dir, output_dir):
    """`(run_record, the worker settings)` of an MRPC run as `runner._run_phases` makes them."""
    task = ClassificationTask(get_task("MRPC"), str(data_dir), tiny_model_files(),
                              max_seq_length=32)
    options = quick_options(output_dir, do_train=True, do_eval=True,
                            init_checkpoint=init_checkpoint)
    splits = runner.read_splits(task, options)
    record = run_record(task, options, task.train_steps(splits["train"], options),
                        splits["train"])
    return record, worker_settings(task, record, options, splits)


def _differing(settings, other):
    return sorted(name for name in settings.keys() | other.keys()
                  if settings.get(name) != other.get(name))


@pytest.mark.parametrize("write", KINDS, ids=lambda write: write.__name__.strip("_"))
def test_the_same_files_at_other_paths_on_each_host_are_the_same_settings(tmp_path, write):
    """The start weights and the data at other paths, the shared output folder mounted at
    another: the workers agree, and a resumed run on either host resumes."""
    weights_a, data_a = _host(tmp_path, "alice", write, seed=0)
    weights_b, data_b = _host(tmp_path, "models", write, seed=0)
    record_a, settings_a = _records(weights_a, data_a, tmp_path / "alice" / "out")
    record_b, settings_b = _records(weights_b, data_b, tmp_path / "models" / "out")
    assert _differing(settings_a, settings_b) == []
    assert settings_a["init_checkpoint"].startswith(("index sha256 ", "safetensors sha256 "))
    assert record_differences(record_a, record_b) == []


@pytest.mark.parametrize("write", KINDS, ids=lambda write: write.__name__.strip("_"))
def test_other_weights_at_the_same_path_are_named_as_init_checkpoint(tmp_path, write):
    """Other weights put in place of the first (of the same size, with its modification
    time): the workers differ in `init_checkpoint` alone, and a resume is refused."""
    weights, data = _host(tmp_path, "host", write, seed=0)
    record, settings = _records(weights, data, tmp_path / "out")
    _put_in_place(tmp_path / "host" / "bert", write, seed=1)
    other_record, other_settings = _records(weights, data, tmp_path / "out")
    assert _differing(settings, other_settings) == ["init_checkpoint"]
    assert [change.split(":")[0] for change in record_differences(record, other_record)] == [
        "start_weights"]


def test_start_weights_that_do_not_read_are_compared_by_path(tmp_path):
    """A resumed run needs not its start weights (they may be gone), and a record written
    before runs recorded what they were says only their path: both compare paths."""
    folder, data = _host(tmp_path, "host", _release, seed=0)
    prefix = os.path.join(folder, "bert_model.ckpt")
    record, settings = _records(prefix, data, tmp_path / "out")
    shutil.rmtree(folder)
    gone_record, gone_settings = _records(prefix, data, tmp_path / "out")
    assert gone_record["start_weights"] is None
    assert gone_settings["init_checkpoint"] == prefix
    assert record_differences(record, gone_record) == []
    older = {key: value for key, value in record.items() if key != "start_weights"}
    elsewhere = _records(str(tmp_path / "elsewhere"), data, tmp_path / "out")[0]
    assert record_differences(older, record) == []
    assert record_differences(older, elsewhere) == [
        f"options.init_checkpoint: {prefix!r} in the recorded run, "
        f"{str(tmp_path / 'elsewhere')!r} now"]
