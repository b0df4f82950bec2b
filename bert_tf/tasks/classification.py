"""Sentence and sentence-pair classification (and STS-B regression): `run_classifier.py`.

A classifier is the encoder's pooled output through dropout and one dense
layer (`output_weights` / `output_bias` in the original's checkpoints); one
output and a squared error for regression. Text is tokenized and packed in
the tf.data graph by `BertPreprocessor`, the same layer a served model holds.
The examples come from a reader with `read(data_dir, split)`, `name`,
`labels` and `is_regression`: a GLUE `TsvTask`, `XnliTask` or `TfdsTask`.
"""

import os

import keras
import numpy as np
import tensorflow as tf

from bert_tf.checkpoints import export_original
from bert_tf.modeling import BertEncoder, ClassificationHead
from bert_tf.tasks.batching import LABEL_KEY, batched_columns
from bert_tf.tasks.classification_results import LogitsPerExampleTask

LABELS_FILE = "labels.txt"


def build_classifier(config, num_labels):
    """Encoder + classification head: input dict -> float32 logits `[B, num_labels]`.

    `num_labels=1` for regression (the single logit is the predicted score).
    """
    encoder = BertEncoder(config)
    head = ClassificationHead(num_labels, dropout_rate=config.hidden_dropout_prob,
                              initializer_range=config.initializer_range, name="classifier")
    logits = head(encoder(encoder.input)["pooled_output"])
    return keras.Model(encoder.input, logits, name="bert_classifier")


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


def write_labels(labels, output_dir):
    """Writes `labels.txt`: the class names in id order (a single `score` for regression)."""
    with tf.io.gfile.GFile(os.path.join(output_dir, LABELS_FILE), "w") as f:
        f.write("".join(f"{label}\n" for label in (labels or ("score",))))


class ClassificationTask(LogitsPerExampleTask):
    """The `Task` of run_classifier.py over one dataset reader.

    Args:
        reader: `read(data_dir, split)`, `name`, `labels`, `is_regression`.
        data_dir: the folder `reader` reads.
        model_files, max_seq_length, do_lower_case: see `LogitsPerExampleTask`.
    """

    def __init__(self, reader, data_dir, model_files, max_seq_length, do_lower_case=True):
        super().__init__(model_files, max_seq_length, do_lower_case)
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
        return examples

    def build_model(self):
        return build_classifier(self.model_files.config,
                                1 if self.is_regression else len(self.reader.labels))

    def dataset(self, examples, batch_size, is_training, input_context=None, seed=None):
        return examples_dataset(examples, self.preprocessor, batch_size, is_training, seed,
                                input_context)

    def export(self, model, output_dir):
        """The original release folder plus `labels.txt` (`output_weights`/`output_bias` inside)."""
        export_original(model, self.model_files.config, self.model_files.vocab_file, output_dir)
        write_labels(self.reader.labels, output_dir)
