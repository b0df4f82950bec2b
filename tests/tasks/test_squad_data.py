"""Reading SQuAD JSON: the original's word split, answer spans, and clear errors."""

import gzip
import json

from absl import logging
import pytest

from bert_tf.tasks import squad_data
from tests_shared import shared_path

CONTEXT = "The leader was John\u202fSmith (1895-1943).\n Beyoncé  sang."


def squad_file(tmp_path, qas, context=CONTEXT, name="squad.json", version="1.1"):
    content = {"version": version,
               "data": [{"title": "t", "paragraphs": [{"context": context, "qas": qas}]}]}
    path = tmp_path / name
    if name.endswith(".gz"):
        with gzip.open(path, "wt", encoding="utf-8") as f:
            json.dump(content, f)
    else:
        path.write_text(json.dumps(content), encoding="utf-8")
    return path


def question(qas_id, text, start, question_text="Who?", **extra):
    return {"id": qas_id, "question": question_text,
            "answers": [{"text": text, "answer_start": start}], **extra}


def test_word_split_is_the_originals():
    words, char_to_word = squad_data.split_words(CONTEXT)
    # U+202F separates words; tabs/newlines too; other characters never do.
    assert words == ["The", "leader", "was", "John", "Smith", "(1895-1943).", "Beyoncé", "sang."]
    assert len(char_to_word) == len(CONTEXT)
    assert char_to_word[CONTEXT.index("Smith")] == 4
    assert char_to_word[CONTEXT.index("\n")] == 5  # whitespace belongs to the word before
    nbsp_words, _ = squad_data.split_words("10\u00a0km")
    assert nbsp_words == ["10\u00a0km"]  # no-break space is not whitespace here


@pytest.mark.parametrize("name", ["squad.json", "squad.json.gz"])
def test_training_spans_plain_and_gzip(tmp_path, name):
    path = squad_file(tmp_path, [question("q1", "1895", CONTEXT.index("1895")),
                                 question("q2", "Beyoncé", CONTEXT.index("Bey"))], name=name)
    first, second = squad_data.read_squad_examples(path, is_training=True)
    assert (first.start_position, first.end_position, first.orig_answer_text) == (5, 5, "1895")
    assert (second.start_position, second.end_position) == (6, 6)
    assert first.doc_tokens is second.doc_tokens  # one split per paragraph


def test_eval_examples_keep_every_gold_answer(tmp_path):
    qa = {"id": "q", "question": "Who?", "answers": [
        {"text": "John Smith", "answer_start": 15}, {"text": "Smith", "answer_start": 20}]}
    (example,) = squad_data.read_squad_examples(squad_file(tmp_path, [qa]), is_training=False)
    assert example.gold_answers == ("John Smith", "Smith")
    assert example.start_position is None


def test_version_2_impossible_questions(tmp_path):
    qas = [{"id": "q0", "question": "Why?", "answers": [], "is_impossible": True},
           question("q1", "sang", CONTEXT.index("sang"), is_impossible=False)]
    path = squad_file(tmp_path, qas, version="v2.0")
    impossible, possible = squad_data.read_squad_examples(path, True, version_2_with_negative=True)
    assert (impossible.is_impossible, impossible.start_position, impossible.end_position,
            impossible.orig_answer_text) == (True, -1, -1, "")
    assert (possible.is_impossible, possible.start_position) == (False, 7)
    with pytest.raises(squad_data.SquadFormatError,
                       match=r"question q0: .*exactly one answer, found 0 .*version_2"):
        squad_data.read_squad_examples(path, is_training=True)


def test_unrecoverable_answer_is_skipped_and_counted(tmp_path, monkeypatch):
    messages = []
    monkeypatch.setattr(logging, "warning", lambda msg, *a: messages.append(msg % a))
    monkeypatch.setattr(logging, "info", lambda msg, *a: messages.append(msg % a))
    context = "It is 10\u00a0km long."
    path = squad_file(tmp_path, [question("far", "10\u00a0km", 6), question("ok", "long", 12)],
                      context=context)
    examples = squad_data.read_squad_examples(path, is_training=True)
    assert [e.qas_id for e in examples] == ["ok"]
    assert any("question far: skipped" in m for m in messages)
    assert any("1 questions read, 1 skipped" in m for m in messages)


@pytest.mark.parametrize("qas, message", [
    ([{"id": "q7", "question": "Who?", "answers": []}], r"question q7: .*exactly one answer"),
    ([question("q8", "Smith", 3)], r"question q8: answer_start 3 does not point at the "
                                   r"answer text 'Smith' \(the context there reads ' lead'\)"),
    ([question("q9", "Smith", 20, question_text="  ")], r"question q9: empty question"),
    ([question("q1", "Smith", 20), question("q1", "Smith", 20)], r"question q1: duplicate"),
    ([{"id": "q2", "answers": []}], r"question q2: empty question"),
])
def test_bad_training_input_names_file_and_question(tmp_path, qas, message):
    path = squad_file(tmp_path, qas)
    with pytest.raises(squad_data.SquadFormatError, match=message) as error:
        squad_data.read_squad_examples(path, is_training=True)
    assert str(path) in str(error.value)


def paragraph(qas, context=CONTEXT):
    return {"context": context, "qas": qas}


ANSWER_LAYOUT = r'answer 0 must be an object with a string "text" and an integer "answer_start"'


