"""Reading CoNLL-2003 named-entity files into sentences with BIO tags.

A file holds one word per line in four space-separated columns (word, POS
tag, chunk tag, entity tag), a blank line after each sentence and a
`-DOCSTART-` line before each document. The released files tag entities in
IOB1: `I-X` opens an entity unless it continues one of the same type, and
`B-X` appears only where an entity follows another of the same type. The
reader converts them to BIO (every entity opens with `B-X`), which names
the same entities and is what the model learns to predict.

The released train and testa files start in the middle of their first
document: its `-DOCSTART-` line sits at the very end of the file, without a
newline. The reader accepts `-DOCSTART-` anywhere; a document with no
sentence is an error, except that last `-DOCSTART-` when sentences come
before the file's first one (the document it opens is the file's head).
Each split's file in `--data_dir` has the release's name or the common
renaming (`split_file`); a folder holding both is refused as ambiguous.
"""

import dataclasses
import os

from absl import logging

from bert_tf.errors import UsageError
from bert_tf.text_files import NotUtf8Error, utf8_lines

DOCSTART = "-DOCSTART-"
COLUMNS = 4
ENTITY_TYPES = ("PER", "ORG", "LOC", "MISC")
# File names of each split in --data_dir: the CoNLL release's, or the common renaming.
SPLIT_FILES = {"train": ("eng.train", "train.txt"), "dev": ("eng.testa", "valid.txt"),
               "test": ("eng.testb", "test.txt")}


class ConllFormatError(ValueError):
    """Bad CoNLL input; the message names the file and line."""


def split_file(data_dir, split):
    """The file of `split` in `data_dir`: the one of its `SPLIT_FILES` names there.

    Raises:
        UsageError: no `data_dir`, or both names there (which one is meant?).
        FileNotFoundError: neither name there.
    """
    names = SPLIT_FILES[split]
    if not data_dir:
        raise UsageError(f"--data_dir is required: the folder of the CoNLL-2003 files "
                         f"({' or '.join(names)} for the {split} split)")
    present = [os.path.join(data_dir, name) for name in names
               if os.path.exists(os.path.join(data_dir, name))]
    if not present:
        raise FileNotFoundError(f"--data_dir={data_dir}: no {' or '.join(names)} for the "
                                f"{split} split")
    if len(present) > 1:
        raise UsageError(f"--data_dir={data_dir}: both {' and '.join(names)} are there for "
                         f"the {split} split; keep the one to read")
    logging.info("the %s split: %s", split, present[0])
    return present[0]


def bio_labels(entity_types=ENTITY_TYPES):
    """The tag set in class-id order: "O", then B- and I- of each type.

    >>> bio_labels(("PER", "LOC"))
    ('O', 'B-PER', 'I-PER', 'B-LOC', 'I-LOC')
    """
    return ("O",) + tuple(f"{prefix}-{kind}" for kind in entity_types for prefix in "BI")


@dataclasses.dataclass(frozen=True)
class TaggedSentence:
    """One sentence: its words and their BIO tags.

    Attributes:
        guid: "<split>-<n>", n counting sentences in file order from 0.
        words: the words as written in the file.
        tags: one BIO tag per word.
        line: 1-based line of the sentence's first word.
    """

    guid: str
    words: tuple
    tags: tuple
    line: int


def iob1_to_bio(tags):
    """BIO tags naming the same entities as the IOB1 (or BIO) `tags` of one sentence.

    >>> iob1_to_bio(["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG"])
    ['B-PER', 'I-PER', 'B-PER', 'O', 'B-LOC', 'B-ORG']
    """
    converted, previous = [], "O"
    for tag in tags:
        if tag.startswith("I-") and (previous == "O" or previous[2:] != tag[2:]):
            tag = "B-" + tag[2:]
        converted.append(tag)
        previous = tag
    return converted


