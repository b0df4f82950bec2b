"""The SQuAD family run in-process through the one runner flow, on real and tiny data."""

import gzip
import json
import re

import keras

import numpy as np
import pytest
import tensorflow as tf

from bert_tf.errors import UsageError
from bert_tf.checkpoints import export_original, restore
from bert_tf.modeling import BertEncoder
from bert_tf.tasks import prediction, runner
from bert_tf.tasks.squad import SquadOptions, SquadTask, build_span_model, span_objective
from bert_tf.training.objective import batch_loss
from tasks.task_runs import quick_options, read_results, tiny_model_files
from tests_shared import run_script, shared_path, weights_by_name, write_tiny_bert_config


def squad_subset(tmp_path, name, questions, impossible_every=None):
    """The first `questions` questions of a real SQuAD file, written as .json.gz.

    `impossible_every=k` turns every k-th question into an unanswerable one
    (a SQuAD 2.0 training file made from 1.1 questions).
    """
    with gzip.open(shared_path("squad", f"{name}.json.gz"), "rt", encoding="utf-8") as f:
        content = json.load(f)
    paragraphs, left = [], questions
    for paragraph in content["data"][0]["paragraphs"]:
        if left > 0:
            paragraphs.append(dict(paragraph, qas=paragraph["qas"][:left]))
            left -= len(paragraphs[-1]["qas"])
    if impossible_every:
        qas = [qa for paragraph in paragraphs for qa in paragraph["qas"]]
        for qa in qas[::impossible_every]:
            qa.update(answers=[], is_impossible=True)
    path = tmp_path / f"{name}-{questions}.json.gz"
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(dict(content, data=[dict(content["data"][0], paragraphs=paragraphs)]), f)
    return str(path)


def test_loss_is_mean_of_start_and_end_cross_entropy():
    rng = np.random.default_rng(0)
    start, end = rng.normal(size=(3, 7)).astype("float32"), rng.normal(size=(3, 7)).astype(
        "float32")
    batch = {"start_positions": np.array([0, 3, 6]), "end_positions": np.array([1, 3, 5])}
    total, _ = batch_loss(span_objective(), {"start_logits": start, "end_logits": end}, batch)

    def mean_nll(logits, positions):
        log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        return -log_probs[np.arange(3), positions].mean()

    expected = (mean_nll(start.astype(np.float64), batch["start_positions"])
                + mean_nll(end.astype(np.float64), batch["end_positions"])) / 2
    assert float(total) == pytest.approx(expected, rel=1e-6)


def test_span_head_has_the_original_names():
    model = build_span_model(tiny_model_files().config)
    weights = weights_by_name(model)
    assert {"cls/squad/output_weights", "cls/squad/output_bias"} <= set(weights)
    assert weights["cls/squad/output_bias"].shape == (2,)


def test_train_eval_predict_export_v1(tmp_path):
    train = squad_subset(tmp_path, "train-v1.1", 8)
    dev = squad_subset(tmp_path, "dev-v1.1", 8)
    # n_best_size = max_seq_length: every span is a candidate, so the export's
    # answers (best logits among context pieces only) are the Python path's.
    task = SquadTask(tiny_model_files(num_hidden_layers=1), train, dev, SquadOptions(
        max_seq_length=128, doc_stride=64, n_best_size=128))
    out = tmp_path / "out"
    results = runner.run(task, quick_options(out, do_train=True, do_eval=True,
                                             do_predict=True,
                                             export_dir=str(tmp_path / "served")))
    # 8 questions / batch 8, one epoch: the original counts questions, not windows.
    assert results["global_step"] == 1
    written = read_results(out / "eval_results.txt")
    assert set(written) == {"exact_match", "f1", "global_step"}
    predictions = json.loads((out / "predictions.json").read_text())
    nbest = json.loads((out / "nbest_predictions.json").read_text())
    assert len(predictions) == 8 and set(predictions) == set(nbest)
    assert all(nbest[k][0]["text"] == predictions[k] for k in predictions)
    assert not (out / "null_odds.json").exists()
    assert (out / "bert_model.ckpt.index").exists() and (out / "vocab.txt").exists()
    served = tf.saved_model.load(str(tmp_path / "served"))
    metadata = served.signatures["metadata"]()
    assert metadata["kind"].numpy() == b"span_qa" and metadata["doc_stride"].numpy() == 64
    examples = task.read_split("dev").examples
    answers = served.signatures["serving_default"](
        question=tf.constant([e.question_text for e in examples]),
        context=tf.constant([" ".join(e.doc_tokens) for e in examples]))["answer"]
    assert [a.decode() for a in answers.numpy()] == [predictions[e.qas_id] for e in examples]


