"""Sentence and sentence-pair classification (and STS-B regression) on BERT.

The task family of `run_classifier.py`: a classifier is the encoder's pooled
output through dropout and one dense layer (`output_weights` /
`output_bias` in the original's checkpoints); one output and a squared error
for regression. Text is tokenized and packed in the tf.data graph by
`BertPreprocessor`, the same layer a served model holds.
"""

import os

import keras
import numpy as np
import tensorflow as tf
from keras import ops

from bert_tf.checkpoints import export_original
from bert_tf.modeling import BertEncoder, ClassificationHead
from bert_tf.tasks.metrics import glue_metrics
from bert_tf.training.objective import LossWeights, Objective

LABEL_KEY = "label_ids"


def build_classifier(config, num_labels):
    """Encoder + classification head: input dict -> float32 logits `[B, num_labels]`.

    `num_labels=1` for regression (the single logit is the predicted score).
    """
    encoder = BertEncoder(config)
    head = ClassificationHead(num_labels, dropout_rate=config.hidden_dropout_prob,
                              initializer_range=config.initializer_range, name="classifier")
    logits = head(encoder(encoder.input)["pooled_output"])
    return keras.Model(encoder.input, logits, name="bert_classifier")


def _ones(batch):
    return {"loss": LossWeights(ops.ones_like(batch[LABEL_KEY], "float32"))}


def _classification_losses(logits, batch):
    return {"loss": keras.losses.sparse_categorical_crossentropy(
        batch[LABEL_KEY], logits, from_logits=True)}


def _accuracy(logits, batch):
    predicted = ops.cast(ops.argmax(logits, axis=-1), "int32")
    correct = ops.cast(predicted == ops.cast(batch[LABEL_KEY], "int32"), "float32")
    return {"accuracy": (ops.sum(correct), ops.cast(ops.size(correct), "float32"))}


def _regression_losses(logits, batch):
    return {"loss": ops.square(logits[:, 0] - ops.cast(batch[LABEL_KEY], "float32"))}


def _no_metrics(logits, batch):
    return {}


def classification_objective(is_regression=False):
    """Mean cross-entropy and accuracy, or mean squared error for regression."""
    if is_regression:
        return Objective(_ones, _regression_losses, _no_metrics, ())
    return Objective(_ones, _classification_losses, _accuracy, ("accuracy",))


def batched_columns(columns, num_examples, batch_size, is_training=False, seed=None,
                    input_context=None, drop_remainder=None):
    """Batches of in-memory example columns, as every fine-tuning task reads them.

    Training: sharded per input pipeline, shuffled over all examples,
    repeated, whole batches only. Evaluation: one ordered pass (the last
    batch may be smaller unless `drop_remainder`).
    """
    dataset = tf.data.Dataset.from_tensor_slices(columns)
    if input_context is not None:
        batch_size = input_context.get_per_replica_batch_size(batch_size)
        dataset = dataset.shard(input_context.num_input_pipelines,
                                input_context.input_pipeline_id)
    if is_training:
        dataset = dataset.shuffle(num_examples, seed=seed).repeat()
    return dataset.batch(batch_size, drop_remainder=is_training if drop_remainder is None
                         else drop_remainder)


def examples_dataset(examples, preprocessor, batch_size, is_training=False, seed=None,
                     input_context=None, drop_remainder=None):
    """A tf.data pipeline of packed, labelled batches from `InputExample`s.

    Training data is sharded per input pipeline, shuffled over all examples
    and repeated; evaluation data is one ordered pass. Batches are dicts of
    the encoder's inputs plus `label_ids` (when the examples have labels).
    """
    columns = {"text_a": [e.text_a for e in examples]}
    if examples[0].text_b is not None:
        columns["text_b"] = [e.text_b for e in examples]
    if examples[0].label is not None:
        dtype = np.float32 if isinstance(examples[0].label, float) else np.int32
        columns[LABEL_KEY] = np.array([e.label for e in examples], dtype)
    dataset = batched_columns(columns, len(examples), batch_size, is_training, seed,
                              input_context, drop_remainder)

    def pack(batch):
        texts = (batch["text_a"], batch["text_b"]) if "text_b" in batch else batch["text_a"]
        features = preprocessor(texts)
        if LABEL_KEY in batch:
            features[LABEL_KEY] = batch[LABEL_KEY]
        return features

    return dataset.map(pack, num_parallel_calls=tf.data.AUTOTUNE).prefetch(tf.data.AUTOTUNE)


def predict_logits(model, dataset, jit_compile=False):
    """Runs `model` over a finite dataset of batches; returns float32 logits `[N, ...]`."""
    names = list(model.input)
    forward = tf.function(lambda batch: model({k: batch[k] for k in names}, training=False),
                          jit_compile=jit_compile)
    return np.concatenate([forward(batch).numpy() for batch in dataset])


def probabilities(logits):
    """Softmax over classes (what the original writes to test_results.tsv)."""
    shifted = logits - logits.max(axis=-1, keepdims=True)
    exp = np.exp(shifted)
    return exp / exp.sum(axis=-1, keepdims=True)


def write_test_results(path, logits, is_regression):
    """One line per example: tab-separated class probabilities (or the score)."""
    rows = logits[:, :1] if is_regression else probabilities(logits)
    with tf.io.gfile.GFile(path, "w") as f:
        for row in rows:
            f.write("\t".join(str(float(v)) for v in row) + "\n")


def evaluation_results(task_name, logits, labels, is_regression=False):
    """`eval_<metric>` values and `eval_loss` of a task's dev-set logits."""
    labels = np.asarray(labels)
    if is_regression:
        predictions = logits[:, 0]
        loss = float(np.mean((predictions - labels) ** 2))
    else:
        predictions = logits.argmax(axis=-1)
        log_probs = np.log(probabilities(logits) + 1e-30)
        loss = float(-np.mean(log_probs[np.arange(len(labels)), labels]))
    metrics = glue_metrics(task_name, labels, predictions)
    return {**{f"eval_{name}": value for name, value in metrics.items()}, "eval_loss": loss}


def export_classifier(model, config, vocab_file, task, output_dir):
    """Writes the fine-tuned model as an original release folder plus `labels.txt`.

    `bert_model.ckpt` then holds the encoder and the original's classifier
    variables (`output_weights`, `output_bias`); `labels.txt` lists the
    class names in id order (a single `score` line for regression).
    """
    export_original(model, config, vocab_file, output_dir)
    with tf.io.gfile.GFile(os.path.join(output_dir, "labels.txt"), "w") as f:
        f.write("".join(f"{label}\n" for label in (task.labels or ("score",))))
