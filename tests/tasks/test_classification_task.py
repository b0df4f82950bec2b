"""The classification family run in-process through the one runner flow, on real GLUE rows.

A one-layer tiny model keeps each run short; the tests that need a trained
folder copy the one the `mrpc` fixture trains once, and the CoLA run that
writes every output (eval, predictions, SavedModel) is shared by the tests
that read them.
"""

import dataclasses
import os
import shutil

import keras
import numpy as np
import pytest

from bert_tf.errors import UsageError
from bert_tf.tasks import runner
from bert_tf.tasks.classification import ClassificationTask
from bert_tf.tasks.glue_data import get_task, tsv_task
from bert_tf.tasks.losses import cross_entropy
from bert_tf.tasks.scored_model_checks import warn_if_init_checkpoint_ignored
from tasks.task_runs import glue_subset, quick_options, read_results, tiny_model_files
from tests_shared import shared_path


def _model_files(**overrides):
    """The tiny model of `task_runs`, one layer deep: these runs do not depend on depth."""
    return tiny_model_files(num_hidden_layers=1, **overrides)


def _task(name, data, **kwargs):
    reader = tsv_task(str(data)) if name == "tsv" else get_task(name)
    return ClassificationTask(reader, str(data), _model_files(**kwargs), max_seq_length=32)


@pytest.fixture(scope="module")
def mrpc(tmp_path_factory):
    """`(data, trained)`: 8 real MRPC rows (train.tsv, dev.tsv) and a folder trained on them
    (one step, `quick_options`). Tests that write into the folder write into a copy."""
    keras.utils.set_random_seed(0)  # whatever ran before (conftest seeds tests, not this)
    root = tmp_path_factory.mktemp("mrpc")
    data = glue_subset(root, "MRPC", 8, files=("train.tsv", "dev.tsv"))
    runner.run(_task("MRPC", data), quick_options(root / "trained", do_train=True))
    return data, root / "trained"


@pytest.fixture(scope="module")
def cola(tmp_path_factory):
    """`(task, output_dir, export_dir, results)` of one CoLA run on 16 real rows that trains,
    evaluates, predicts and exports a SavedModel."""
    keras.utils.set_random_seed(0)
    root = tmp_path_factory.mktemp("cola")
    task = _task("CoLA", glue_subset(root, "CoLA", 16))
    results = runner.run(task, quick_options(root / "out", do_train=True, do_eval=True,
                                             do_predict=True, export_dir=str(root / "served")))
    return task, root / "out", root / "served", results


def test_cola_reports_the_original_keys_plus_mcc(cola):
    _, out, _, results = cola
    written = read_results(out / "eval_results.txt")
    assert set(written) == {"eval_accuracy", "eval_matthews_corrcoef", "eval_loss", "loss",
                            "global_step"}
    assert results["global_step"] == 2  # 16 examples / batch 8, one epoch
    rows = (out / "test_results.tsv").read_text().splitlines()
    assert len(rows) == 16
    assert all(abs(sum(map(float, row.split("\t"))) - 1.0) < 1e-6 for row in rows)


def test_eval_results_are_those_of_the_exported_model(tmp_path, mrpc):
    """Scoring a trained folder alone gives sklearn's scores of the exported model's logits."""
    from sklearn.metrics import accuracy_score, f1_score, log_loss

    from bert_tf.checkpoints import restore
    from bert_tf.modeling.classifier import build_classifier
    data, trained = mrpc
    task = _task("MRPC", data)
    out = shutil.copytree(trained, tmp_path / "out")
    results = runner.run(task, quick_options(out, do_eval=True))
    model = build_classifier(task.model_files.config, 2)
    restore(model, str(out))
    dev = task.read_split("dev")
    inputs = task.preprocessor(([e.text_a for e in dev], [e.text_b for e in dev]))
    logits = model(inputs, training=False).numpy().astype(np.float64)
    labels = [e.label for e in dev]
    probabilities = np.exp(logits) / np.exp(logits).sum(-1, keepdims=True)
    assert results["eval_accuracy"] == pytest.approx(accuracy_score(labels, logits.argmax(-1)))
    assert results["eval_f1"] == pytest.approx(f1_score(labels, logits.argmax(-1)))
    assert results["eval_loss"] == pytest.approx(log_loss(labels, probabilities), rel=1e-5)
    assert results["global_step"] == 1


