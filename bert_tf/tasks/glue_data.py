"""Reading the GLUE tasks from the release's own TSV files, and your own TSV tasks.

Each task is a declarative `TsvTask`: which file holds each split, which
0-based columns hold text A, text B and the label, whether a header comes
first, and the label set (None for the STS-B regression). Malformed rows
fail with the file and line; so do unknown labels, scores that are not finite
numbers, blank lines, empty splits and a file whose header is missing (its
first row would be skipped as the header). Rows with more fields than the
header are read as the original reads them, with a warning.
"""

import csv
import dataclasses
import math
import os

from absl import logging

from bert_tf.checkpoints.labels import LABELS_FILE, read_labels
from bert_tf.errors import UsageError
from bert_tf.text_files import csv_rows


@dataclasses.dataclass(frozen=True)
class InputExample:
    """One example: `text_b` None for single sentences, `label` None on test sets."""

    guid: str
    text_a: str
    text_b: str = None
    label: object = None


@dataclasses.dataclass(frozen=True)
class Columns:
    """Where a split's fields are; `label=None` for unlabelled (test) files."""

    text_a: int
    text_b: int = None
    label: int = None
    header: bool = True


@dataclasses.dataclass(frozen=True)
class TsvTask:
    """A GLUE-style task: files per split, column layouts, labels.

    Attributes:
        name: lower-case task name (the `--task_name` flag).
        labels: label strings in class-id order; None for regression.
        files: split name -> file name inside `--data_dir`.
        columns: split name -> `Columns` (default: the "train" layout).
    """

    name: str
    labels: tuple
    files: dict
    columns: dict

    @property
    def is_regression(self):
        return self.labels is None

    def read(self, data_dir, split):
        """Returns the split's `InputExample`s; labels are class ids (or floats).

        Rows with more fields than the header (or, without one, the first
        row) are read as the original does, their extra fields unread, with
        one warning per file: a tab inside a text shifts the fields after it.

        Raises:
            FileNotFoundError: naming the split's file.
            ValueError: naming the file (and line) of a bad row or label, a
                train or dev file without a label column, or an empty split.
        """
        if split not in self.files:
            raise ValueError(f"task {self.name} has no split {split!r} "
                             f"(it has {', '.join(self.files)})")
        path = os.path.join(data_dir, self.files[split])
        if not os.path.exists(path):  # before the layout: `tsv_task` has none for a missing file
            raise FileNotFoundError(f"{path}: file not found")
        columns = self.columns[split] if split in self.columns else self.columns["train"]
        if columns.label is None and split != "test":
            raise ValueError(f"{path}:1: the header has no `label` column; the {split} split "
                             "needs labels (training and evaluation compare with them)")
        examples, wider, width = [], [], None
        for line, row in read_tsv(path, skip_header=False):
            if width is None:
                width = len(row)
                if columns.header:
                    self._check_header(path, row, columns)
                    continue
            if len(row) > width:
                wider.append(line)
            examples.append(self._example(path, line, row, split, columns))
        if not examples:
            raise ValueError(f"{path}: split {split!r} of task {self.name} has no examples")
        warn_of_wider_rows(path, wider, width, "header" if columns.header else "first row")
        return examples

    def _check_header(self, path, row, columns):
        """Refuses a first line that is a row of data: skipped as the header, as the
        original skips it, it would be an example lost without a word.

        GLUE's headers name their columns; its rows start with an index (or,
        in MRPC's labelled files, the label) and hold a label in its column.
        """
        label = None
        if columns.label is not None and -len(row) <= columns.label < len(row):
            label = row[columns.label]
        if label is not None and self._is_label(path, label):
            found = f"its label column holds the label {label!r}"
        elif row and row[0].strip().isdigit():
            found = f"it starts with the number {row[0].strip()}"
        else:
            return
        raise ValueError(f"{path}:1: a row of data where the header should be ({found}); "
                         f"task {self.name}'s files start with a header line, which is "
                         "skipped, so this row would be lost. Put the header back")

    def _is_label(self, path, value):
        """Whether `value` reads as a label (a finite score for regression) of the task."""
        try:
            self._label_id(path, 1, value)
        except ValueError:
            return False
        return True

    def _example(self, path, line, row, split, columns):
        needed = max(abs(c) + (c >= 0) for c in (columns.text_a, columns.text_b, columns.label)
                     if c is not None)
        if not row:
            raise ValueError(f"{path}:{line}: a blank line; each line is one example of at "
                             f"least {needed} tab-separated columns")
        if len(row) < needed:
            raise ValueError(f"{path}:{line}: expected at least {needed} tab-separated "
                             f"columns, got {len(row)}")
        label = None
        if columns.label is not None:
            label = self._label_id(path, line, row[columns.label])
        return InputExample(
            guid=f"{split}-{line}", text_a=row[columns.text_a],
            text_b=row[columns.text_b] if columns.text_b is not None else None, label=label)

    def _label_id(self, path, line, value):
        if self.is_regression:
            try:
                score = float(value)
            except ValueError:
                raise ValueError(f"{path}:{line}: score {value!r} is not a number") from None
            if not math.isfinite(score):  # training would stop at a loss of nan
                raise ValueError(f"{path}:{line}: score {value!r} is not a finite number")
            return score
        if value not in self.labels:
            raise ValueError(f"{path}:{line}: label {value!r} is not one of "
                             f"{list(self.labels)} of task {self.name}")
        return self.labels.index(value)


