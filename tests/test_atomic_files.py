"""Files appear whole or not at all; a failed write leaves what was there; a set of
files read together is replaced all or none."""

import os

import pytest

from bert_tf.atomic_files import prepare_folder_for, write_text, write_texts, written_whole
from bert_tf.file_set import FileSet
from tests_shared import file_size_limit

SET = ("predictions.json", "nbest_predictions.json", "null_odds.json")


def _write_set(folder, texts):
    write_texts({str(folder / name): text for name, text in zip(SET, texts)})


def _read_set(folder):
    """The folder's names, and the text of each member there."""
    return sorted(os.listdir(folder)), [(folder / name).read_text() for name in SET
                                        if (folder / name).exists()]


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


@pytest.mark.parametrize("failing", [1, 2])
def test_a_set_whose_second_or_third_file_fails_leaves_the_earlier_set_whole(tmp_path,
                                                                             failing):
    _write_set(tmp_path, ["old 0", "old 1", "old 2"])
    texts = ["new 0", "new 1", "new 2"]
    texts[failing] = "x" * 4096  # past the limit: a full disk at that file
    with file_size_limit(1024), pytest.raises(
            OSError, match=rf"^cannot write {tmp_path / SET[failing]}: File too large$"):
        _write_set(tmp_path, texts)
    assert _read_set(tmp_path) == (sorted(SET), ["old 0", "old 1", "old 2"])


def test_a_folder_where_a_member_goes_stops_the_set_before_any_rename(tmp_path):
    _write_set(tmp_path, ["old 0", "old 1", "old 2"])
    os.remove(tmp_path / SET[2])
    (tmp_path / SET[2]).mkdir()
    (tmp_path / SET[2] / "kept.txt").write_text("a user's")
    with pytest.raises(OSError, match=rf"^cannot write {tmp_path / SET[2]}: Is a directory$"):
        _write_set(tmp_path, ["new 0", "new 1", "new 2"])
    assert sorted(os.listdir(tmp_path)) == sorted(SET)
    assert [(tmp_path / name).read_text() for name in SET[:2]] == ["old 0", "old 1"]
    assert (tmp_path / SET[2] / "kept.txt").read_text() == "a user's"


@pytest.mark.parametrize("failing_rename", range(1, 6))
def test_a_failed_rename_puts_the_earlier_set_back(tmp_path, monkeypatch, failing_rename):
    """Renames that fail are all but impossible to cause in a folder one writes; here
    the n-th of the five (three members aside, then the new ones in) is made to."""
    _write_set(tmp_path, ["old 0", "old 1", None])
    renames, replace = [], os.replace

    def failing(source, target):
        renames.append(target)
        if len(renames) == failing_rename:
            raise OSError(5, "Input/output error")
        replace(source, target)

    monkeypatch.setattr(os, "replace", failing)
    with pytest.raises(OSError, match=rf"^cannot write {tmp_path}/\w+.json: Input/output error$"):
        _write_set(tmp_path, ["new 0", "new 1", "new 2"])
    monkeypatch.undo()
    assert _read_set(tmp_path) == (sorted(SET[:2]), ["old 0", "old 1"])


def test_a_set_replaced_whole_leaves_no_earlier_member_and_no_temporary(tmp_path):
    _write_set(tmp_path, ["old 0", "old 1", "old 2"])
    _write_set(tmp_path, ["new 0", "new 1", None])  # a member not written this time goes
    assert _read_set(tmp_path) == (sorted(SET[:2]), ["new 0", "new 1"])
    with FileSet() as files:  # writers that name their own temporary files
        temp = files.add(str(tmp_path / SET[0]), temp=str(tmp_path / "own.tmp-1"))
        (tmp_path / "own.tmp-1").write_text("newer 0")
        assert temp == str(tmp_path / "own.tmp-1")
        files.write_text(str(tmp_path / SET[2]), "newer 2")
    assert _read_set(tmp_path) == (sorted(SET), ["newer 0", "new 1", "newer 2"])
