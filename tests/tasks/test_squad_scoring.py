"""Official SQuAD scoring: hand-worked cases, the command line, and HF's squad_metrics."""

import gzip
import json
import pathlib
import re

import pytest
from transformers.data.metrics import squad_metrics

from bert_tf import evaluate_squad
from bert_tf.tasks import squad_postprocessing
from bert_tf.tasks import squad_scoring
from tests_shared import REPO


def squad_content(qas, version):
    return {"version": version, "data": [{"title": "t", "paragraphs": [
        {"context": "unused here", "qas": qas}]}]}


def qa(qas_id, *golds, **extra):
    return {"id": qas_id, "question": "?",
            "answers": [{"text": g, "answer_start": 0} for g in golds], **extra}


V1_QAS = [qa("q1", "Denver Broncos", "The Denver Broncos"),
          qa("q2", "Santa Clara, California"),
          qa("q3", "Levi's Stadium")]
V1_PREDICTIONS = {"q1": "the broncos", "q2": "Santa Clara California."}  # q3 unanswered


def test_v1_hand_worked():
    # q1: "broncos" vs "denver broncos": EM 0; F1 with p = 1, r = 1/2: 2/3.
    #     (vs "the denver broncos": normalised the same, no better.)
    # q2: punctuation dropped on both sides: EM 1, F1 1.
    # q3: no prediction: 0 and 0, still counted.
    questions = evaluate_squad.gold_questions(squad_content(V1_QAS, "1.1"), "dev.json")
    report = squad_scoring.score_v1(questions, V1_PREDICTIONS)
    assert report == {"exact_match": pytest.approx(100 / 3),
                      "f1": pytest.approx(100 * (2 / 3 + 1) / 3)}
    assert list(report) == ["exact_match", "f1"]


def test_v1_and_v2_f1_differ_on_empty_answers():
    # "The" normalises to nothing: 1.1 shares no token (0); 2.0 calls two empties equal (1).
    assert squad_scoring.f1_v1("The", "an") == 0
    assert squad_scoring.f1_v2("The", "an") == 1
    assert squad_scoring.f1_v2("", "Paris") == 0
    # Counts with multiplicity: pred "x y y", gold "y y y z": shared 2, p 2/3, r 1/2.
    assert squad_scoring.f1_v1("x y y", "y y y z") == pytest.approx(2 * (2 / 3) * 0.5 / (7 / 6))


V2_QAS = [qa("q1", "Paris"), qa("q2", is_impossible=True), qa("q3", is_impossible=True),
          qa("q4", "the Nile river", "Nile River")]
V2_PREDICTIONS = {"q1": "Paris", "q2": "", "q3": "London", "q4": "Nile"}
V2_ODDS = {"q1": 0.1, "q2": 0.9, "q3": 0.8, "q4": 0.3}


def test_v2_hand_worked():
    questions = evaluate_squad.gold_questions(squad_content(V2_QAS, "v2.0"), "dev.json")
    # exact 1, 1, 0, 0; F1 1, 1, 0, 2/3 (pred [nile], gold [nile, river]).
    plain = squad_scoring.score_v2(questions, V2_PREDICTIONS)
    assert plain == pytest.approx({
        "exact": 50.0, "f1": 100 * (2 + 2 / 3) / 4, "total": 4,
        "HasAns_exact": 50.0, "HasAns_f1": 100 * (1 + 2 / 3) / 2, "HasAns_total": 2,
        "NoAns_exact": 50.0, "NoAns_f1": 50.0, "NoAns_total": 2})
    # Odds above 0.5 mean "no answer": q2 (right anyway) and q3 (now right).
    # Threshold search, odds ascending, from 2 (all "no answer"):
    #   exact: q1 +1 -> 3 (best, 0.1); q4 +0; q3 -1; q2 0  -> 75.0 at 0.1
    #   f1:    q1 +1 -> 3 (0.1); q4 +2/3 -> 3.67 (best, 0.3); q3 -1; q2 0 -> 91.67 at 0.3
    report = squad_scoring.score_v2(questions, V2_PREDICTIONS, V2_ODDS, na_prob_thresh=0.5)
    assert report == pytest.approx({
        "exact": 75.0, "f1": 100 * (3 + 2 / 3) / 4, "total": 4,
        "HasAns_exact": 50.0, "HasAns_f1": 100 * (1 + 2 / 3) / 2, "HasAns_total": 2,
        "NoAns_exact": 100.0, "NoAns_f1": 100.0, "NoAns_total": 2,
        "best_exact": 75.0, "best_exact_thresh": 0.1,
        "best_f1": 100 * (3 + 2 / 3) / 4, "best_f1_thresh": 0.3})
    assert list(report)[-4:] == ["best_exact", "best_exact_thresh", "best_f1", "best_f1_thresh"]


def test_v2_without_any_prediction_is_refused_not_divided_by_zero():
    questions = evaluate_squad.gold_questions(squad_content(V2_QAS, "v2.0"), "dev.json")
    with pytest.raises(ValueError, match="no question has a prediction"):
        squad_scoring.score_v2(questions, {"elsewhere": "Paris"})