def test_version_2_predict_and_eval(tmp_path):
    train = squad_subset(tmp_path, "train-v1.1", 16, impossible_every=3)
    dev = squad_subset(tmp_path, "dev-v2.0", 12)
    options = SquadOptions(max_seq_length=128, doc_stride=64, version_2_with_negative=True)
    task = SquadTask(tiny_model_files(num_hidden_layers=1), train, dev, options)
    assert sum(e.is_impossible for e in task.read_split("train").examples) == 6
    out = tmp_path / "out"
    results = runner.run(task, quick_options(out, do_train=True, do_eval=True,
                                             do_predict=True))
    assert {"exact", "f1", "total", "HasAns_total", "NoAns_total", "best_f1_thresh"} <= \
        set(results)
    assert results["total"] == 12
    null_odds = json.loads((out / "null_odds.json").read_text())
    predictions = json.loads((out / "predictions.json").read_text())
    assert set(null_odds) == set(predictions) and len(predictions) == 12
    # "" exactly where the null odds are above the threshold (0.0).
    assert all((predictions[k] == "") == (null_odds[k] > 0.0) for k in predictions)
    # Predictions of another file into that folder: its eval_results.txt scored the
    # earlier ones, and goes with them.
    other = SquadTask(task.model_files, train, squad_subset(tmp_path, "dev-v2.0", 4),
                      options)
    runner.run(other, quick_options(out, do_predict=True))
    assert len(json.loads((out / "predictions.json").read_text())) == 4
    assert not (out / "eval_results.txt").exists()


def test_missing_files_are_usage_errors(tmp_path):
    task = SquadTask(tiny_model_files(), None, None, SquadOptions(max_seq_length=64))
    with pytest.raises(UsageError, match="--train_file is required"):
        runner.run(task, quick_options(tmp_path / "a", do_train=True))
    with pytest.raises(UsageError, match="--predict_file is required"):
        runner.run(task, quick_options(tmp_path / "b", do_predict=True))
    (tmp_path / "c").write_text("a file")
    with pytest.raises(UsageError, match="--output_dir=.*/c is a file, not a folder"):
        runner.run(task, quick_options(tmp_path / "c", do_train=True))


BLANK = " \u200b \u3000 "  # whitespace and characters the tokenizer drops: no piece

UNUSABLE = {
    "no_data": [],
    "no_paragraphs": [{"title": "t", "paragraphs": []}],
    "blank_context": [{"title": "t", "paragraphs": [{"context": BLANK, "qas": [
        {"id": "q", "question": "What?", "answers": [{"text": "\u200b", "answer_start": 1}]}]}]}],
}


