"""Exports that cannot be made fail before any work, with one line naming what is wrong."""

import logging
import os
import re
import shutil
import subprocess

import pytest
import tensorflow as tf
from absl import logging as absl_logging

from bert_tf import serving
from bert_tf.scripts.classify_text import load_classifier
from bert_tf.serving.export import _restore_set_aside, check_export_dir
from bert_tf.checkpoints import CheckpointError
from tests_shared import file_size_limit


@pytest.fixture(scope="module")
def classifier_folder(one_layer_classifier_folder):
    """Here the conftest's classifier folder one layer deep: these tests are about what an
    export reads, refuses and writes, not about what its model computes."""
    return one_layer_classifier_folder


@pytest.fixture(scope="module")
def an_export(classifier_folder, tmp_path_factory):
    """An encoder export of the classifier folder, made once: the tests copy it into place."""
    return serving.export("encoder", classifier_folder[0],
                          tmp_path_factory.mktemp("first") / "served", max_seq_length=16)


def _placed(export, path):
    """A copy of `export` at `path` (as if exported there earlier); `path` as a string."""
    shutil.copytree(export, path)
    return str(path)


def _copy(folder, tmp_path, *leave_out):
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy, ignore=shutil.ignore_patterns(*leave_out))
    return copy


def test_a_classifier_folder_without_labels(classifier_folder, tmp_path):
    folder = _copy(classifier_folder[0], tmp_path, "labels.txt")
    with pytest.raises(FileNotFoundError, match=rf"^{folder}/labels.txt: not found;"):
        serving.export("classifier", folder, tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_labels_of_another_count_than_the_head_are_named(classifier_folder, tmp_path):
    folder = _copy(classifier_folder[0], tmp_path)
    labels = (folder / "labels.txt").read_text().split()
    (folder / "labels.txt").write_text("".join(f"{label}\n" for label in labels + ["extra"]))
    with pytest.raises(CheckpointError, match=rf"output_bias: checkpoint \({len(labels)},\), "
                                              rf".*one output per label: {len(labels) + 1} "
                                              r"labels given, from labels.txt"):
        serving.export("classifier", folder, tmp_path / "out")


def test_a_damaged_checkpoint_is_named_without_blaming_the_labels(classifier_folder, tmp_path):
    folder = _copy(classifier_folder[0], tmp_path)
    data = folder / "bert_model.ckpt.data-00000-of-00001"
    os.truncate(data, data.stat().st_size // 2)
    with pytest.raises(CheckpointError) as raised:
        serving.export("classifier", folder, tmp_path / "out")
    # The labels' count hint belongs to shapes that do not fit, not to a damaged file.
    assert re.fullmatch(rf"{folder}/bert_model.ckpt: cannot read \S+ \(.*\); its data file is "
                        r"damaged or incomplete \(an interrupted copy\?\)", str(raised.value))
    assert not (tmp_path / "out").exists()


def test_a_folder_with_only_a_training_checkpoint(classifier_folder, tmp_path):
    folder = _copy(classifier_folder[0], tmp_path, "bert_model.ckpt*")
    tf.train.CheckpointManager(tf.train.Checkpoint(model=classifier_folder[1]), str(folder),
                               max_to_keep=1).save(checkpoint_number=7)
    with pytest.raises(CheckpointError, match=r"ckpt-7: a training checkpoint \(for resuming\)"):
        serving.export("classifier", folder, tmp_path / "out")


def test_a_masked_lm_from_a_checkpoint_without_its_head(classifier_folder, tmp_path):
    with pytest.raises(CheckpointError, match="has no cls/predictions/"):
        serving.export("masked_lm", classifier_folder[0], tmp_path / "out")


def test_an_existing_folder_that_is_not_a_saved_model_is_kept(classifier_folder, tmp_path):
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "notes.txt").write_text("mine")
    with pytest.raises(FileExistsError, match="holds notes.txt, not only a SavedModel"):
        serving.export("encoder", classifier_folder[0], tmp_path / "out")
    assert (tmp_path / "out" / "notes.txt").read_text() == "mine"


def test_an_export_named_as_its_checkpoint_prefix_is_refused(classifier_folder, tmp_path):
    folder = _copy(classifier_folder[0], tmp_path)
    prefix = folder / "bert_model.ckpt"
    # It would make a folder named as the prefix, which hid the checkpoint from then on.
    with pytest.raises(FileExistsError, match=rf"^{prefix}: a checkpoint's prefix "
                                              rf"\({prefix}.index is there\); a folder of that "
                                              "name would hide the checkpoint$"):
        serving.export("classifier", prefix, prefix, max_seq_length=16)
    assert not prefix.exists()


def test_a_saved_model_holding_other_files_is_kept(classifier_folder, an_export, tmp_path):
    served = _placed(an_export, tmp_path / "served")
    run = tmp_path / "served" / "run"  # say, a run's folder put inside the export's
    run.mkdir()
    (run / "bert_model.ckpt.index").write_text("a model")
    with pytest.raises(FileExistsError, match="served: holds run, not only a SavedModel"):
        serving.export("encoder", classifier_folder[0], served, max_seq_length=16)
    assert (run / "bert_model.ckpt.index").read_text() == "a model"


def test_an_export_interrupted_at_the_swap_keeps_the_old_one(classifier_folder, an_export,
                                                            tmp_path, monkeypatch):
    served = _placed(an_export, tmp_path / "served")
    (tmp_path / "served" / "assets" / "mark").write_text("the first export")
    real_replace, staging = os.replace, f"{served}.tmp-{os.getpid()}"

    def interrupted_swap(source, target):
        if str(source) == staging:  # Ctrl-C as the new export moves into place
            raise KeyboardInterrupt
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", interrupted_swap)
    with pytest.raises(KeyboardInterrupt):
        serving.export("encoder", classifier_folder[0], served, max_seq_length=16)
    monkeypatch.undo()
    assert (tmp_path / "served" / "assets" / "mark").read_text() == "the first export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["served"]  # nothing left beside it
    serving.export("encoder", classifier_folder[0], served, max_seq_length=16)  # a new one
    assert not (tmp_path / "served" / "assets" / "mark").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["served"]


def test_an_export_beaten_to_the_folder_by_another_is_named_and_keeps_the_other(
        classifier_folder, an_export, tmp_path, monkeypatch):
    served, staging = str(tmp_path / "served"), f"{tmp_path / 'served'}.tmp-{os.getpid()}"
    real_replace = os.replace

    def other_export_first(source, target):
        if str(source) == staging:  # another process's export lands just before this one's
            _placed(an_export, target)
            (tmp_path / "served" / "assets" / "mark").write_text("the other export")
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", other_export_first)
    with pytest.raises(OSError, match=rf"^cannot write {served}: another export put its "
                                      "SavedModel there while this one was saving; that one "
                                      "is kept, this one is discarded$"):
        serving.export("encoder", classifier_folder[0], served, max_seq_length=16)
    assert (tmp_path / "served" / "assets" / "mark").read_text() == "the other export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["served"]  # nothing left beside it


def test_classify_text_that_cannot_export_beside_the_model_says_where_else(classifier_folder,
                                                                          tmp_path):
    folder = _copy(classifier_folder[0], tmp_path)
    (folder / "saved_model").write_text("not a folder")  # as a model folder one may only read
    with pytest.raises(OSError, match=r"; give --export_dir=FOLDER to export the model "
                                      r"elsewhere$"):
        load_classifier(model_dir=str(folder), max_seq_length=16)
    with pytest.raises(OSError) as raised:  # a folder the user named: no such hint
        load_classifier(model_dir=str(folder), export_dir=str(folder / "saved_model"),
                        max_seq_length=16)
    assert "--export_dir=FOLDER" not in str(raised.value)


def test_an_export_on_a_full_disk_is_named_and_keeps_the_old_one(classifier_folder, an_export,
                                                                 tmp_path):
    served = _placed(an_export, tmp_path / "served")
    (tmp_path / "served" / "assets" / "mark").write_text("the first export")
    with file_size_limit(1 << 20), pytest.raises(  # the vocabulary fits, the weights do not
            OSError, match=rf"^cannot write {served}: File too large$"):
        serving.export("encoder", classifier_folder[0], served, max_seq_length=16)
    with file_size_limit(1 << 16), pytest.raises(  # nor the vocabulary, in a temporary folder
            OSError, match=r"^cannot write /\S+/vocab.txt: File too large$"):
        serving.export("encoder", classifier_folder[0], served, max_seq_length=16)
    assert (tmp_path / "served" / "assets" / "mark").read_text() == "the first export"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["served"]


def test_an_export_through_a_link_replaces_the_folder_and_keeps_the_link(classifier_folder,
                                                                        an_export, tmp_path):
    real = _placed(an_export, tmp_path / "v1")
    (tmp_path / "latest").symlink_to(real)  # as TF Serving layouts point at a version
    (tmp_path / "v1" / "assets" / "mark").write_text("the first export")
    serving.export("encoder", classifier_folder[0], tmp_path / "latest", max_seq_length=16)
    assert (tmp_path / "latest").is_symlink()
    assert not (tmp_path / "v1" / "assets" / "mark").exists()  # replaced whole
    assert sorted(p.name for p in tmp_path.iterdir()) == ["latest", "v1"]


def test_an_export_a_killed_writer_set_aside_is_put_back(an_export, tmp_path):
    """Killed between its two renames, a writer left the old export aside and nothing in place."""
    served = _placed(an_export, tmp_path / "served")
    os.rename(served, f"{served}.tmp-999999999.replaced")  # no such process
    _restore_set_aside(served)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["served"]
    assert tf.saved_model.load(served).signatures["serving_default"] is not None


def test_an_export_leaves_absl_logging_at_its_level(classifier_folder, tmp_path):
    """In a process whose absl flags were never parsed (a notebook), TensorFlow's saver left
    absl at WARNING, and the INFO lines of every later run vanished."""
    logger = absl_logging.get_absl_logger()
    before = logger.level
    try:
        logger.setLevel(logging.NOTSET)  # as in a fresh process: the root logger decides
        serving.export("encoder", classifier_folder[0], tmp_path / "served", max_seq_length=16)
        assert logger.level == logging.NOTSET
    finally:
        logger.setLevel(before)


def test_an_export_to_a_url_is_refused(classifier_folder):
    with pytest.raises(OSError, match="gs://bucket/served: exports are written to a local"):
        serving.export("encoder", classifier_folder[0], "gs://bucket/served")


def test_bad_arguments(classifier_folder, tmp_path):
    with pytest.raises(ValueError, match="unknown export kind 'span'"):
        serving.export("span", classifier_folder[0], tmp_path / "out")
    with pytest.raises(ValueError, match="needs its vocab_file"):
        serving.export("encoder", classifier_folder[1], tmp_path / "out")
    with pytest.raises(ValueError, match="needs its label names"):
        serving.export("classifier", classifier_folder[1], tmp_path / "out",
                       vocab_file=str(classifier_folder[0] / "vocab.txt"))
    long_vocab = tmp_path / "long_vocab.txt"
    tokens = [f"[unused{i}]" for i in range(30522)] + ["[UNK]", "[CLS]", "[SEP]"]
    long_vocab.write_text("".join(f"{token}\n" for token in tokens))
    with pytest.raises(ValueError, match=f"{long_vocab}: the vocabulary has 30525 tokens, "
                                         "more than the model's vocab_size"):
        serving.export("encoder", classifier_folder[0], tmp_path / "out",
                       vocab_file=str(long_vocab), max_seq_length=16)
    with pytest.raises(ValueError, match="max_seq_length=65 exceeds"):
        serving.export("encoder", classifier_folder[0], tmp_path / "out", max_seq_length=65)


def test_a_bind_mounted_export_dir_is_refused_before_any_work(an_export, tmp_path):
    """A bind mount of a folder of the same file system, which `os.path.ismount` misses."""
    volume, served = tmp_path / "host_folder", tmp_path / "served"
    _placed(an_export, volume)
    served.mkdir()
    if subprocess.run(["mount", "--bind", str(volume), str(served)],
                      capture_output=True).returncode:
        pytest.skip("this process may not mount folders")
    try:
        with pytest.raises(OSError, match=rf"^{served}: a mount point, which an export "
                                          "cannot replace"):
            check_export_dir(str(served))
    finally:
        subprocess.run(["umount", str(served)], check=True)
