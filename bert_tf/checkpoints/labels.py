"""`labels.txt`: the class names a classifier folder keeps beside its checkpoint.

run_classifier.py writes it after training, one label a line in class-id
order (a single `score` for regression); users write it for their own TSV
tasks; exports and classify_text read it. A UTF-8 BOM is not part of a
label, and a repeated label (which would silently add a class) is an error.
"""

import os

from bert_tf.atomic_files import write_text
from bert_tf.text_files import utf8_lines

LABELS_FILE = "labels.txt"


def read_labels(path):
    """The label names of a `labels.txt`, one per line (a UTF-8 BOM is not part of a label).

    Raises:
        ValueError: naming the file and line of a repeated label or of bytes
            that are not UTF-8, or an empty file.

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "labels.txt")
    >>> _ = open(path, "w", encoding="utf-8-sig").write("neg\\npos\\n")
    >>> read_labels(path)
    ('neg', 'pos')
    >>> _ = open(path, "w").write("neg\\npos\\nneg\\n")
    >>> read_labels(path)
    Traceback (most recent call last):
    ValueError: ...labels.txt:3: label 'neg' repeats line 1 (each label is one class)
    """
    labels = {}
    for line, text in enumerate(utf8_lines(path), start=1):
        label = text.strip()
        if not label:
            continue
        if label in labels:
            raise ValueError(f"{path}:{line}: label {label!r} repeats line {labels[label]} "
                             "(each label is one class)")
        labels[label] = line
    if not labels:
        raise ValueError(f"{path}: no labels (one per line expected)")
    return tuple(labels)


def write_labels(labels, output_dir):
    """Writes `labels.txt`: the class names in id order (a single `score` for regression).

    A `labels.txt` already there with these labels is left as it is: it may be
    the one the run read (`--data_dir` as `--output_dir`).

    >>> import tempfile
    >>> folder = tempfile.mkdtemp()
    >>> _ = open(os.path.join(folder, LABELS_FILE), "w").write("neg \\npos\\n")
    >>> write_labels(("neg", "pos"), folder)
    >>> open(os.path.join(folder, LABELS_FILE)).read()  # the user's file, untouched
    'neg \\npos\\n'
    """
    labels = tuple(labels or ("score",))
    path = os.path.join(output_dir, LABELS_FILE)
    try:
        if os.path.isfile(path) and read_labels(path) == labels:
            return
    except ValueError:  # a damaged file: written anew
        pass
    write_text(path, "".join(f"{label}\n" for label in labels))
