"""Reading XNLI: machine-translated MultiNLI for training, XNLI dev/test by language.

Layouts as in the XNLI 1.0 release: `multinli/multinli.train.<lang>.tsv`
(premise, hypothesis, label; "contradictory" means "contradiction") and
`xnli.{dev,test}.tsv` (language in column 0, label in 1, the pair in 6 and
7), of which only the rows of the chosen language are kept.
"""

import dataclasses
import os

from bert_tf.tasks.glue_data import InputExample, read_tsv, warn_of_wider_rows

LABELS = ("contradiction", "entailment", "neutral")


@dataclasses.dataclass(frozen=True)
class XnliTask:
    """XNLI in one language (the `--xnli_language` flag, e.g. "zh")."""

    language: str
    name: str = "xnli"
    labels: tuple = LABELS
    is_regression: bool = False

    def read(self, data_dir, split):
        if split == "train":
            path = os.path.join(data_dir, "multinli", f"multinli.train.{self.language}.tsv")
            rows = [(line, row, row[0], row[1], row[2]) for line, row in
                    read_tsv(path, skip_header=True) if _has_columns(path, line, row, 3)]
            warn_of_wider_rows(path, [line for line, row, *_ in rows if len(row) > 3], 3,
                               "release's layout (premise, hypothesis, label)")
        elif split in ("dev", "test"):
            path = os.path.join(data_dir, f"xnli.{split}.tsv")
            rows = ((line, row, row[6], row[7], row[1]) for line, row in
                    read_tsv(path, skip_header=True)
                    if _has_columns(path, line, row, 8) and row[0].strip() == self.language)
        else:
            raise ValueError(f"task xnli has no split {split!r} (it has train, dev, test)")
        examples = [InputExample(f"{split}-{line}", a, b, self._label_id(path, line, label))
                    for line, _, a, b, label in rows]
        if not examples:
            raise ValueError(f"{path}: no {split} examples for language {self.language!r}")
        return examples

    def _label_id(self, path, line, label):
        label = "contradiction" if label == "contradictory" else label
        if label not in LABELS:
            raise ValueError(f"{path}:{line}: label {label!r} is not one of {list(LABELS)}")
        return LABELS.index(label)


def _has_columns(path, line, row, needed):
    if len(row) < needed:
        raise ValueError(f"{path}:{line}: expected at least {needed} tab-separated columns, "
                         f"got {len(row)}")
    return True
