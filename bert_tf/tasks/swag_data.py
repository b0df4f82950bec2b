"""Reading SWAG (Zellers et al., 2018) multiple-choice examples from its CSV files.

Columns: video-id, fold-ind, startphrase, sent1, sent2, gold-source,
ending0..ending3, label (absent in the test file). As in the paper, text A
is the given sentence (`sent1`) and text B is each candidate continuation:
the start of the next sentence (`sent2`) followed by the ending.
"""

import csv
import dataclasses
import os

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
    """Returns the `MultipleChoiceExample`s of a SWAG CSV file (header required)."""
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: file not found")
    examples = []
    with open(path, encoding="utf-8", newline="") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or header[:len(_COLUMNS)] != _COLUMNS:
            raise ValueError(f"{path}:1: expected the SWAG header {','.join(_COLUMNS)}"
                             "[,label]")
        has_label = len(header) > len(_COLUMNS) and header[len(_COLUMNS)] == "label"
        for line, row in enumerate(reader, start=2):
            if len(row) != len(header):
                raise ValueError(f"{path}:{line}: expected {len(header)} columns, "
                                 f"got {len(row)}")
            label = None
            if has_label:
                if row[10] not in {str(i) for i in range(NUM_CHOICES)}:
                    raise ValueError(f"{path}:{line}: label {row[10]!r} is not 0-3")
                label = int(row[10])
            endings = tuple(f"{row[4]} {row[6 + i]}".strip() for i in range(NUM_CHOICES))
            examples.append(MultipleChoiceExample(f"{row[0]}-{row[1]}", row[3], endings, label))
    if not examples:
        raise ValueError(f"{path}: no examples")
    return examples
