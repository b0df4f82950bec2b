"""Reading SQuAD 1.1 / 2.0 questions from the official JSON layout (plain or .gz).

The file is `{"version": ..., "data": [{"title", "paragraphs": [{"context",
"qas": [{"id", "question", "answers": [{"text", "answer_start"}],
"is_impossible"}]}]}]}`. Each context is split into whitespace-separated words
exactly as the original release does it (space, tab, CR, LF and U+202F are
whitespace; nothing else), keeping for every character the index of its word,
so that a character-level answer becomes a word span.

Every reader (training, prediction, scoring) checks the layout the same way
(`squad_paragraphs`): a question is an object with a unique string id (the
key of the prediction files, which JSON makes a string: an integer id would
never meet its prediction) and a non-empty question text; its "answers", when
present, are objects with a string "text" and an integer "answer_start".
Prediction needs no answers, as in the original; training questions need
exactly one (SQuAD 2.0: or `is_impossible`), and scoring needs them
(`squad_scoring.check_gold`). An answer whose text cannot be recovered from
its words (an annotation that starts or ends inside a word in a way the words
cannot show) is skipped with a warning, as the original does, and every skip
is counted in the log. Anything malformed raises `SquadFormatError` naming the
file and the question id, or the position where there is no id.
"""

import dataclasses
import gzip
import json
import os

from absl import logging

_WHITESPACE = frozenset(" \t\r\n\u202f")
GZIP_MAGIC = b"\x1f\x8b"  # the first two bytes of every gzip file


class SquadFormatError(ValueError):
    """A SQuAD file that cannot be read; the message names the file and question."""


@dataclasses.dataclass(frozen=True)
class SquadExample:
    """One question about one context.

    Attributes:
        qas_id: the question id (the key of the prediction files).
        question_text: the question.
        doc_tokens: the context's whitespace-separated words (shared by the
            questions of one paragraph).
        orig_answer_text: training: the answer text ("" if impossible).
        start_position: training: first word of the answer (-1 if impossible).
        end_position: training: last word of the answer (-1 if impossible).
        is_impossible: SQuAD 2.0 training question without an answer.
        gold_answers: every annotated answer text (for scoring): empty for an
            unanswerable question, None when the question has no "answers"
            (a file for prediction only).
    """

    qas_id: str
    question_text: str
    doc_tokens: list
    orig_answer_text: str = None
    start_position: int = None
    end_position: int = None
    is_impossible: bool = False
    gold_answers: tuple = ()


def split_words(text):
    """Splits `text` on the original's whitespace; returns (words, char_to_word).

    `char_to_word[i]` is the index of the word holding character i (a
    whitespace character maps to the word before it, -1 before the first).

    >>> split_words(" New\\u202fYork  city")
    (['New', 'York', 'city'], [-1, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 2, 2, 2, 2])
    """
    words = []
    char_to_word = []
    previous_is_whitespace = True
    for char in text:
        if char in _WHITESPACE:
            previous_is_whitespace = True
        else:
            if previous_is_whitespace:
                words.append(char)
            else:
                words[-1] += char
            previous_is_whitespace = False
        char_to_word.append(len(words) - 1)
    return words, char_to_word


def load_squad_json(path):
    """Returns the parsed JSON of a SQuAD file: plain or gzip (told by its first bytes,
    whatever its name), with or without a UTF-8 BOM."""
    if os.path.isdir(path):
        raise SquadFormatError(f"{path}: a folder; name the SQuAD JSON file in it")
    with open(path, "rb") as f:
        compressed = f.read(2) == GZIP_MAGIC
    try:
        with (gzip.open if compressed else open)(path, "rt", encoding="utf-8-sig") as f:
            content = json.load(f)
    except json.JSONDecodeError as error:
        raise SquadFormatError(f"{path}: not valid JSON: {error}") from None
    except (UnicodeDecodeError, EOFError, gzip.BadGzipFile) as error:
        raise SquadFormatError(f"{path}: cannot be read: {error}") from None
    if not isinstance(content, dict) or not isinstance(content.get("data"), list):
        raise SquadFormatError(f'{path}: expected a JSON object with a "data" list')
    return content


def read_squad_examples(path, is_training, version_2_with_negative=False):
    """Returns the `SquadExample`s of one file, in file order.

    Args:
        path: SQuAD JSON, plain or gzip.
        is_training: read answer spans (one answer per question, required).
        version_2_with_negative: training questions may be `is_impossible`.

    Raises:
        SquadFormatError: malformed JSON or layout (`squad_paragraphs`),
            training questions without exactly one answer, or an
            `answer_start` that does not point at the answer text.
    """
    examples = []
    skipped = unanswerable = 0
    for context, questions in squad_paragraphs(path, load_squad_json(path)):
        words, char_to_word = split_words(context)
        for qa in questions:
            unanswerable += qa.get("is_impossible", False)
            if not is_training:
                examples.append(SquadExample(qa["id"], qa["question"], words,
                                             gold_answers=gold_answers(qa)))
                continue
            example = _training_example(f"{path}: question {qa['id']}", qa, context, words,
                                        char_to_word, version_2_with_negative)
            if example is None:
                skipped += 1
            else:
                examples.append(example)
    logging.info("%s: %d questions read, %d skipped (answer not recoverable from the "
                 "context's words)", path, len(examples), skipped)
    if unanswerable and not version_2_with_negative:
        logging.warning("%s: %d questions are unanswerable (SQuAD 2.0 `is_impossible`), and "
                        "without --version_2_with_negative each gets an answer; pass it to "
                        "let the model answer nothing", path, unanswerable)
    return examples