def unusable_file(tmp_path, kind):
    """Writes SQuAD 1.1 JSON of `UNUSABLE[kind]`; returns its path."""
    path = tmp_path / f"{kind}.json"
    path.write_text(json.dumps({"version": "1.1", "data": UNUSABLE[kind]}), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("kind, split, message", [
    ("no_data", "train", "no questions to train on"),
    ("no_paragraphs", "train", "no questions to train on"),
    ("blank_context", "train", r"no training windows \(every question's context is empty"),
    ("no_data", "test", "no questions to answer"),
    ("no_paragraphs", "dev", "no questions to answer"),
    ("blank_context", "test", r"no windows \(every question's context is empty"),
])
def test_a_file_without_windows_is_named_when_read(tmp_path, kind, split, message):
    """Caught when the split is read, before a model: not a shuffle or predict error later."""
    path = unusable_file(tmp_path, kind)
    task = SquadTask(tiny_model_files(), path, path, SquadOptions(max_seq_length=64,
                                                                  max_query_length=16))
    flag = "--train_file" if split == "train" else "--predict_file"
    with pytest.raises(ValueError, match=f"^{flag}={re.escape(path)}: {message}"):
        task.read_split(split)


UNSCORED = [{"id": "q1", "question": "Who?", "answers": [{"text": "Ann", "answer_start": 0}]},
            {"id": "q2", "question": "Who?"},
            {"id": "q3", "question": "Who?", "answers": []}]


@pytest.mark.parametrize("qas, version_2, message", [
    (UNSCORED[:2], False, 'question q2: no "answers" to score against'),
    (UNSCORED[:2], True, 'question q2: no "answers" to score against'),
    (UNSCORED[::2], False, r"question q3: no answer to score against \(only SQuAD 2.0"),
    (UNSCORED[::2], True, None),
])
def test_questions_without_answers_are_predicted_not_scored(tmp_path, qas, version_2, message):
    """As in the original, predicting needs no answers; --do_eval ("dev") names the file and
    the question it cannot score before any model, not a scoring error after predicting."""
    path = tmp_path / "predict.json"
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "t", "paragraphs": [
        {"context": "Ann sang.", "qas": qas}]}]}), encoding="utf-8")
    task = SquadTask(tiny_model_files(), None, str(path), SquadOptions(
        max_seq_length=64, max_query_length=16, version_2_with_negative=version_2))
    assert len(task.read_split("test")) == 2
    if message is None:
        assert len(task.read_split("dev")) == 2
        return
    with pytest.raises(ValueError, match=f"^--predict_file={re.escape(str(path))} "
                                         rf"\(scored by --do_eval\): {message}"):
        task.read_split("dev")


def test_run_squad_without_training_windows_is_a_one_line_error(tmp_path):
    result = run_script(
        "run_squad.py", f"--vocab_file={shared_path('vocab', 'bert-base-uncased-vocab.txt')}",
        f"--bert_config_file={write_tiny_bert_config(tmp_path / 'c.json')}", "--do_train",
        f"--train_file={unusable_file(tmp_path, 'blank_context')}", "--max_seq_length=96",
        f"--output_dir={tmp_path / 'out'}")
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        f"run_squad: error: --train_file={tmp_path / 'blank_context.json'}: no training "
        "windows (every question's context is empty after tokenization)")
    assert "Traceback" not in result.stderr and not (tmp_path / "out").exists()



@pytest.mark.parametrize("name", ["predictions.json", "eval_results.txt"])
def test_an_output_never_replaces_the_predict_file(tmp_path, name):
    out = tmp_path / "out"
    out.mkdir()
    with gzip.open(squad_subset(tmp_path, "dev-v1.1", 4), "rb") as f:
        (out / name).write_bytes(f.read())
    before = (out / name).read_bytes()
    task = SquadTask(tiny_model_files(), None, str(out / name), SquadOptions(max_seq_length=64))
    with pytest.raises(UsageError, match=f"output_dir's file .*{name} is the predict_file "
                                         f".*{name}: refusing"):
        runner.run(task, quick_options(out, do_eval=True, do_predict=True))
    assert (out / name).read_bytes() == before
    assert sorted(path.name for path in out.iterdir()) == [name]


