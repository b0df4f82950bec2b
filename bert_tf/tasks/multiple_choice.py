"""Multiple choice (SWAG): one score per `[CLS] context [SEP] ending [SEP]`, softmax over them.

Each example becomes `num_choices` packed sequences; the encoder runs on all
of them as one batch, a dense layer scores each pooled vector, and the
scores of an example's choices are its logits. Loss, accuracy and outputs
are then those of classification over the choices.
"""

import os

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bert_tf.checkpoints import export_original
from bert_tf.modeling import BertEncoder
from bert_tf.modeling.bilstm import fine_tuning_bilstm, head_inputs
from bert_tf.modeling.classifier import classification_head
from bert_tf.modeling.encoder import INPUT_NAMES
from bert_tf.tasks.batching import LABEL_KEY, batched_columns
from bert_tf.tasks.classification_results import LogitsPerExampleTask
from bert_tf.tasks.swag_data import NUM_CHOICES, read_swag

SWAG_FILES = {"train": "train.csv", "dev": "val.csv", "test": "test.csv"}


def build_multiple_choice_model(config, num_choices, seq_length, bilstm_units=0):
    """Inputs `[B, num_choices, seq_length]` int32 dict -> float32 logits `[B, num_choices]`.

    `bilstm_units`: each sequence is scored from the final states of a
    BiLSTM over the encoder (`bilstm.head_inputs`), not its pooled output.
    """
    inputs = {name: keras.Input(shape=(num_choices, seq_length), dtype="int32", name=name)
              for name in INPUT_NAMES}
    encoder = BertEncoder(config)
    flat = {name: ops.reshape(tensor, (-1, seq_length)) for name, tensor in inputs.items()}
    head = classification_head(config, 1)
    scores = head(head_inputs(encoder, flat, fine_tuning_bilstm(bilstm_units))[1])
    return keras.Model(inputs, ops.reshape(scores, (-1, num_choices)),
                       name="bert_multiple_choice")


def choices_dataset(examples, preprocessor, batch_size, is_training=False, seed=None,
                    input_context=None):
    """Batches of packed `[B, C, T]` inputs (+ `label_ids`) from `MultipleChoiceExample`s."""
    num_choices = len(examples[0].endings)
    columns = {"context": [[e.context] * num_choices for e in examples],
               "endings": [list(e.endings) for e in examples]}
    if examples[0].label is not None:
        columns[LABEL_KEY] = np.array([e.label for e in examples], np.int32)
    dataset = batched_columns(columns, len(examples), batch_size, is_training, seed,
                              input_context)

    def pack(batch):
        packed = preprocessor((tf.reshape(batch["context"], [-1]),
                               tf.reshape(batch["endings"], [-1])))
        features = {name: tf.reshape(value, [-1, num_choices, preprocessor.seq_length])
                    for name, value in packed.items()}
        if LABEL_KEY in batch:
            features[LABEL_KEY] = batch[LABEL_KEY]
        return features

    return dataset.map(pack, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


class SwagTask(LogitsPerExampleTask):
    """The `Task` of run_swag.py: SWAG's CSV files in `data_dir`, four endings each.

    Args:
        data_dir: the folder of train.csv, val.csv and test.csv.
        model_files, max_seq_length, do_lower_case, bilstm_units: see
            `LogitsPerExampleTask`.
    """

    name = "swag"

    def __init__(self, data_dir, model_files, max_seq_length, do_lower_case=True,
                 bilstm_units=0):
        model_files.require_pairs(f"task {self.name} (a context and each ending)")
        super().__init__(model_files, max_seq_length, do_lower_case, bilstm_units)
        self.data_dir = data_dir or ""

    def read_split(self, split):
        path = os.path.join(self.data_dir, SWAG_FILES[split])
        examples = read_swag(path)
        if split != "test" and examples[0].label is None:  # a file's rows: all labelled or none
            raise ValueError(f"{path}:1: the header has no `label` column; the {split} split "
                             "needs labels (training and evaluation compare with them)")
        return examples

    def build_model(self):
        return build_multiple_choice_model(self.model_files.config, NUM_CHOICES,
                                           self.max_seq_length, self.bilstm_units)

    def dataset(self, examples, batch_size, is_training, input_context=None, seed=None):
        return choices_dataset(examples, self.preprocessor, batch_size, is_training, seed,
                               input_context)

    serving_kind = "multiple_choice"

    def serving_options(self):
        return {"vocab_file": self.model_files.vocab_file,
                "max_seq_length": self.max_seq_length, "do_lower_case": self.do_lower_case}

    def export(self, model, output_dir):
        """The original release folder (encoder + the choice scorer's `output_weights`)."""
        export_original(model, self.model_files.config, self.model_files.vocab_file, output_dir)
