"""Files appear whole or not at all; a failed write leaves what was there."""

import os

import pytest

from bert_tf.atomic_files import prepare_folder_for, write_text, written_whole


def test_a_write_over_an_earlier_file_replaces_it_whole(tmp_path):
    path = tmp_path / "eval_results.txt"
    path.write_text("loss = 9.0\n")
    write_text(str(path), "loss = 1.5\nglobal_step = 20\n")
    assert path.read_text() == "loss = 1.5\nglobal_step = 20\n"
    assert os.listdir(tmp_path) == ["eval_results.txt"]


def test_a_failed_rename_leaves_the_target_and_no_temporary_file(tmp_path):
    target = tmp_path / "predictions.json"
    target.mkdir()
    (target / "kept.txt").write_text("earlier")
    with pytest.raises(OSError, match=rf"^cannot write {target}: .*directory"):
        write_text(str(target), "{}\n")
    assert sorted(os.listdir(tmp_path)) == ["predictions.json"]
    assert (target / "kept.txt").read_text() == "earlier"


@pytest.mark.parametrize("make_partial", [
    lambda temp: open(temp, "w").write("half"),
    lambda temp: os.makedirs(os.path.join(temp, "variables")),  # a half-saved SavedModel
])
def test_an_interrupted_writer_leaves_the_earlier_file_and_no_temporary(tmp_path, make_partial):
    path = tmp_path / "features.npy"
    path.write_text("earlier")
    with pytest.raises(KeyboardInterrupt):
        with written_whole(str(path), suffix=".npy") as temp:
            assert temp.endswith(".npy") and os.path.dirname(temp) == str(tmp_path)
            make_partial(temp)
            raise KeyboardInterrupt
    assert os.listdir(tmp_path) == ["features.npy"]
    assert path.read_text() == "earlier"


def test_a_missing_folder_is_named_by_the_file_asked_for(tmp_path):
    path = tmp_path / "missing" / "results.txt"
    with pytest.raises(OSError, match=rf"^cannot write {path}: No such file or directory$"):
        write_text(str(path), "x")


def test_a_url_is_written_through_tensorflows_file_systems():
    """`ram://`, TensorFlow's in-memory file system, stands in for gs://."""
    import tensorflow as tf
    path = "ram://atomic_files_test/results.txt"
    write_text(path, "first\n")
    write_text(path, "second\n")
    assert tf.io.gfile.GFile(path).read() == "second\n"
    assert tf.io.gfile.listdir("ram://atomic_files_test/") == ["results.txt"]


def test_the_folder_of_an_output_is_made_or_refused_before_any_work(tmp_path):
    prepare_folder_for(str(tmp_path / "new" / "deeper" / "vocab.txt"))
    assert (tmp_path / "new" / "deeper").is_dir()
    (tmp_path / "a_file").write_text("in the way")
    with pytest.raises(OSError, match="cannot write .*a_file/x/vocab.txt: a file stands where"):
        prepare_folder_for(str(tmp_path / "a_file" / "x" / "vocab.txt"))
    (tmp_path / "locked").mkdir()
    (tmp_path / "locked").chmod(0o500)
    try:
        if not os.access(tmp_path / "locked", os.W_OK):  # root may write anywhere
            with pytest.raises(OSError, match="locked is not writable"):
                prepare_folder_for(str(tmp_path / "locked" / "vocab.txt"))
    finally:
        (tmp_path / "locked").chmod(0o700)