def write(path, content):
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(content, f)
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return str(path)


def test_command_line_prints_the_official_json(tmp_path, capsys):
    data = write(tmp_path / "dev-v1.1.json.gz", squad_content(V1_QAS, "1.1"))
    predictions = write(tmp_path / "predictions.json", V1_PREDICTIONS)
    evaluate_squad.main([data, predictions])
    out, err = capsys.readouterr()
    assert json.loads(out) == pytest.approx({"exact_match": 100 / 3, "f1": 500 / 9})
    assert out.count("\n") == 1 and "Unanswered question q3 will receive score 0." in err

    data2 = write(tmp_path / "dev-v2.0.json", squad_content(V2_QAS, "v2.0"))
    predictions2 = write(tmp_path / "p2.json", V2_PREDICTIONS)
    odds = write(tmp_path / "null_odds.json", V2_ODDS)
    evaluate_squad.main([data2, predictions2, "--na-prob-file", odds, "--na-prob-thresh", "0.5"])
    out, _ = capsys.readouterr()
    assert out.startswith('{\n  "exact": 75.0,\n') and json.loads(out)["best_f1_thresh"] == 0.3
    out_file = tmp_path / "eval.json"
    evaluate_squad.main([data2, predictions2, "-n", odds, "-o", str(out_file)])
    assert capsys.readouterr().out == ""
    assert json.loads(out_file.read_text())["exact"] == 50.0  # default threshold 1.0


