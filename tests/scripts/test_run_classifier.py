"""run_classifier.py end to end: real GLUE rows, a real TFDS dataset, clear errors.

A tiny randomly initialised BERT (1 layer, H=32) with the real uncased
vocabulary keeps each run to seconds; the learning itself is shown with real
weights in bench/ and docs/RESULTS.md.
"""

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from tasks.task_runs import glue_subset
from tests_shared import REPO, run_script, shared_path, write_tiny_bert_config


def _classifier(tmp_path, *args):
    return run_script(
        "run_classifier.py",
        f"--bert_config_file={write_tiny_bert_config(tmp_path / 'c.json', num_hidden_layers=1)}",
        f"--vocab_file={shared_path('vocab', 'bert-base-uncased-vocab.txt')}",
        f"--output_dir={tmp_path / 'out'}", "--max_seq_length=32", "--train_batch_size=8",
        "--eval_batch_size=8", "--predict_batch_size=8", "--steps_per_execution=2", *args)


def test_mrpc_train_eval_predict(tmp_path):
    data = glue_subset(tmp_path, "MRPC", 24)
    result = _classifier(tmp_path, "--task_name=MRPC", f"--data_dir={data}", "--do_train",
                         "--do_eval", "--do_predict", "--num_train_epochs=1")
    assert result.returncode == 0, result.stderr[-3000:]
    assert "step 3/3" in result.stderr  # 24 examples / batch 8, one epoch
    # Each pass named by its phase (the evaluation's said "predicting" too).
    assert re.search(r"evaluating: 3 batches in .*\n(.*\n)*.*predicting: 3 batches in ",
                     result.stderr), result.stderr[-3000:]
    results = dict(line.split(" = ") for line in
                   (tmp_path / "out" / "eval_results.txt").read_text().splitlines())
    assert set(results) == {"eval_accuracy", "eval_f1", "eval_loss", "loss", "global_step"}
    assert results["global_step"] == "3"
    rows = (tmp_path / "out" / "test_results.tsv").read_text().splitlines()
    assert len(rows) == 24
    assert all(abs(sum(map(float, row.split("\t"))) - 1.0) < 1e-5 for row in rows)
    # The exported release folder classifies the first test pair the same way.
    first = (data / "test.tsv").read_text(encoding="utf-8").splitlines()[1].split("\t")
    result = run_script("classify_text.py", f"--model_dir={tmp_path / 'out'}",
                        f"--text={first[3]}", f"--text_b={first[4]}", "--max_seq_length=32")
    assert result.returncode == 0, result.stderr[-3000:]
    probabilities = dict(p.split("=") for p in result.stdout.splitlines()[1].split())
    expected = [float(v) for v in rows[0].split("\t")]
    assert abs(float(probabilities["1"]) - expected[1]) < 1e-3
    # Predicting again with the trained model: its folder gives the config and vocabulary.
    (tmp_path / "out" / "test_results.tsv").unlink()
    again = run_script("run_classifier.py", "--task_name=MRPC", f"--data_dir={data}",
                       "--do_predict", f"--output_dir={tmp_path / 'out'}", "--max_seq_length=32")
    assert again.returncode == 0, again.stderr[-3000:]
    assert (tmp_path / "out" / "test_results.tsv").read_text().splitlines() == rows


def test_tfds_dataset_built_from_local_files(tmp_path):
    from bert_tf.tasks import runner
    from bert_tf.tasks.classification import ClassificationTask
    from bert_tf.tasks.tfds_data import TfdsTask
    from tasks.task_runs import quick_options, tiny_model_files
    source = glue_subset(tmp_path, "SST-2", 16, files=("train.tsv", "dev.tsv"))
    spec = importlib.util.spec_from_file_location(
        "tiny_tfds_builder", REPO / "tests" / "scripts" / "tiny_tfds_builder.py")
    builders = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(builders)  # registers the builder with TFDS
    builders.TinySst.source_dir = str(source)
    builders.TinySst(data_dir=str(tmp_path / "tfds")).download_and_prepare()
    task = ClassificationTask(TfdsTask("tiny_sst", str(tmp_path / "tfds")), None,
                              tiny_model_files(num_hidden_layers=1), max_seq_length=32)
    results = runner.run(task, quick_options(tmp_path / "out", do_train=True, do_eval=True))
    assert results["global_step"] == 2 and 0 <= results["eval_accuracy"] <= 1


