"""`labels.txt`: the class names a classifier folder keeps beside its checkpoint.

run_classifier.py and run_ner.py write it with their export after training
(`tf1.export_original`), one label a line in class-id order (a single
`score` for regression, `REGRESSION_LABELS`); users write it for their own
TSV tasks; exports and classify_text read it. A UTF-8 BOM is not part of a
label, and a repeated label (which would silently add a class) is an error.
"""

import os

from bert_tf.text_files import utf8_lines

LABELS_FILE = "labels.txt"
# The one "class" of a regression task (STS-B): its score.
REGRESSION_LABELS = ("score",)


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


def labels_text(labels):
    """`labels.txt`'s text: the class names in id order, one a line.

    >>> labels_text(("neg", "pos"))
    'neg\\npos\\n'
    """
    return "".join(f"{label}\n" for label in labels)


def holds_labels(path, labels):
    """Whether `path` is a `labels.txt` of `labels`, which an export then leaves as it is.

    It may be the one the run read (`--data_dir` as `--output_dir`); a
    damaged file is written anew.

    >>> import tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), LABELS_FILE)
    >>> _ = open(path, "w").write("neg \\npos\\n")
    >>> holds_labels(path, ("neg", "pos")), holds_labels(path, ("pos", "neg"))
    (True, False)
    """
    try:
        return os.path.isfile(path) and read_labels(path) == tuple(labels)
    except ValueError:
        return False
