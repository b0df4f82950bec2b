"""Leftovers of interrupted writers in an output folder: removed when their writer is gone."""

import os
import subprocess
import sys

import pytest

from bert_tf.checkpoints import save_tf1_checkpoint
from bert_tf.modeling import BertEncoder
from bert_tf.training.run_dir import OutputDirInUseError, OutputDirLock, remove_leftovers
from tests_shared import file_size_limit


@pytest.fixture(scope="module")
def dead_pid():
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait()
    return process.pid


def test_leftovers_of_dead_writers_go_on_the_next_start(tmp_path, dead_pid):
    leftovers = [f"bert_model.ckpt.tmp-{dead_pid}.index",
                 f"bert_model.ckpt.tmp-{dead_pid}.data-00000-of-00001",
                 f"train.tfrecord.tmp-{dead_pid}",
                 f"old.tfrecord.incomplete-{dead_pid}"]  # an earlier version's temporary
    kept = [f"train.tfrecord.tmp-{os.getpid()}",  # a live writer's
            "ckpt-3.index", "ckpt-3.data-00000-of-00001", "checkpoint", "notes.tmp-x"]
    for name in leftovers + kept:
        (tmp_path / name).write_bytes(b"x" * 1000)
    (tmp_path / "ckpt-4_temp").mkdir()
    (tmp_path / "ckpt-4_temp" / "part-00000-of-00001.data-00000-of-00001").write_bytes(b"x")
    with OutputDirLock(str(tmp_path)):
        assert sorted(os.listdir(tmp_path)) == sorted(kept + [".lock"])
    assert remove_leftovers(str(tmp_path)) == []


def test_a_failed_original_format_save_leaves_no_temporary_files(tmp_path, tiny_config):
    encoder = BertEncoder(tiny_config)
    (tmp_path / "bert_model.ckpt.index").mkdir()  # the final rename of the index fails
    with pytest.raises(OSError):
        save_tf1_checkpoint(encoder, str(tmp_path / "bert_model.ckpt"))
    assert not [name for name in os.listdir(tmp_path) if ".tmp-" in name]


def test_a_full_disk_names_the_lock_file_and_the_original_format_checkpoint(tmp_path,
                                                                            tiny_config):
    with file_size_limit(8), pytest.raises(
            OSError, match=rf"^cannot write {tmp_path}/run/.lock: File too large$"):
        OutputDirLock(str(tmp_path / "run")).__enter__()
    encoder = BertEncoder(tiny_config)
    with file_size_limit(4096), pytest.raises(
            OSError, match=rf"^cannot write {tmp_path}/bert_model.ckpt: File too large$"):
        save_tf1_checkpoint(encoder, str(tmp_path / "bert_model.ckpt"))
    assert sorted(os.listdir(tmp_path)) == ["run"]


def test_deleting_the_lock_file_mid_run_does_not_free_the_folder(tmp_path):
    with OutputDirLock(str(tmp_path)):
        os.remove(tmp_path / ".lock")
        with pytest.raises(OutputDirInUseError, match="a process whose .lock file was deleted"):
            OutputDirLock(str(tmp_path)).__enter__()
    with OutputDirLock(str(tmp_path)):  # free again once the run ends
        pass