@pytest.mark.parametrize("bad_row,message", [
    ("1\t2\t3\tonly four columns", r"train.tsv:3: expected at least 5 tab-separated columns, got 4"),
    ("7\t2\t3\ta\tb", r"train.tsv:3: label '7' is not one of \['0', '1'\]"),
])
def test_bad_rows_fail_before_training(tmp_path, bad_row, message):
    data = glue_subset(tmp_path, "MRPC", 1, files=("train.tsv", "dev.tsv"))
    with open(data / "train.tsv", "a", encoding="utf-8") as f:
        f.write(bad_row + "\n")
    result = _classifier(tmp_path, "--task_name=MRPC", f"--data_dir={data}", "--do_train")
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert re.search(message, last) and last.startswith("run_classifier: error: ")
    assert "Traceback" not in result.stderr
    assert "training " not in result.stderr and not (tmp_path / "out").exists()
    verbose = _classifier(tmp_path, "--task_name=MRPC", f"--data_dir={data}", "--do_train",
                          "--verbose")
    assert verbose.returncode == 1 and "Traceback" in verbose.stderr


@pytest.mark.parametrize("flag,message", [
    ("--max_seq_length=512", "--max_seq_length=512 exceeds the model's max_position_embeddings"),
    ("--max_seq_length=2", "flag --max_seq_length=2"),
    # flags the run would ignore
    ("--xnli_language=de", "--xnli_language applies only with --task_name=XNLI"),
    ("--tfds_data_dir=/tmp", "--tfds_data_dir applies only with --tfds_name"),
    ("--tfds_name=glue/mrpc", "--task_name applies only without --tfds_name"),
])
def test_usage_errors_exit_2_with_one_line(tmp_path, flag, message):
    result = _classifier(tmp_path, "--task_name=MRPC", "--data_dir=unused", "--do_train", flag)
    assert result.returncode == 2, result.stderr[-2000:]
    assert message in result.stderr and "Traceback" not in result.stderr


def test_a_data_dir_beside_tfds_name_is_refused_not_ignored(tmp_path):
    result = _classifier(tmp_path, "--tfds_name=glue/mrpc", "--data_dir=glue/MRPC", "--do_train")
    assert result.returncode == 2, result.stderr[-2000:]
    assert "--data_dir applies only without --tfds_name" in result.stderr


def test_an_empty_xnli_language_is_a_usage_error(tmp_path):
    result = _classifier(tmp_path, "--task_name=XNLI", "--xnli_language= ", "--data_dir=unused",
                         "--do_train")
    assert result.returncode == 2, result.stderr[-2000:]
    assert "--xnli_language is empty" in result.stderr and "Traceback" not in result.stderr


def _classifier_without_log_level(tmp_path, **variables):
    environment = {k: v for k, v in os.environ.items() if k != "TF_CPP_MIN_LOG_LEVEL"}
    environment.update(variables)
    return subprocess.run(
        [sys.executable, str(REPO / "run_classifier.py"), "--output_dir", str(tmp_path),
         "--task_name=MRPC", "--data_dir=/nonexistent", "--do_train",
         f"--vocab_file={shared_path('vocab', 'bert-base-uncased-vocab.txt')}",
         f"--bert_config_file={write_tiny_bert_config(tmp_path / 'c.json')}"],
        capture_output=True, text=True, timeout=300, env=environment)


def test_tensorflow_start_up_noise_is_hidden_by_default(tmp_path):
    """Without TF_CPP_MIN_LOG_LEVEL set, a runner's stderr holds its own words only."""
    result = _classifier_without_log_level(tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        "run_classifier: error: /nonexistent/train.tsv: file not found"], result.stderr


def test_a_flag_tensorflow_ends_the_run_on_is_named(tmp_path):
    """A `TF_XLA_FLAGS` flag TensorFlow does not know ended the run while it was imported
    with stderr at /dev/null: exit status 1 and not a word."""
    result = _classifier_without_log_level(tmp_path, TF_XLA_FLAGS="--no_such_flag")
    assert result.returncode != 0
    assert "Unknown flag in TF_XLA_FLAGS: --no_such_flag" in result.stderr, result.stderr