def gold_answers(qa):
    """The answer texts of a checked question (a tuple), or None without "answers"."""
    return tuple(answer["text"] for answer in qa["answers"]) if "answers" in qa else None


def squad_paragraphs(path, content):
    """Yields (context, questions) for every paragraph of a parsed SQuAD file.

    Checks the layout every reader relies on, so that none fails on a wrong
    type: "data" holds article objects with a "paragraphs" list; a paragraph
    is an object with a "context" string and a "qas" list of questions, each
    checked by `_check_question`.

    Args:
        path: the file, for the messages.
        content: its parsed JSON (`load_squad_json`).

    Raises:
        SquadFormatError: naming `path` and the article / paragraph / question
            position, or the question id once it is known.
    """
    seen_ids = set()
    for article_index, article in enumerate(content["data"]):
        if not isinstance(article, dict) or not isinstance(article.get("paragraphs"), list):
            raise SquadFormatError(f'{path}: article {article_index}: expected an object '
                                   'with a "paragraphs" list')
        for paragraph_index, paragraph in enumerate(article["paragraphs"]):
            where = f"{path}: article {article_index}, paragraph {paragraph_index}"
            if not (isinstance(paragraph, dict) and isinstance(paragraph.get("context"), str)
                    and isinstance(paragraph.get("qas"), list)):
                raise SquadFormatError(f'{where}: expected an object with a "context" '
                                       'string and a "qas" list')
            for question_index, qa in enumerate(paragraph["qas"]):
                _check_question(f"{where}, question {question_index}", path, qa, seen_ids)
            yield paragraph["context"], paragraph["qas"]


def _check_question(position, path, qa, seen_ids):
    """Raises SquadFormatError unless `qa` is a question object of the official layout.

    A unique string "id" (the prediction files' keys are strings: an integer
    id would be scored as unanswered), a non-empty "question" string, and
    "answers", if present, a list of objects with a string "text" and an
    integer "answer_start". Adds the id to `seen_ids`.
    """
    if not isinstance(qa, dict):
        raise SquadFormatError(f"{position}: expected a question object, found "
                               f"{type(qa).__name__}")
    if not isinstance(qa.get("id"), str):
        raise SquadFormatError(f'{position}: the "id" must be a string, found '
                               f'{qa.get("id")!r}')
    where = f"{path}: question {qa['id']}"
    if qa["id"] in seen_ids:
        raise SquadFormatError(f"{where}: duplicate question id")
    seen_ids.add(qa["id"])
    if not isinstance(qa.get("question"), str) or not qa["question"].strip():
        raise SquadFormatError(f'{where}: empty question (a non-empty "question" string '
                               'is needed)')
    if not isinstance(qa.get("is_impossible", False), bool):
        raise SquadFormatError(f'{where}: "is_impossible" must be true or false, found '
                               f'{qa["is_impossible"]!r}')
    answers = qa.get("answers", [])
    if not isinstance(answers, list):
        raise SquadFormatError(f'{where}: "answers" must be a list')
    for answer_index, answer in enumerate(answers):
        if not (isinstance(answer, dict) and isinstance(answer.get("text"), str)
                and _is_integer(answer.get("answer_start"))):
            raise SquadFormatError(f'{where}: answer {answer_index} must be an object with '
                                   'a string "text" and an integer "answer_start"')


def _is_integer(value):
    """Whether a JSON value is an integer (JSON's true and false are not)."""
    return isinstance(value, int) and not isinstance(value, bool)


def _training_example(where, qa, context, words, char_to_word, version_2):
    """The training example of one checked question, or None if its answer is not
    recoverable from the words."""
    is_impossible = bool(qa.get("is_impossible", False)) if version_2 else False
    if is_impossible:
        return SquadExample(qa["id"], qa["question"], words, "", -1, -1, True,
                            gold_answers(qa))
    answers = qa.get("answers", [])
    if len(answers) != 1:
        raise SquadFormatError(
            f"{where}: a training question needs exactly one answer, found "
            f"{len(answers)}" + ("" if version_2 else
                                 " (SQuAD 2.0 data needs --version_2_with_negative)"))
    text, start = answers[0]["text"], answers[0]["answer_start"]
    if not text:
        raise SquadFormatError(f"{where}: the answer text is empty")
    if context[start:start + len(text)] != text or start < 0:
        raise SquadFormatError(
            f"{where}: answer_start {start} does not point at the answer text {text!r} "
            f"(the context there reads {context[max(start, 0):max(start, 0) + len(text)]!r})")
    start_word, end_word = char_to_word[start], char_to_word[start + len(text) - 1]
    actual_text = " ".join(words[start_word:end_word + 1])
    cleaned_answer = " ".join(text.split())
    if actual_text.find(cleaned_answer) == -1:
        logging.warning("%s: skipped, answer not found in the context's words: %r vs. %r",
                        where, actual_text, cleaned_answer)
        return None
    return SquadExample(qa["id"], qa["question"], words, text, start_word, end_word, False,
                        gold_answers(qa))
