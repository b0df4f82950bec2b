"""Reading SWAG (Zellers et al., 2018) multiple-choice examples from its CSV files.

Columns: video-id, fold-ind, startphrase, sent1, sent2, gold-source,
ending0..ending3, label (absent in the test file). The released files
(train.csv, val.csv, test.csv) begin each row with an unnamed row-number
column, which is read past. As in the paper, text A
is the given sentence (`sent1`) and text B is each candidate continuation:
the start of the next sentence (`sent2`) followed by the ending.
"""

import dataclasses
import os

from bert_tf.text_files import csv_rows

NUM_CHOICES = 4
_COLUMNS = ["video-id", "fold-ind", "startphrase", "sent1", "sent2", "gold-source",
            "ending0", "ending1", "ending2", "ending3"]


@dataclasses.dataclass(frozen=True)
class MultipleChoiceExample:
    """A context, its candidate continuations and the gold index (None if unknown)."""

    guid: str
    context: str
    endings: tuple
    label: int = None


def read_swag(path):
    """Returns the `MultipleChoiceExample`s of a SWAG CSV file (header required).

    The file is UTF-8 (a byte-order mark is dropped). Unlike the readers of
    the SWAG examples for BERT (HuggingFace's `run_swag`), which take an empty
    ending as a choice of `sent2` alone, an empty ending is refused: a SWAG
    choice is the ending of a sentence, so an empty one is a broken row (a
    field lost on the way), not a choice the model should learn to weigh.

    Raises:
        FileNotFoundError: naming the file.
        ValueError: naming the file and line of bytes that are not UTF-8, a
            row the csv module cannot read (`text_files.csv_rows`), a
            wrong header or column count, a label outside 0-3 or an empty
            ending; or a file without examples.
    """
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: file not found")
    examples = []
    rows = csv_rows(path)
    header = next(rows, (1, None))[1]
    first = 1 if header and header[0] == "" else 0  # the released files' row numbers
    if header is None or header[first:first + len(_COLUMNS)] != _COLUMNS:
        raise ValueError(f"{path}:1: expected the SWAG header [,]{','.join(_COLUMNS)}"
                         "[,label]")
    label_column = first + len(_COLUMNS)
    has_label = header[label_column:label_column + 1] == ["label"]
    for line, row in rows:
        if len(row) != len(header):
            raise ValueError(f"{path}:{line}: expected {len(header)} columns, "
                             f"got {len(row)}")
        field = dict(zip(_COLUMNS, row[first:]))
        label = None
        if has_label:
            if row[label_column] not in {str(i) for i in range(NUM_CHOICES)}:
                raise ValueError(f"{path}:{line}: label {row[label_column]!r} is not 0-3")
            label = int(row[label_column])
        empty = [f"ending{i}" for i in range(NUM_CHOICES) if not field[f"ending{i}"].strip()]
        if empty:
            raise ValueError(f"{path}:{line}: empty {', '.join(empty)} (each of the "
                             f"{NUM_CHOICES} choices needs its ending)")
        endings = tuple(f"{field['sent2']} {field[f'ending{i}']}".strip()
                        for i in range(NUM_CHOICES))
        examples.append(MultipleChoiceExample(
            f"{field['video-id']}-{field['fold-ind']}", field["sent1"], endings, label))
    if not examples:
        raise ValueError(f"{path}: no examples")
    return examples