def test_sts_b_regression(tmp_path):
    data = glue_subset(tmp_path, "STS-B", 16, files=("train.tsv", "dev.tsv"))
    results = runner.run(_task("STS-B", data), quick_options(tmp_path / "out", do_train=True,
                                                             do_eval=True))
    assert {"eval_pearson", "eval_spearman", "eval_loss", "loss"} <= set(results)
    assert "eval_accuracy" not in results


def test_eval_only_into_a_new_folder_scores_init_checkpoint(tmp_path, caplog, mrpc):
    """The normal "score a fine-tuned model" workflow: the folder is created."""
    data, trained = mrpc
    task = _task("MRPC", data)
    shutil.copytree(trained, tmp_path / "trained")
    output_dir = tmp_path / "does" / "not" / "exist"
    results = runner.run(task, quick_options(
        output_dir, do_eval=True, init_checkpoint=str(tmp_path / "trained" / "bert_model.ckpt")))
    assert (output_dir / "eval_results.txt").exists()
    assert results["global_step"] == 1  # the step run.json records for that model (it said 0)
    ckpt = runner.run(task, quick_options(tmp_path / "by_ckpt", do_eval=True,
                                          init_checkpoint=str(tmp_path / "trained" / "ckpt-1")))
    assert ckpt["global_step"] == 1 and ckpt["eval_accuracy"] == results["eval_accuracy"]
    # Into a folder with training checkpoints, those are scored, as the original does; the
    # --init_checkpoint of another folder that is not scored gets a warning.
    with caplog.at_level("WARNING"):
        resumed = runner.run(task, quick_options(tmp_path / "trained", do_eval=True,
                                                 init_checkpoint=str(output_dir)))
    assert resumed["global_step"] == 1
    assert f"--init_checkpoint={output_dir} is not the model this run scores" in caplog.text


def test_warm_up_longer_than_training_is_refused_before_work_and_ignored_by_evaluation(
        tmp_path, mrpc):
    data, trained = mrpc
    task = _task("MRPC", data)
    with pytest.raises(UsageError, match=r"--num_warmup_steps=5 is more than the run's 1 "
                                         "training steps"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True, num_warmup_steps=5))
    assert not (tmp_path / "out" / "run.json").exists()
    # The training command line with --do_train taken out still runs on a trained folder.
    shutil.copytree(trained, tmp_path / "trained")
    results = runner.run(task, quick_options(tmp_path / "trained", do_eval=True,
                                             num_warmup_steps=5))
    assert results["global_step"] == 1


def test_an_init_checkpoint_an_evaluation_does_not_score_is_named(tmp_path, caplog):
    out, latest = str(tmp_path), str(tmp_path / "ckpt-2")
    with caplog.at_level("WARNING"):
        for scored_anyway in (None, out, latest, str(tmp_path / "bert_model.ckpt")):
            warn_if_init_checkpoint_ignored(out, latest, scored_anyway)
        assert caplog.text == ""
        warn_if_init_checkpoint_ignored(out, latest, str(tmp_path / "ckpt-1"))
    assert "ckpt-1 is not the model this run scores" in caplog.text


def test_nothing_to_score_is_an_error(tmp_path):
    data = glue_subset(tmp_path, "MRPC", 8, files=("dev.tsv",))
    with pytest.raises(UsageError, match="holds no checkpoint and no --init_checkpoint"):
        runner.run(_task("MRPC", data), quick_options(tmp_path / "empty", do_eval=True))


def test_a_sample_of_the_dev_set_is_refused_where_the_whole_set_is_scored(tmp_path):
    """`RunOptions(max_eval_steps=3)` scored all of MRPC's dev set without a word."""
    data = glue_subset(tmp_path, "MRPC", 8, files=("dev.tsv",))
    with pytest.raises(UsageError, match="max_eval_steps: task mrpc scores its whole dev set"):
        runner.run(_task("MRPC", data), quick_options(tmp_path / "out", do_eval=True,
                                                      max_eval_steps=3))
    assert not (tmp_path / "out").exists()


