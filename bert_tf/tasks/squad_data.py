"""Reading SQuAD 1.1 / 2.0 questions from the official JSON layout (plain or .gz).

The file is `{"version": ..., "data": [{"title", "paragraphs": [{"context",
"qas": [{"id", "question", "answers": [{"text", "answer_start"}],
"is_impossible"}]}]}]}`. Each context is split into whitespace-separated words
exactly as the original release does it (space, tab, CR, LF and U+202F are
whitespace; nothing else), keeping for every character the index of its word,
so that a character-level answer becomes a word span.

Training questions need exactly one answer (SQuAD 2.0: or `is_impossible`);
an answer whose text cannot be recovered from its words (an annotation that
starts or ends inside a word in a way the words cannot show) is skipped with a
warning, as the original does, and every skip is counted in the log. Anything
malformed raises `SquadFormatError` naming the file and the question id.
"""

import dataclasses
import gzip
import json

from absl import logging

_WHITESPACE = frozenset(" \t\r\n\u202f")


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
        gold_answers: every annotated answer text (for scoring); empty when the
            file has none.
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
    """Returns the parsed JSON of a SQuAD file (gzip if the name ends in .gz)."""
    opener = gzip.open if str(path).endswith(".gz") else open
    try:
        with opener(path, "rt", encoding="utf-8") as f:
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
        path: SQuAD JSON, plain or gzip (`.gz`).
        is_training: read answer spans (one answer per question, required).
        version_2_with_negative: training questions may be `is_impossible`.

    Raises:
        SquadFormatError: malformed JSON or layout, duplicate ids, empty
            questions, training questions without exactly one answer, or an
            `answer_start` that does not point at the answer text.
    """
    examples = []
    seen_ids = set()
    skipped = 0
    for context, (words, char_to_word), qa in _questions(path):
        qas_id = qa["id"]
        where = f"{path}: question {qas_id}"
        if qas_id in seen_ids:
            raise SquadFormatError(f"{where}: duplicate question id")
        seen_ids.add(qas_id)
        if not isinstance(qa["question"], str) or not qa["question"].strip():
            raise SquadFormatError(f"{where}: empty question")
        gold_answers = tuple(answer["text"] for answer in qa["answers"])
        if not is_training:
            examples.append(SquadExample(qas_id, qa["question"], words,
                                         gold_answers=gold_answers))
            continue
        example = _training_example(where, qa, context, words, char_to_word, gold_answers,
                                    version_2_with_negative)
        if example is None:
            skipped += 1
        else:
            examples.append(example)
    logging.info("%s: %d questions read, %d skipped (answer not recoverable from the "
                 "context's words)", path, len(examples), skipped)
    return examples


def _questions(path):
    """Yields (context, (words, char_to_word), qa) for every question of the file."""
    content = load_squad_json(path)
    for article_index, article in enumerate(content["data"]):
        try:
            paragraphs = article["paragraphs"]
        except (KeyError, TypeError):
            raise SquadFormatError(f'{path}: article {article_index} has no "paragraphs"') \
                from None
        for paragraph in paragraphs:
            try:
                context, questions = paragraph["context"], paragraph["qas"]
            except (KeyError, TypeError):
                raise SquadFormatError(f'{path}: article {article_index}: a paragraph '
                                       'lacks "context" or "qas"') from None
            words = split_words(context)
            for qa in questions:
                missing = [key for key in ("id", "question", "answers") if key not in qa]
                if missing:
                    raise SquadFormatError(
                        f"{path}: question {qa.get('id', '(no id)')}: missing {missing} "
                        f"(article {article_index})")
                yield context, words, qa


def _training_example(where, qa, context, words, char_to_word, gold_answers, version_2):
    """The training example of one question, or None if its answer is not recoverable."""
    is_impossible = bool(qa.get("is_impossible", False)) if version_2 else False
    if is_impossible:
        return SquadExample(qa["id"], qa["question"], words, "", -1, -1, True, gold_answers)
    if len(qa["answers"]) != 1:
        raise SquadFormatError(
            f"{where}: a training question needs exactly one answer, found "
            f"{len(qa['answers'])}" + ("" if version_2 else
                                       " (SQuAD 2.0 data needs --version_2_with_negative)"))
    answer = qa["answers"][0]
    text, start = answer.get("text"), answer.get("answer_start")
    if not isinstance(text, str) or not text or not isinstance(start, int):
        raise SquadFormatError(f"{where}: the answer needs a non-empty text and an integer "
                               "answer_start")
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
                        gold_answers)
