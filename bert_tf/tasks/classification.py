"""Sentence and sentence-pair classification (and STS-B regression): `run_classifier.py`.

A classifier is the encoder's pooled output through dropout and one dense
layer (`output_weights` / `output_bias` in the original's checkpoints); one
output and a squared error for regression. With `bilstm_units` (`--bilstm`)
the layer reads the final states of a BiLSTM over the encoder instead. Text is tokenized and packed in
the tf.data graph by `BertPreprocessor`, the same layer a served model holds.
The examples come from a reader with `read(data_dir, split)`, `name`,
`labels` and `is_regression`: a GLUE `TsvTask`, `XnliTask` or `TfdsTask`.
"""

import os

import numpy as np
import tensorflow as tf

from bert_tf.checkpoints import export_original
from bert_tf.checkpoints.labels import REGRESSION_LABELS
from bert_tf.modeling.classifier import build_classifier
from bert_tf.tasks.batching import LABEL_KEY, batched_columns
from bert_tf.tasks.classification_results import LogitsPerExampleTask

def examples_dataset(examples, preprocessor, batch_size, is_training=False, seed=None,
                     input_context=None):
    """A tf.data pipeline of packed batches (+ `label_ids` when labelled) of `InputExample`s."""
    columns = {"text_a": [e.text_a for e in examples]}
    if examples[0].text_b is not None:
        columns["text_b"] = [e.text_b for e in examples]
    if examples[0].label is not None:
        dtype = np.float32 if isinstance(examples[0].label, float) else np.int32
        columns[LABEL_KEY] = np.array([e.label for e in examples], dtype)
    dataset = batched_columns(columns, len(examples), batch_size, is_training, seed,
                              input_context)

    def pack(batch):
        texts = (batch["text_a"], batch["text_b"]) if "text_b" in batch else batch["text_a"]
        features = preprocessor(texts)
        if LABEL_KEY in batch:
            features[LABEL_KEY] = batch[LABEL_KEY]
        return features

    return dataset.map(pack, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


class ClassificationTask(LogitsPerExampleTask):
    """The `Task` of run_classifier.py over one dataset reader.

    Args:
        reader: `read(data_dir, split)`, `name`, `labels`, `is_regression`.
        data_dir: the folder `reader` reads.
        model_files, max_seq_length, do_lower_case, bilstm_units: see
            `LogitsPerExampleTask`.
    """

    def __init__(self, reader, data_dir, model_files, max_seq_length, do_lower_case=True,
                 bilstm_units=0):
        super().__init__(model_files, max_seq_length, do_lower_case, bilstm_units)
        self.reader = reader
        self.name = reader.name
        self.is_regression = reader.is_regression
        self.data_dir = data_dir

    def record(self):
        return dict(super().record(), labels=list(self.reader.labels or ()))

    def read_split(self, split):
        examples = self.reader.read(self.data_dir or "", split)
        if split != "test" and any(e.label is None for e in examples):
            raise ValueError(f"task {self.name}: the {split} split has examples without a "
                             "label (no label column?); training and evaluation need labels")
        if examples and examples[0].text_b is not None:  # a reader's examples: all pairs or none
            self.model_files.require_pairs(self._split_data(split), error=ValueError)
        return examples

    def _split_data(self, split):
        """The split's data as a message names it: its file where the reader has one."""
        files = getattr(self.reader, "files", {})  # a GLUE-style `TsvTask`'s
        if split in files:
            return f"{os.path.join(self.data_dir or '', files[split])} (task {self.name})"
        return f"the {split} split of task {self.name}"

    def build_model(self):
        return build_classifier(self.model_files.config,
                                1 if self.is_regression else len(self.reader.labels),
                                self.bilstm_units)

    def dataset(self, examples, batch_size, is_training, input_context=None, seed=None):
        return examples_dataset(examples, self.preprocessor, batch_size, is_training, seed,
                                input_context)

    serving_kind = "classifier"

    @property
    def label_names(self):
        """The class names in id order (`REGRESSION_LABELS` for regression)."""
        return tuple(self.reader.labels or REGRESSION_LABELS)

    def serving_options(self):
        return {"vocab_file": self.model_files.vocab_file, "labels": list(self.label_names),
                "max_seq_length": self.max_seq_length, "do_lower_case": self.do_lower_case}

    def export(self, model, output_dir):
        """The original release folder plus `labels.txt` (`output_weights`/`output_bias` inside)."""
        export_original(model, self.model_files.config, self.model_files.vocab_file, output_dir,
                        labels=self.label_names)