def test_rerun_with_other_hyper_parameters_is_refused(tmp_path, caplog, mrpc):
    data, trained = mrpc
    task = _task("MRPC", data)
    shutil.copytree(trained, tmp_path / "out")
    with pytest.raises(UsageError, match=r"learning_rate: 0.001 in the recorded run, 2e-05 now"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True, learning_rate=2e-5))
    # The same options resume (nothing left to train) without complaint, and so do other
    # micro-batches per step (the steps train on the same examples).
    runner.run(task, quick_options(tmp_path / "out", do_train=True))
    with caplog.at_level("INFO"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True,
                                       gradient_accumulation_steps=2))
    assert "--gradient_accumulation_steps=2, where the recorded run had 1" in caplog.text
    # Other training data (one row more) is another run.
    more = _task("MRPC", glue_subset(tmp_path, "MRPC", 9, files=("train.tsv",)))
    with pytest.raises(UsageError, match=r"training_data_sha256: '[0-9a-f]{64}' in the recorded "
                                         r"run, '[0-9a-f]{64}' now"):
        runner.run(more, quick_options(tmp_path / "out", do_train=True))
    # Another task into that folder is named as such, not as a list of differences.
    rte = _task("RTE", glue_subset(tmp_path, "RTE", 8, files=("train.tsv",)))
    with pytest.raises(UsageError, match=r"holds a run of task mrpc, not rte; use a new"):
        runner.run(rte, quick_options(tmp_path / "out", do_train=True))


def test_the_same_start_weights_however_spelled_resume(tmp_path, monkeypatch, mrpc):
    """One start checkpoint spelled four ways (a release folder, its prefix relative to the
    working folder or absolute, its .index file) resumes the run it started; the same
    relative spelling from another working folder names other weights and is refused."""
    data, trained = mrpc
    task = _task("MRPC", data)
    shutil.copytree(trained, tmp_path / "start")
    monkeypatch.chdir(tmp_path)
    runner.run(task, quick_options(tmp_path / "out", do_train=True,
                                   init_checkpoint="start/bert_model.ckpt"))
    monkeypatch.chdir(tmp_path / "start")
    for spelling in ("start", "start/bert_model.ckpt", "start/bert_model.ckpt.index"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True,
                                       init_checkpoint=str(tmp_path / spelling)))
    with pytest.raises(UsageError, match=r"init_checkpoint: '.*/start/bert_model.ckpt' in the "
                                         r"recorded run, '.*/start/start/bert_model.ckpt' now"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True,
                                       init_checkpoint="start/bert_model.ckpt"))


def test_training_split_without_labels_fails_before_the_model(tmp_path):
    folder = tmp_path / "own"
    folder.mkdir()
    (folder / "labels.txt").write_text("a\nb\n")
    (folder / "train.tsv").write_text("sentence\nfirst\nsecond\n")
    with pytest.raises(ValueError, match=r"own/train.tsv:1: the header has no `label` column"):
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


def test_vocab_far_smaller_than_the_embedding_table_is_warned_about(tmp_path, caplog):
    from bert_tf.tasks.model_files import resolve_model_files
    from tests_shared import shared_path, write_tiny_bert_config
    lines = shared_path("vocab", "bert-base-uncased-vocab.txt").read_text().splitlines()
    for tokens, warned in ((30522 - 128, False), (1000, True)):
        vocab = tmp_path / f"vocab{tokens}.txt"
        vocab.write_text("\n".join(lines[:tokens]) + "\n")
        caplog.clear()
        resolve_model_files(write_tiny_bert_config(tmp_path / "c.json"), str(vocab))
        assert ("has 1000 tokens, 29522 fewer than the model's vocab_size=30522 rows"
                in caplog.text) == warned


def test_cross_entropy_matches_numpy():
    logits = np.array([[2.0, -1.0, 0.5], [0.1, 0.2, 0.3]], "float32")
    labels = np.array([2, 0])
    log_softmax = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    np.testing.assert_allclose(cross_entropy(logits, labels), -log_softmax[[0, 1], labels],
                               rtol=1e-6)