def test_scoring_a_checkpoint_without_the_span_head_is_refused(tmp_path):
    """A pretrained encoder (or another task's model) as the model of a prediction alone:
    the head was left randomly initialised and its answers written, exit 0."""
    files = tiny_model_files(num_hidden_layers=1)
    dev = squad_subset(tmp_path, "dev-v1.1", 4)
    task = SquadTask(files, None, dev, SquadOptions(max_seq_length=64, max_query_length=16))
    encoder = str(tmp_path / "pretrained")
    export_original(BertEncoder(files.config), files.config, files.vocab_file, encoder)
    with pytest.raises(UsageError, match=(
            f"^--init_checkpoint={re.escape(encoder)} has no cls/squad/output_bias nor 1 more "
            "of the model's weights: it is not a trained squad model, and an evaluation or "
            "prediction with it would score randomly initialised weights")):
        runner.run(task, quick_options(tmp_path / "out", do_predict=True,
                                       init_checkpoint=encoder))
    assert not (tmp_path / "out" / "predictions.json").exists()
    # A span model's checkpoint has every weight: its answers are written.
    trained = str(tmp_path / "trained")
    export_original(build_span_model(files.config), files.config, files.vocab_file, trained)
    runner.run(task, quick_options(tmp_path / "out", do_predict=True, init_checkpoint=trained))
    assert len(json.loads((tmp_path / "out" / "predictions.json").read_text())) == 4


NUMBERS = " ".join(["alpha beta gamma delta epsilon zeta eta theta iota kappa"] * 4)


def test_long_context_answer_comes_from_its_best_window(tmp_path):
    """A context of several windows: after training on it, the answer is read from the
    window where its pieces have the most context, and it is the gold answer."""
    keras.utils.set_random_seed(1)
    context = NUMBERS + " the treasure lies under the old mill " + NUMBERS
    qas = [{"id": "q", "question": "where is the treasure?",
            "answers": [{"text": "under the old mill",
                         "answer_start": context.index("under the old mill")}]}]
    path = tmp_path / "long.json"
    path.write_text(json.dumps({"version": "1.1", "data": [{"title": "t", "paragraphs": [
        {"context": context, "qas": qas}]}]}), encoding="utf-8")
    task = SquadTask(tiny_model_files(), str(path), str(path),
                     SquadOptions(max_seq_length=32, doc_stride=8, max_query_length=8))
    train = task.read_split("train")
    windows = train.features
    assert len(windows) > 5
    holding = [f for f in windows if f.start_position > 0]
    assert 1 < len(holding) < len(windows)  # several windows hold the answer, not all
    out = tmp_path / "out"
    results = runner.run(task, quick_options(out, do_train=True, do_eval=True, do_predict=True,
                                             num_train_steps=150, learning_rate=3e-3))
    assert results["exact_match"] == 100.0
    answer = json.loads((out / "nbest_predictions.json").read_text())["q"][0]
    assert answer["text"] == "under the old mill"
    # The exported model's logits: the answer's start piece is in several windows, each
    # with its own logit (with this seed a later window scores it higher); n-best took
    # the one of the window where the piece has the most context.
    model = build_span_model(task.model_files.config)
    restore(model, str(out))
    dev = task.read_split("dev")
    outputs = prediction.predict(model, task.dataset(dev, 8, False))
    start_piece = holding[0].doc_start + holding[0].start_position - holding[0].doc_offset
    logits = {f.doc_span_index: float(outputs["start_logits"][row, f.doc_offset + start_piece
                                                               - f.doc_start])
              for row, f in enumerate(dev.features)
              if f.doc_start <= start_piece < f.doc_start + f.doc_length}
    best = [f.doc_span_index for f in dev.features if f.doc_span_index in logits
            and f.max_context[start_piece - f.doc_start]]
    assert len(logits) > 1 and len(best) == 1
    # Within 1e-5: the run's prediction pass and this one may sum in other orders (on a
    # GPU one is XLA-compiled: 2.5e-5 apart at 3.78); the other windows are further away.
    assert answer["start_logit"] == pytest.approx(logits[best[0]], rel=1e-5)
    assert all(abs(value - logits[best[0]]) > 1e-4 for index, value in logits.items()
               if index != best[0])