@pytest.mark.parametrize("data, message", [
    (["an article"], r'article 0: expected an object with a "paragraphs" list'),
    ([{"title": "t"}], r'article 0: expected an object with a "paragraphs" list'),
    ([{"paragraphs": [paragraph([]), paragraph([], context=None)]}],
     r'article 0, paragraph 1: expected an object with a "context" string and a "qas" list'),
    ([{"paragraphs": [{"context": CONTEXT, "qas": {"id": "q1"}}]}],
     r'article 0, paragraph 0: expected an object with a "context" string'),
    ([{"paragraphs": [paragraph([question("q1", "Smith", 20), "q"])]}],
     r"article 0, paragraph 0, question 1: expected a question object, found str"),
    ([{"paragraphs": [paragraph([question(7, "Smith", 20)])]}],
     r'article 0, paragraph 0, question 0: the "id" must be a string, found 7'),
    ([{"paragraphs": [paragraph([{"id": "q1", "question": "Who?",
                                  "answers": [{"answer_start": 20}]}])]}],
     f"question q1: {ANSWER_LAYOUT}"),
    ([{"paragraphs": [paragraph([question("q1", "Smith", "20")])]}],
     f"question q1: {ANSWER_LAYOUT}"),
    ([{"paragraphs": [paragraph([{"id": "q1", "question": "Who?", "answers": ["Smith"]}])]}],
     f"question q1: {ANSWER_LAYOUT}"),
    ([{"paragraphs": [paragraph([{"id": "q1", "question": "Who?", "answers": "Smith"}])]}],
     r'question q1: "answers" must be a list'),
    ([{"paragraphs": [paragraph([question("q1", "Smith", 20, is_impossible="false")])]}],
     r'question q1: "is_impossible" must be true or false, found \'false\''),
])
@pytest.mark.parametrize("is_training", [True, False])
def test_bad_layout_names_file_and_position(tmp_path, data, message, is_training):
    """Every reader refuses a wrong type where it is, before reading anything of it."""
    path = tmp_path / "squad.json"
    path.write_text(json.dumps({"version": "1.1", "data": data}), encoding="utf-8")
    with pytest.raises(squad_data.SquadFormatError, match=f"^{path}: {message}"):
        squad_data.read_squad_examples(path, is_training)


def test_prediction_needs_no_answers(tmp_path):
    """As in the original, only training reads the answers; scoring refuses None."""
    path = squad_file(tmp_path, [{"id": "q1", "question": "Who?"},
                                 {"id": "q2", "question": "Who?", "answers": []}])
    first, second = squad_data.read_squad_examples(path, is_training=False)
    assert (first.gold_answers, second.gold_answers) == (None, ())
    with pytest.raises(squad_data.SquadFormatError,
                       match=r"question q1: a training question needs exactly one answer, "
                             r"found 0"):
        squad_data.read_squad_examples(path, is_training=True)


def test_malformed_json_names_the_file(tmp_path):
    path = tmp_path / "broken.json"
    path.write_text('{"data": [', encoding="utf-8")
    with pytest.raises(squad_data.SquadFormatError, match=r"broken.json: not valid JSON"):
        squad_data.read_squad_examples(path, is_training=False)
    path.write_text('[1, 2]', encoding="utf-8")
    with pytest.raises(squad_data.SquadFormatError, match=r'broken.json: expected .*"data"'):
        squad_data.read_squad_examples(path, is_training=False)
    cut_short = tmp_path / "cut.json.gz"
    cut_short.write_bytes(gzip.compress(b'{"data": []}')[:12])
    with pytest.raises(squad_data.SquadFormatError, match=r"cut.json.gz: cannot be read"):
        squad_data.read_squad_examples(cut_short, is_training=False)
    with pytest.raises(squad_data.SquadFormatError, match=rf"^{tmp_path}: a folder; name the "
                                                          "SQuAD JSON file in it$"):
        squad_data.read_squad_examples(tmp_path, is_training=False)


def test_a_file_is_read_by_what_it_holds_not_its_name(tmp_path):
    """gzip without `.gz`, `.gz` without gzip, a UTF-8 BOM: each read as it is."""
    qas = [question("q1", "1895", CONTEXT.index("1895"))]
    compressed = squad_file(tmp_path, qas, name="a.json.gz").rename(tmp_path / "gzip.json")
    plain = squad_file(tmp_path, qas).rename(tmp_path / "plain.json.gz")
    with_bom = tmp_path / "bom.json"
    with_bom.write_bytes(b"\xef\xbb\xbf" + plain.read_bytes())
    for path in (compressed, plain, with_bom):
        (example,) = squad_data.read_squad_examples(path, is_training=True)
        assert example.orig_answer_text == "1895"


def test_squad_2_questions_read_without_the_flag_are_warned_about(tmp_path, caplog):
    qas = [{"id": "q0", "question": "Why?", "answers": [], "is_impossible": True},
           question("q1", "sang", CONTEXT.index("sang"), is_impossible=False)]
    path = squad_file(tmp_path, qas, version="v2.0")
    with caplog.at_level("WARNING"):
        squad_data.read_squad_examples(path, is_training=False, version_2_with_negative=True)
    assert "unanswerable" not in caplog.text
    with caplog.at_level("WARNING"):
        squad_data.read_squad_examples(path, is_training=False)
    assert (f"{path}: 1 questions are unanswerable (SQuAD 2.0 `is_impossible`), and without "
            "--version_2_with_negative each gets an answer") in caplog.text


def test_real_files_read_completely():
    dev = squad_data.read_squad_examples(shared_path("squad", "dev-v1.1.json.gz"), False)
    assert len(dev) == 10570 and all(e.gold_answers for e in dev)
    dev2 = squad_data.read_squad_examples(shared_path("squad", "dev-v2.0.json.gz"), False)
    assert len(dev2) == 11873
    assert sum(not e.gold_answers for e in dev2) == 5945