def test_a_second_run_on_a_locked_output_dir_fails_at_once(tmp_path):
    from bert_tf.training.run_dir import OutputDirInUseError, OutputDirLock
    data = glue_subset(tmp_path, "MRPC", 8, files=("train.tsv",))
    (tmp_path / "out").mkdir()
    with OutputDirLock(str(tmp_path / "out")):
        with pytest.raises(OutputDirInUseError, match=rf"in use by process {os.getpid()} "):
            runner.run(_task("MRPC", data), quick_options(tmp_path / "out", do_train=True))
    assert not list((tmp_path / "out").glob("ckpt-*"))


def test_a_vocab_other_than_the_checkpoints_own_is_warned_about(tmp_path, caplog):
    from bert_tf.tasks.model_files import resolve_model_files
    from tests_shared import shared_path, write_tiny_release
    folder = write_tiny_release(tmp_path / "release",
                                str(shared_path("vocab", "bert-base-uncased-vocab.txt")))
    other = tmp_path / "other_vocab.txt"
    other.write_text((folder / "vocab.txt").read_text().replace("\nhello\n", "\nhallo\n"))
    with caplog.at_level("WARNING"):
        resolve_model_files(vocab_file=str(other), init_checkpoint=str(folder))
    assert "differs from" in caplog.text and "vocab.txt stored beside" in caplog.text
    caplog.clear()
    with caplog.at_level("WARNING"):
        resolve_model_files(init_checkpoint=str(folder))
    assert "differs from" not in caplog.text


def test_export_dir_ends_the_run_with_a_savedmodel_that_answers_text(cola):
    import tensorflow as tf

    from bert_tf.checkpoints import restore
    task, out, served, _ = cola
    served = tf.saved_model.load(str(served))
    dev = task.read_split("dev")
    outputs = served.signatures["serving_default"](text=tf.constant([e.text_a for e in dev]))
    model = task.build_model()
    restore(model, str(out))
    logits = model(task.preprocessor([e.text_a for e in dev]), training=False).numpy()
    np.testing.assert_allclose(outputs["logits"].numpy(), logits, atol=1e-5)
    assert [label.decode() for label in outputs["label"].numpy()] == [
        ("0", "1")[i] for i in logits.argmax(-1)]


def test_an_export_that_cannot_be_written_fails_before_work(tmp_path):
    task = _task("MRPC", glue_subset(tmp_path, "MRPC", 8, files=("train.tsv",)))

    class Unservable(ClassificationTask):
        serving_kind = None

    unservable = Unservable(task.reader, task.data_dir, task.model_files, 32)
    with pytest.raises(UsageError, match="--export_dir: task mrpc has no SavedModel export"):
        runner.run(unservable, quick_options(tmp_path / "out", do_train=True,
                                             export_dir=str(tmp_path / "served")))
    with pytest.raises(UsageError, match="is --output_dir; the SavedModel needs a folder"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True,
                                       export_dir=str(tmp_path / "out")))
    (tmp_path / "notes").mkdir()
    (tmp_path / "notes" / "todo.txt").write_text("keep me")
    with pytest.raises(UsageError, match="notes: holds todo.txt, not only a SavedModel"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True,
                                       export_dir=str(tmp_path / "notes")))
    assert not (tmp_path / "out").exists()
    # The run's own folder inside the export's: the export would delete it.
    with pytest.raises(UsageError, match="--output_dir=.*is inside --export_dir"):
        runner.run(task, quick_options(tmp_path / "served" / "run", do_train=True,
                                       export_dir=str(tmp_path / "served")))
    assert not (tmp_path / "served").exists()
    # A folder that cannot be made: a file stands where it would be.
    (tmp_path / "vocab.txt").write_text("[PAD]\n")
    with pytest.raises(UsageError, match=r"--export_dir: cannot write .*vocab.txt/served: a "
                                         "file stands where its folder would be"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True,
                                       export_dir=str(tmp_path / "vocab.txt" / "served")))
    assert not (tmp_path / "out").exists()
    # Nor an output folder: told without the hint for scoring a read-only folder's model.
    with pytest.raises(UsageError) as error:
        runner.run(task, quick_options(tmp_path / "vocab.txt" / "out", do_train=True))
    assert str(error.value) == (f"--output_dir={tmp_path}/vocab.txt/out: cannot write "
                                f"{tmp_path}/vocab.txt/out/run.json: a file stands where its "
                                "folder would be")


