"""The classification family run in-process through the one runner flow, on real GLUE rows."""

import numpy as np
import pytest

from bert_tf.errors import UsageError
from bert_tf.tasks import runner
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tasks.glue_data import get_task, tsv_task
from bert_tf.tasks.losses import cross_entropy
from tasks.task_runs import glue_subset, quick_options, read_results, tiny_model_files


def _task(name, data, **kwargs):
    reader = tsv_task(str(data)) if name == "tsv" else get_task(name)
    return ClassificationTask(reader, str(data), tiny_model_files(**kwargs), max_seq_length=32)


def test_cola_reports_the_original_keys_plus_mcc(tmp_path):
    data = glue_subset(tmp_path, "CoLA", 16)
    results = runner.run(_task("CoLA", data), quick_options(tmp_path / "out", do_train=True,
                                                            do_eval=True, do_predict=True))
    written = read_results(tmp_path / "out" / "eval_results.txt")
    assert set(written) == {"eval_accuracy", "eval_matthews_corrcoef", "eval_loss", "loss",
                            "global_step"}
    assert results["global_step"] == 2  # 16 examples / batch 8, one epoch
    rows = (tmp_path / "out" / "test_results.tsv").read_text().splitlines()
    assert len(rows) == 16
    assert all(abs(sum(map(float, row.split("\t"))) - 1.0) < 1e-6 for row in rows)


def test_eval_results_are_those_of_the_exported_model(tmp_path):
    """Scoring a trained folder alone gives sklearn's scores of the exported model's logits."""
    from sklearn.metrics import accuracy_score, f1_score, log_loss

    from bert_tf.checkpoints import restore
    from bert_tf.tasks.classification import build_classifier
    data = glue_subset(tmp_path, "MRPC", 16)
    task = _task("MRPC", data)
    runner.run(task, quick_options(tmp_path / "out", do_train=True))
    results = runner.run(task, quick_options(tmp_path / "out", do_eval=True))
    model = build_classifier(task.model_files.config, 2)
    restore(model, str(tmp_path / "out"))
    dev = task.read_split("dev")
    inputs = task.preprocessor(([e.text_a for e in dev], [e.text_b for e in dev]))
    logits = model(inputs, training=False).numpy().astype(np.float64)
    labels = [e.label for e in dev]
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    assert results["eval_accuracy"] == pytest.approx(accuracy_score(labels, logits.argmax(-1)))
    assert results["eval_f1"] == pytest.approx(f1_score(labels, logits.argmax(-1)))
    assert results["eval_loss"] == pytest.approx(log_loss(labels, probabilities), rel=1e-5)
    assert results["global_step"] == 2


def test_sts_b_regression(tmp_path):
    data = glue_subset(tmp_path, "STS-B", 16, files=("train.tsv", "dev.tsv"))
    results = runner.run(_task("STS-B", data), quick_options(tmp_path / "out", do_train=True,
                                                             do_eval=True))
    assert {"eval_pearson", "eval_spearman", "eval_loss", "loss"} <= set(results)
    assert "eval_accuracy" not in results


def test_eval_only_into_a_new_folder_scores_init_checkpoint(tmp_path):
    """The normal "score a fine-tuned model" workflow: the folder is created."""
    data = glue_subset(tmp_path, "MRPC", 8, files=("train.tsv", "dev.tsv"))
    task = _task("MRPC", data)
    runner.run(task, quick_options(tmp_path / "trained", do_train=True))
    output_dir = tmp_path / "does" / "not" / "exist"
    results = runner.run(task, quick_options(
        output_dir, do_eval=True, init_checkpoint=str(tmp_path / "trained" / "bert_model.ckpt")))
    assert (output_dir / "eval_results.txt").exists()
    assert results["global_step"] == 0


def test_nothing_to_score_is_an_error(tmp_path):
    data = glue_subset(tmp_path, "MRPC", 8, files=("dev.tsv",))
    with pytest.raises(UsageError, match="holds no checkpoint and no --init_checkpoint"):
        runner.run(_task("MRPC", data), quick_options(tmp_path / "empty", do_eval=True))


def test_rerun_with_other_hyper_parameters_is_refused(tmp_path):
    data = glue_subset(tmp_path, "MRPC", 8, files=("train.tsv",))
    task = _task("MRPC", data)
    runner.run(task, quick_options(tmp_path / "out", do_train=True))
    with pytest.raises(UsageError, match=r"learning_rate: 0.001 in the recorded run, 2e-05 now"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True, learning_rate=2e-5))
    # The same options resume (nothing left to train) without complaint.
    runner.run(task, quick_options(tmp_path / "out", do_train=True))


def test_training_split_without_labels_fails_before_the_model(tmp_path):
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "labels.txt").write_text("a\nb\n")
    (folder / "train.tsv").write_text("sentence\nfirst\nsecond\n")
    with pytest.raises(ValueError, match="train split has examples without a label"):
        runner.run(_task("tsv", folder), quick_options(tmp_path / "out", do_train=True))
    assert not (tmp_path / "out").exists()


def test_empty_dev_file_names_the_file(tmp_path):
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "labels.txt").write_text("a\nb\n")
    (folder / "dev.tsv").write_text("")
    with pytest.raises(ValueError, match=r"dev.tsv: empty file"):
        tsv_task(str(folder))


def test_labels_file_with_bom_and_duplicates(tmp_path):
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "labels.txt").write_bytes("\ufeffa\nb\n".encode("utf-8"))
    assert tsv_task(str(folder)).labels == ("a", "b")
    (folder / "labels.txt").write_text("a\nb\na\n")
    with pytest.raises(ValueError, match=r"labels.txt:3: label 'a' repeats line 1"):
        tsv_task(str(folder))


def test_vocab_larger_than_the_embedding_table_is_refused(tmp_path):
    from bert_tf.tasks.model_files import resolve_model_files
    from tests_shared import shared_path, write_tiny_bert_config
    config = write_tiny_bert_config(tmp_path / "c.json", vocab_size=3000)
    with pytest.raises(UsageError, match="has 30522 tokens but the model's embedding table has "
                                         "vocab_size=3000 rows"):
        resolve_model_files(config, str(shared_path("vocab", "bert-base-uncased-vocab.txt")))


def test_cross_entropy_matches_numpy():
    logits = np.array([[2.0, -1.0, 0.5], [0.1, 0.2, 0.3]], "float32")
    labels = np.array([2, 0])
    log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    np.testing.assert_allclose(cross_entropy(logits, labels), -log_softmax[[0, 1], labels],
                               rtol=1e-6)
