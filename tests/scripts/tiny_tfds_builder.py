"""A real TFDS builder over a local SST-2-style TSV, for testing `--tfds_name`.

A test loads this file (which registers the builder with TFDS), sets
`TinySst.source_dir` and prepares the dataset with `download_and_prepare`.
"""

import csv

import numpy as np
import tensorflow_datasets as tfds


class TinySst(tfds.core.GeneratorBasedBuilder):
    """Sentences with 0/1 sentiment labels, read from `train.tsv` / `dev.tsv`."""

    VERSION = tfds.core.Version("1.0.0")
    source_dir = None

    def _info(self):
        return tfds.core.DatasetInfo(builder=self, features=tfds.features.FeaturesDict({
            "sentence": tfds.features.Text(),
            "label": tfds.features.ClassLabel(names=["0", "1"]),
            "idx": tfds.features.Scalar(dtype=np.int32)}))

    def _split_generators(self, dl_manager):
        return {"train": self._generate_examples(f"{self.source_dir}/train.tsv"),
                "validation": self._generate_examples(f"{self.source_dir}/dev.tsv")}

    def _generate_examples(self, path):
        with open(path, encoding="utf-8") as f:
            rows = list(csv.reader(f, delimiter="\t", quoting=csv.QUOTE_NONE))[1:]
        for index, (sentence, label) in enumerate(rows):
            yield index, {"sentence": sentence, "label": int(label), "idx": index}