def test_training_into_the_folder_of_its_start_weights_is_refused(tmp_path, mrpc):
    data, trained = mrpc
    task = _task("MRPC", data)
    shutil.copytree(trained, tmp_path / "release")
    before = (tmp_path / "release" / "bert_model.ckpt.index").read_bytes()
    with pytest.raises(UsageError, match="holds --init_checkpoint"):
        runner.run(task, quick_options(
            tmp_path / "release", do_train=True,
            init_checkpoint=str(tmp_path / "release" / "bert_model.ckpt")))
    assert (tmp_path / "release" / "bert_model.ckpt.index").read_bytes() == before


def test_a_rerun_with_another_model_config_or_vocabulary_is_refused(tmp_path, mrpc):
    data, trained = mrpc
    shutil.copytree(trained, tmp_path / "out")
    relu = _task("MRPC", data, hidden_act="relu")
    with pytest.raises(UsageError, match=r"model.bert_config.hidden_act: 'gelu' in the "
                                         r"recorded run, 'relu' now"):
        runner.run(relu, quick_options(tmp_path / "out", do_train=True))
    vocab = tmp_path / "vocab.txt"  # the same size, two tokens swapped: other ids
    tokens = shared_path("vocab", "bert-base-uncased-vocab.txt").read_text().splitlines()
    tokens[2000], tokens[2001] = tokens[2001], tokens[2000]
    vocab.write_text("\n".join(tokens) + "\n")
    model_files = dataclasses.replace(_model_files(), vocab_file=str(vocab))
    swapped = ClassificationTask(get_task("MRPC"), str(data), model_files, 32)
    for options in (dict(do_train=True), dict(do_eval=True)):
        with pytest.raises(UsageError, match=r"model.vocab_sha256: '[0-9a-f]{64}' in the "
                                             r"recorded run, '[0-9a-f]{64}' now"):
            runner.run(swapped, quick_options(tmp_path / "out", **options))


def test_scoring_a_trained_folder_with_what_its_model_cannot_read_is_refused(tmp_path, mrpc):
    data, trained = mrpc
    shutil.copytree(trained, tmp_path / "out")
    before = (tmp_path / "out" / "eval_results.txt").exists()
    sst = _task("SST-2", glue_subset(tmp_path, "SST-2", 8, files=("dev.tsv",)))
    with pytest.raises(UsageError, match=r"holds a run of task mrpc, not sst-2"):
        runner.run(sst, quick_options(tmp_path / "out", do_eval=True))
    uncased_as_cased = ClassificationTask(get_task("MRPC"), str(data), _model_files(), 32,
                                          do_lower_case=False)
    with pytest.raises(UsageError, match=r"task.do_lower_case: True in the recorded run, "
                                         r"False now"):
        runner.run(uncased_as_cased, quick_options(tmp_path / "out", do_eval=True))
    assert (tmp_path / "out" / "eval_results.txt").exists() == before
    # What only shapes the evaluation may differ: a longer sequence length, and the
    # config's dropout (it was refused: "trained otherwise than this run would read").
    longer = ClassificationTask(get_task("MRPC"), str(data),
                                _model_files(hidden_dropout_prob=0.3), 48)
    results = runner.run(longer, quick_options(tmp_path / "out", do_eval=True))
    assert results["global_step"] == 1


def test_an_output_dir_that_cannot_be_written_is_named(tmp_path):
    data = glue_subset(tmp_path, "MRPC", 8, files=("train.tsv",))
    (tmp_path / "a_file").write_text("in the way")
    with pytest.raises(UsageError, match=r"--output_dir=.*a_file/out: cannot write .*a file "
                                         r"stands where its folder would be"):
        runner.run(_task("MRPC", data), quick_options(tmp_path / "a_file" / "out",
                                                      do_train=True))


