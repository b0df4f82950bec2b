"""Classification examples from a prepared tensorflow-datasets dataset (`--tfds_name`).

For users whose data is already prepared with TFDS (`glue/sst2`,
`glue/mrpc`, ... or their own builders). The text features are found by
the names GLUE's TFDS configs use; the label set comes from the dataset's
`ClassLabel`, and a float scalar label means regression; any other label
(integers without class names, text) is refused rather than read as a
regression target. Nothing is downloaded: the dataset must already be
prepared in `data_dir`, and one that is not fails at once, naming the
folder it was looked for in.
"""

import dataclasses

import numpy as np

from bert_tf.tasks.glue_data import InputExample

# Text feature names, single sentence or (text A, text B), in GLUE's TFDS configs.
_TEXT_FEATURES = (("sentence1", "sentence2"), ("question1", "question2"),
                  ("question", "sentence"), ("premise", "hypothesis"), ("sentence", None))
# Our split names -> candidates in TFDS.
_SPLITS = {"train": ("train",), "dev": ("validation", "validation_matched", "dev"),
           "test": ("test", "test_matched")}


@dataclasses.dataclass
class TfdsTask:
    """A TFDS dataset as a classification task with `read(data_dir, split)`."""

    tfds_name: str
    data_dir: str = None

    def __post_init__(self):
        import tensorflow_datasets as tfds
        try:
            self._builder = tfds.builder(self.tfds_name, data_dir=self.data_dir)
        except Exception as e:  # TFDS raises DatasetNotFoundError and friends
            # Its first line; an unknown name's message goes on to list every dataset.
            raise ValueError(f"--tfds_name={self.tfds_name}: {str(e).splitlines()[0]}") from None
        features = self._builder.info.features
        self._text = next((pair for pair in _TEXT_FEATURES if pair[0] in features), None)
        if self._text is None or "label" not in features:
            raise ValueError(f"--tfds_name={self.tfds_name}: needs a 'label' feature and one "
                             f"of the text features {[p[0] for p in _TEXT_FEATURES]}")
        label = features["label"]
        if isinstance(label, tfds.features.ClassLabel):
            self.labels = tuple(label.names)
        elif label.shape == () and np.issubdtype(label.np_dtype, np.floating):
            self.labels = None
        else:
            raise ValueError(f"--tfds_name={self.tfds_name}: its 'label' feature is {label!r}; "
                             "expected a ClassLabel (classes) or a float scalar (regression)")
        if not self._builder.is_prepared():
            raise ValueError(f"--tfds_name={self.tfds_name}: not prepared in "
                             f"{self._builder.data_dir} (--tfds_data_dir); nothing is "
                             "downloaded here, so prepare it first (`tfds build`)")
        self.name = self.tfds_name

    @property
    def is_regression(self):
        return self.labels is None

    def read(self, data_dir, split):
        """`data_dir` is ignored (the TFDS `data_dir` was given at construction)."""
        available = self._builder.info.splits
        name = next((s for s in _SPLITS.get(split, (split,)) if s in available), None)
        if name is None:
            raise ValueError(f"--tfds_name={self.tfds_name} has no {split} split "
                             f"(it has {', '.join(available)})")
        import tensorflow_datasets as tfds
        text_a, text_b = self._text
        examples = []
        for index, row in enumerate(tfds.as_numpy(self._builder.as_dataset(split=name))):
            label = row["label"]
            label = None if not self.is_regression and label < 0 else (
                float(label) if self.is_regression else int(label))
            examples.append(InputExample(
                f"{split}-{index}", row[text_a].decode("utf-8"),
                row[text_b].decode("utf-8") if text_b else None, label))
        if not examples:
            raise ValueError(f"--tfds_name={self.tfds_name}: split {name} is empty")
        return examples