def read_conll(path, split="train", entity_types=ENTITY_TYPES):
    """Reads one CoNLL-2003 file as `TaggedSentence`s with BIO tags.

    Args:
        path: the file (UTF-8, with or without a byte-order mark; the released
            files are ASCII).
        split: the prefix of the sentences' guids.
        entity_types: the entity types allowed in tags.

    Raises:
        ConllFormatError: naming file and line, for a line without exactly
            four columns, an unknown tag, an empty document or a file
            without sentences.

    Example (the first document's `-DOCSTART-` at the end of the file):

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "eng.testa")
    >>> with open(path, "w") as f:
    ...     _ = f.write("EU NNP I-NP I-ORG\\nrejects VBZ I-VP O\\n\\n"
    ...                 "-DOCSTART- -X- O O\\n\\nPeter NNP I-NP I-PER\\n"
    ...                 "Blackburn NNP I-NP I-PER\\n\\n-DOCSTART- -X- O O")
    >>> for sentence in read_conll(path, "dev"):
    ...     print(sentence.guid, sentence.words, sentence.tags, sentence.line)
    dev-0 ('EU', 'rejects') ('B-ORG', 'O') 1
    dev-1 ('Peter', 'Blackburn') ('B-PER', 'I-PER') 6
    """
    known_tags = {"O"} | {f"{prefix}-{kind}" for kind in entity_types for prefix in "BI"}
    sentences, words, tags = [], [], []
    docstart_lines = []  # line of every -DOCSTART-, in order
    sentences_before = []  # sentence count when each -DOCSTART- was read
    first_line = 0

    def end_sentence():
        if words:
            sentences.append(TaggedSentence(
                guid=f"{split}-{len(sentences)}", words=tuple(words),
                tags=tuple(iob1_to_bio(tags)), line=first_line))
            words.clear()
            tags.clear()

    for number, fields in _split_lines(path):
        if not fields:
            end_sentence()
            continue
        if fields[0] == DOCSTART:
            end_sentence()
            docstart_lines.append(number)
            sentences_before.append(len(sentences))
            continue
        if len(fields) != COLUMNS:
            raise ConllFormatError(f"{path}:{number}: expected {COLUMNS} space-separated "
                                   f"columns (word POS chunk NER), got {len(fields)}: "
                                   f"{' '.join(fields)!r}")
        if fields[-1] not in known_tags:
            raise ConllFormatError(f"{path}:{number}: unknown entity tag {fields[-1]!r} "
                                   f"(known: {', '.join(sorted(known_tags))})")
        if not words:
            first_line = number
        words.append(fields[0])
        tags.append(fields[-1])
    end_sentence()
    _check_documents(path, docstart_lines, sentences_before, len(sentences))
    return sentences


def _split_lines(path):
    """Yields (1-based line number, whitespace-split fields) of each line.

    Lines are read by `text_files.utf8_lines`: a byte-order mark (as Windows
    editors write) is dropped instead of gluing itself to the first word,
    which would turn a `-DOCSTART-` line into a sentence.
    """
    try:
        for number, line in enumerate(utf8_lines(path), start=1):
            yield number, line.split()
    except NotUtf8Error as error:
        raise ConllFormatError(str(error)) from None


def _check_documents(path, docstart_lines, sentences_before, total):
    if not total:
        raise ConllFormatError(f"{path}: no sentences")
    ends = sentences_before[1:] + [total]
    for index, (line, start, end) in enumerate(zip(docstart_lines, sentences_before, ends)):
        opens_the_head = index == len(docstart_lines) - 1 and sentences_before[0] > 0
        if start == end and not opens_the_head:
            raise ConllFormatError(f"{path}:{line}: empty document (no sentence between this "
                                   f"{DOCSTART} and the next one or the end of the file)")


def prediction_lines(sentences, predicted_tags):
    """Lines `word gold predicted` (a blank line after each sentence), as conlleval reads them.

    >>> sentence = TaggedSentence("t-0", ("John", "runs"), ("B-PER", "O"), 1)
    >>> list(prediction_lines([sentence], [("B-PER", "B-LOC")]))
    ['John B-PER B-PER\\n', 'runs O B-LOC\\n', '\\n']
    """
    if len(sentences) != len(predicted_tags):
        raise ValueError(f"{len(predicted_tags)} predicted tag sequences for "
                         f"{len(sentences)} sentences")
    for sentence, tags in zip(sentences, predicted_tags):
        if len(tags) != len(sentence.words):
            raise ValueError(f"sentence {sentence.guid}: {len(tags)} predicted tags for "
                             f"{len(sentence.words)} words")
        for word, gold, predicted in zip(sentence.words, sentence.tags, tags):
            yield f"{word} {gold} {predicted}\n"
        yield "\n"