def warn_of_wider_rows(path, wider, width, layout):
    """One warning for the rows (`wider`: their lines) with more than `width` fields, the
    width of `layout` (the header, say): read as the original reads them, their extra
    fields unread, though a tab inside a text has likely shifted them."""
    if wider:
        logging.warning(
            "%s:%d: %d row(s), the first on this line, have more than the %d tab-separated "
            "fields of the %s; a tab inside a text shifts the fields after it, and those past "
            "field %d are not read", path, wider[0], len(wider), width, layout, width)


def read_tsv(path, skip_header):
    """Yields `(line number, fields)` of a tab-separated UTF-8 file, quotes taken literally.

    Raises:
        FileNotFoundError: naming the file.
        ValueError: naming the file and line of bytes that are not UTF-8, or
            of a carriage return inside a field (see `text_files.csv_rows`).
    """
    if not os.path.exists(path):
        raise FileNotFoundError(f"{path}: file not found")
    for line, row in csv_rows(path, delimiter="\t", quoting=csv.QUOTE_NONE):
        if line > 1 or not skip_header:
            yield line, row


def _pair(a, b, label, test_a=None, test_b=None):
    """Layouts of a headed pair task whose test file has other text columns."""
    return {"train": Columns(a, b, label),
            "test": Columns(test_a if test_a is not None else a,
                            test_b if test_b is not None else b)}


_NLI = ("entailment", "not_entailment")
_MNLI = ("contradiction", "entailment", "neutral")

TASKS = {task.name: task for task in (
    TsvTask("cola", ("0", "1"), {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
            {"train": Columns(3, None, 1, header=False), "test": Columns(1)}),
    TsvTask("sst-2", ("0", "1"), {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
            {"train": Columns(0, None, 1), "test": Columns(1)}),
    TsvTask("mrpc", ("0", "1"), {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
            _pair(3, 4, 0)),
    TsvTask("sts-b", None, {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
            _pair(7, 8, 9)),
    TsvTask("qqp", ("0", "1"), {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
            _pair(3, 4, 5, 1, 2)),
    TsvTask("mnli", _MNLI, {"train": "train.tsv", "dev": "dev_matched.tsv",
                            "test": "test_matched.tsv"}, _pair(8, 9, -1)),
    TsvTask("mnli-mm", _MNLI, {"train": "train.tsv", "dev": "dev_mismatched.tsv",
                               "test": "test_mismatched.tsv"}, _pair(8, 9, -1)),
    TsvTask("qnli", _NLI, {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
            _pair(1, 2, 3)),
    TsvTask("rte", _NLI, {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
            _pair(1, 2, 3)),
    TsvTask("wnli", ("0", "1"), {"train": "train.tsv", "dev": "dev.tsv", "test": "test.tsv"},
            _pair(1, 2, 3)),
)}
# The names GLUE's own download script gives the folders.
ALIASES = {"sst2": "sst-2", "stsb": "sts-b", "mnli_mismatched": "mnli-mm"}


def tsv_task(data_dir):
    """Your own task (`--task_name=tsv`): headed TSV files and a `labels.txt` in `data_dir`.

    `train.tsv`, `dev.tsv` and `test.tsv` start with a header naming the
    columns `sentence` (or `sentence1` and `sentence2`) and `label` (test
    files may omit it); `labels.txt` lists the labels, one per line, in
    class-id order.
    """
    labels_file = os.path.join(data_dir, LABELS_FILE)
    if not os.path.exists(labels_file):
        raise FileNotFoundError(f"{labels_file}: file not found (--task_name=tsv needs the "
                                "label list, one per line)")
    labels = read_labels(labels_file)
    if len(labels) < 2:  # one class: a loss of 0 and accuracy 1 from the first step
        raise ValueError(f"{labels_file}: {len(labels)} label; a classifier needs two or more")
    columns = {}
    for split in ("train", "dev", "test"):
        path = os.path.join(data_dir, f"{split}.tsv")
        if not os.path.exists(path):
            continue
        header = next(read_tsv(path, skip_header=False), (1, None))[1]
        if header is None:
            raise ValueError(f"{path}: empty file (expected a header line naming the columns)")
        text = ["sentence"] if "sentence" in header else ["sentence1", "sentence2"]
        missing = [name for name in text if name not in header]
        if missing:
            raise ValueError(f"{path}:1: the first line is not a header naming the columns: "
                             f"{header} lacks {missing} (the text is in a column `sentence`, "
                             "or in `sentence1` and `sentence2`; the label, if any, in "
                             "`label`)")
        columns[split] = Columns(
            header.index(text[0]), header.index(text[1]) if len(text) == 2 else None,
            header.index("label") if "label" in header else None)
    pairs = {split: layout.text_b is not None for split, layout in columns.items()}
    if len(set(pairs.values())) > 1:  # a model trained on pairs, scored on single texts
        raise ValueError(f"{data_dir}: " + ", ".join(
            f"{split}.tsv holds {'pairs' if pair else 'single sentences'}"
            for split, pair in pairs.items()) + "; every split needs the same layout")
    files = {split: f"{split}.tsv" for split in ("train", "dev", "test")}
    return TsvTask("tsv", labels, files, columns or {"train": Columns(0)})


def canonical_name(task_name):
    """Our name of a GLUE task given as a `--task_name`, a folder name or a TFDS name.

    >>> canonical_name("glue/stsb"), canonical_name("SST2"), canonical_name("MRPC")
    ('sts-b', 'sst-2', 'mrpc')
    """
    name = task_name.lower().split("/")[-1]
    return ALIASES.get(name, name)


def get_task(task_name):
    """The `TsvTask` for `--task_name` (case-insensitive)."""
    name = canonical_name(task_name)
    if name not in TASKS:
        raise UsageError(f"--task_name={task_name}: unknown task; choose one of "
                         f"{', '.join(sorted(TASKS))}, xnli or tsv (your own headed TSV "
                         "files)")
    return TASKS[name]
