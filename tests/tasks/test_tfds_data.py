"""`--tfds_name` datasets that cannot work fail at once, in one line naming the dataset.

Nothing here is downloaded or prepared: TFDS builders carry their features
in code, which is all these checks read.
"""

import numpy as np
import pytest
import tensorflow_datasets as tfds

from bert_tf.tasks.tfds_data import TfdsTask


class _TinyLabelled(tfds.core.GeneratorBasedBuilder):
    """A sentence and a label of the subclass's `LABEL` feature (never prepared)."""

    VERSION = tfds.core.Version("1.0.0")
    LABEL = None

    def _info(self):
        return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict({
            "sentence": tfds.features.Text(), "label": self.LABEL}))

    def _split_generators(self, dl_manager):
        return {}

    def _generate_examples(self):
        yield from ()


class TinyIntLabel(_TinyLabelled):
    LABEL = tfds.features.Scalar(dtype=np.int64)


class TinyTextLabel(_TinyLabelled):
    LABEL = tfds.features.Text()


class TinyFloatLabel(_TinyLabelled):
    LABEL = tfds.features.Scalar(dtype=np.float32)


@pytest.mark.parametrize("name", ["tiny_int_label", "tiny_text_label"])
def test_a_label_that_is_neither_classes_nor_a_float_is_refused(name, tmp_path):
    """Integer ids without class names were read as regression targets."""
    with pytest.raises(ValueError, match=rf"^--tfds_name={name}: its 'label' feature is "
                       r".*; expected a ClassLabel \(classes\) or a float scalar "
                       r"\(regression\)$"):
        TfdsTask(name, str(tmp_path))


def test_a_dataset_not_prepared_in_the_data_dir_says_so(tmp_path):
    """Before: "has no train split (it has )" when reading began."""
    with pytest.raises(ValueError) as error:
        TfdsTask("tiny_float_label", str(tmp_path / "missing"))  # its label is fine
    assert str(error.value) == (
        f"--tfds_name=tiny_float_label: not prepared in {tmp_path}/missing/tiny_float_label/"
        "1.0.0 (--tfds_data_dir); nothing is downloaded here, so prepare it first (`tfds build`)")


def test_an_unknown_name_is_one_line(tmp_path):
    """TFDS's own message goes on to list every dataset it knows, a line each."""
    with pytest.raises(ValueError) as error:
        TfdsTask("no_such_dataset", str(tmp_path))
    assert str(error.value) == "--tfds_name=no_such_dataset: Dataset no_such_dataset not found."