def test_command_line_errors_name_the_file(tmp_path, capsys):
    data = write(tmp_path / "dev.json", squad_content(V2_QAS, "v2.0"))
    broken = tmp_path / "predictions.json"
    broken.write_text("{oops", encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        evaluate_squad.main([data, str(broken)])
    assert exit_info.value.code == 1  # a bad file; 2 is for a wrong command line
    assert f"{broken}: not valid JSON" in capsys.readouterr().err
    predictions = write(tmp_path / "p.json", V2_PREDICTIONS)
    odds = write(tmp_path / "odds.json", {"q1": 0.1})
    with pytest.raises(SystemExit):
        evaluate_squad.main([data, predictions, "-n", odds])
    assert capsys.readouterr().err == f"error: {odds}: no null odds for question q2\n"
    with pytest.raises(SystemExit):  # the data file given as the predictions too
        evaluate_squad.main([data, data])
    assert capsys.readouterr().err == (f"error: {data}: a SQuAD data file, not answer text by "
                                       "question id (the data file comes first, then the "
                                       "predictions)\n")
    long_answer = write(tmp_path / "long.json", {"q1": ["x" * 500]})
    with pytest.raises(SystemExit):
        evaluate_squad.main([data, long_answer])
    assert capsys.readouterr().err == (f"error: {long_answer}: question q1: the answer text "
                                       f"must be a string, found ['{'x' * 75}...\n")


V1_ANSWERED = [qa("q1", "Paris"), qa("q2", "Nile")]
V1_PREDICTED = {"q1": "Paris", "q2": "Nile"}


@pytest.mark.parametrize("qas, version, predictions, odds, wrong_file, message", [
    (V1_ANSWERED, "1.1", {"q1": None, "q2": "Nile"}, None, "predictions.json",
     "question q1: the answer text must be a string, found None"),
    (V1_ANSWERED, "1.1", {"q1": "Paris", "q2": 5}, None, "predictions.json",
     "question q2: the answer text must be a string, found 5"),
    ([], "1.1", V1_PREDICTED, None, "dev.json", "no questions"),
    (V1_ANSWERED, "v2.0", {"x": "Paris"}, None, "predictions.json",
     "no prediction for any question of {dev}"),
    (V1_ANSWERED, "v2.0", V1_PREDICTED, {"q1": "high", "q2": 0.1}, "odds.json",
     "question q1: the null odds must be a number, found 'high'"),
    (V1_ANSWERED, "v2.0", V1_PREDICTED, {"q1": 0.1, "q2": True}, "odds.json",
     "question q2: the null odds must be a number, found True"),
    ([qa("q1", "Paris"), qa("q2")], "1.1", V1_PREDICTED, None, "dev.json",
     r"question q2: no answer to score against \(only SQuAD 2.0 has unanswerable questions\)"),
    ([qa("q1", "Paris"), {"id": "q2", "question": "?"}], "v2.0", V1_PREDICTED, None,
     "dev.json", 'question q2: no "answers" to score against'),
    ([qa("q1", "Paris"), "q2"], "1.1", V1_PREDICTED, None, "dev.json",
     "article 0, paragraph 0, question 1: expected a question object, found str"),
    ([qa(7, "Paris")], "1.1", {"7": "Paris"}, None, "dev.json",
     'article 0, paragraph 0, question 0: the "id" must be a string, found 7'),
    ([{"id": "q1", "question": "?", "answers": [{"answer_start": 0}]}], "1.1", V1_PREDICTED,
     None, "dev.json", 'question q1: answer 0 must be an object with a string "text"'),
])
def test_command_line_refuses_bad_input_in_one_line(tmp_path, capsys, qas, version,
                                                     predictions, odds, wrong_file, message):
    """Exit 1 and one line naming the wrong file and the question, never a traceback or
    a score computed from input the official scripts would not take."""
    dev = write(tmp_path / "dev.json", squad_content(qas, version))
    argv = [dev, write(tmp_path / "predictions.json", predictions)]
    if odds is not None:
        argv += ["-n", write(tmp_path / "odds.json", odds)]
    with pytest.raises(SystemExit) as exit_info:
        evaluate_squad.main(argv)
    assert exit_info.value.code == 1
    out, err = capsys.readouterr()
    assert out == ""
    wrong = re.escape(str(tmp_path / wrong_file))
    assert re.fullmatch(f"error: {wrong}: {message.format(dev=re.escape(dev))}.*\n", err)


@pytest.fixture(scope="module")
def predicted_subsets():
    """SQuAD dev subsets with predictions from deterministic logits, a third set to gold."""
    import squad_parity  # bench/, on the test path
    subsets = {}
    for name in ("dev-v1.1", "dev-v2.0"):
        content, version_2 = squad_parity.squad_subset(name, 300)
        parity = squad_parity.Parity(content, version_2, is_training=False)
        start, end = squad_parity.deterministic_logits(parity.features)
        predictions, _, odds = squad_postprocessing.predict_answers(
            parity.examples, parity.features, start, end, version_2_with_negative=version_2)
        for index, example in enumerate(parity.examples):
            if index % 3 == 0:
                predictions[example.qas_id] = (example.gold_answers or [""])[-1].upper()
        subsets[name] = content, parity.hf_examples, predictions, odds
    return subsets


def test_v1_scores_agree_with_hf_squad_metrics(predicted_subsets):
    name = "dev-v1.1"
    content, hf_examples, predictions, _ = predicted_subsets[name]
    ours = squad_scoring.score_v1(evaluate_squad.gold_questions(content, name),
                                  predictions)
    hf = squad_metrics.squad_evaluate(hf_examples, predictions)
    assert 30 < ours["exact_match"] < 100 and ours["f1"] > ours["exact_match"]
    assert ours == {"exact_match": pytest.approx(hf["exact"], abs=1e-9),
                    "f1": pytest.approx(hf["f1"], abs=1e-9)}


@pytest.mark.parametrize("threshold", [1.0, 0.0, -2.0])
def test_v2_scores_agree_with_hf_squad_metrics(predicted_subsets, threshold):
    name = "dev-v2.0"
    content, hf_examples, predictions, odds = predicted_subsets[name]
    ours = squad_scoring.score_v2(evaluate_squad.gold_questions(content, name), predictions,
                                  odds, threshold)
    hf = squad_metrics.squad_evaluate(hf_examples, predictions, odds, threshold)
    assert 0 < ours["HasAns_total"] < ours["total"] == 300
    assert ours == pytest.approx(dict(hf), abs=1e-9)


def test_command_line_never_writes_its_scores_over_a_file_it_reads(tmp_path, capsys):
    data = write(tmp_path / "dev.json", squad_content(V1_QAS, "1.1"))
    predictions = write(tmp_path / "predictions.json", V1_PREDICTIONS)
    before = pathlib.Path(data).read_text()
    for out_file in (data, str(tmp_path / "." / "predictions.json")):
        with pytest.raises(SystemExit) as exit_info:
            evaluate_squad.main([data, predictions, "--out-file", out_file])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err
        assert err.startswith(f"error: --out-file {out_file} is the ") and err.count("\n") == 1
    assert pathlib.Path(data).read_text() == before
    assert json.loads(pathlib.Path(predictions).read_text()) == V1_PREDICTIONS


def test_the_scorer_starts_without_tensorflow():
    # So it starts in a fraction of a second, and prints none of TensorFlow's start-up notices.
    import subprocess
    import sys
    loaded = subprocess.run([sys.executable, "-c", "import sys, bert_tf.evaluate_squad; "
                             "print('tensorflow' in sys.modules)"],
                            capture_output=True, text=True, check=True, cwd=REPO)
    assert loaded.stdout == "False\n" and loaded.stderr == ""


def test_a_reader_that_goes_away_ends_the_scorer_quietly(tmp_path):
    """`bert_evaluate_squad DATA PREDS | head -1`, the reader gone before the scores: exit
    141 and nothing on stderr, as the other commands; it was a BrokenPipeError traceback."""
    import os
    import subprocess
    import sys
    data = write(tmp_path / "dev-v1.1.json", squad_content(V1_QAS, "1.1"))
    predictions = write(tmp_path / "predictions.json", V1_PREDICTIONS)
    read_end, write_end = os.pipe()
    os.close(read_end)  # no reader
    try:
        run = subprocess.run([sys.executable, "-m", "bert_tf.evaluate_squad", data, predictions],
                             stdout=write_end, stderr=subprocess.PIPE, text=True, cwd=REPO)
    finally:
        os.close(write_end)
    assert run.returncode == 141, run.stderr
    assert "Traceback" not in run.stderr and "Unanswered question q3" in run.stderr