def test_a_finished_folder_without_its_training_checkpoints_scores_its_exported_model(
        tmp_path, caplog, mrpc):
    data, folder = mrpc
    task = _task("MRPC", data)
    shutil.copytree(folder, tmp_path / "out")
    trained = runner.run(task, quick_options(tmp_path / "out", do_eval=True))
    for path in (tmp_path / "out").glob("ckpt-*"):
        path.unlink()
    (tmp_path / "out" / "checkpoint").unlink()
    scored = runner.run(task, quick_options(tmp_path / "out", do_eval=True))
    assert scored["eval_accuracy"] == trained["eval_accuracy"]
    assert scored["global_step"] == trained["global_step"] == 1  # the step run.json records
    # The training command with --do_eval alone (its start weights, another model, named):
    # still the folder's model, with a warning.
    task.export(task.build_model(), str(tmp_path / "start"))
    start = str(tmp_path / "start" / "bert_model.ckpt")
    with caplog.at_level("WARNING"):
        again = runner.run(task, quick_options(tmp_path / "out", do_eval=True,
                                               init_checkpoint=start))
    assert again == scored
    assert f"--init_checkpoint={start} is not the model this run scores" in caplog.text
    cased = ClassificationTask(get_task("MRPC"), str(data), _model_files(), 32,
                               do_lower_case=False)
    with pytest.raises(UsageError, match=r"task.do_lower_case: True in the recorded run"):
        runner.run(cased, quick_options(tmp_path / "out", do_eval=True))
    # The same model from another folder: scored, with a warning naming the difference.
    with caplog.at_level("WARNING"):
        runner.run(cased, quick_options(tmp_path / "elsewhere", do_eval=True,
                                        init_checkpoint=str(tmp_path / "out")))
    assert "was trained otherwise than this run reads its data (task.do_lower_case" in (
        caplog.text)
    # Training afresh there would replace the finished run's model: refused.
    model = (tmp_path / "out" / "bert_model.ckpt.index").read_bytes()
    with pytest.raises(UsageError, match=r"holds a trained model \(bert_model.ckpt\) and no "
                                         r"training checkpoint to resume"):
        runner.run(task, quick_options(tmp_path / "out", do_train=True))
    assert (tmp_path / "out" / "bert_model.ckpt.index").read_bytes() == model


def test_serving_refuses_files_other_than_the_trained_ones(cola, tmp_path):
    """A run's folder served with another vocabulary, an edited config or reordered labels:
    each export would have run and answered wrongly without a word."""
    from bert_tf.errors import UsageError
    from bert_tf.scripts.trained_settings import check_trained_files
    from bert_tf.tasks.run_record import recorded_run
    folder = shutil.copytree(cola[1], tmp_path / "out")
    record = recorded_run(str(folder))
    check_trained_files(str(folder), record, needs_labels=True)
    vocab = (folder / "vocab.txt").read_text()
    same_tokens = tmp_path / "crlf_vocab.txt"
    same_tokens.write_bytes(vocab.replace("\n", "\r\n").encode())
    check_trained_files(str(folder), record, str(same_tokens))
    other = tmp_path / "other_vocab.txt"
    other.write_text(vocab.replace("\nhello\n", "\nhallo\n"))
    with pytest.raises(UsageError, match=rf"^{other}: not the vocabulary the model in {folder} "
                                         "was trained with"):
        check_trained_files(str(folder), record, str(other))
    shutil.copy(other, folder / "vocab.txt")  # the folder's own replaced: no tokens to compare
    with pytest.raises(UsageError, match="vocab.txt: not the vocabulary"):
        check_trained_files(str(folder), record)
    shutil.copy(cola[1] / "vocab.txt", folder / "vocab.txt")
    config = folder / "bert_config.json"
    config.write_text(config.read_text().replace('"gelu"', '"relu"'))
    with pytest.raises(UsageError, match=r"differs from the one its model was trained with "
                                         r".*hidden_act='relu' \(trained: 'gelu'\)$"):
        check_trained_files(str(folder), record)
    shutil.copy(cola[1] / "bert_config.json", config)
    (folder / "labels.txt").write_text("1\n0\n")
    with pytest.raises(UsageError, match=r"labels.txt: labels \['1', '0'\], but the model was "
                                         r"trained with \['0', '1'\], in that order"):
        check_trained_files(str(folder), record, needs_labels=True)
    check_trained_files(str(folder), record)  # an encoder export names no labels
    # An interrupted run's folder has no config yet: the export names what it holds (only
    # ckpt-N); "neither bert_config.json nor config.json found" said nothing of it.
    config.unlink()
    check_trained_files(str(folder), record)
