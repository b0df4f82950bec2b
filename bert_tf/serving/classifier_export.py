"""`ClassifierServing`: text (or text pairs) -> label probabilities and names.

The served form of a `run_classifier.py` model. For a batch of B texts and
N labels, the signatures return:

* `probabilities` float32 [B, N]: softmax of the logits, labels in the
  order of `labels.txt` (what the original writes to test_results.tsv);
* `logits` float32 [B, N];
* `label` string [B]: the most probable label's name;
* `label_id` int32 [B]: its index.

A regression model (one output, e.g. STS-B, whose labels.txt says `score`)
returns `score` float32 [B] instead. The label names are also in the
metadata (`labels`).
"""

import tensorflow as tf

from bert_tf.serving.sources import find_encoder
from bert_tf.serving.signatures import output_labels
from bert_tf.serving.text_module import TextServingModule


class ClassifierServing(TextServingModule):
    """Serves a fine-tuned classifier: any model mapping packed inputs to logits.

    Args:
        classifier: a built Keras model, encoder input dict -> float logits
            [B, len(labels)].
        vocabulary, asset_dir, max_seq_length, do_lower_case: as
            `TextServingModule`.
        labels: the label names, in logit order.

    Example:

    >>> import tempfile
    >>> import keras
    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling import BertEncoder, ClassificationHead
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "good", "bad"]
    >>> encoder = BertEncoder(BertConfig.named("tiny", vocab_size=len(vocab)))
    >>> logits = ClassificationHead(2)(encoder(encoder.input)["pooled_output"])
    >>> classifier = keras.Model(encoder.input, logits)
    >>> module = ClassifierServing(classifier, vocab, tempfile.mkdtemp(), max_seq_length=8,
    ...                            labels=["neg", "pos"])
    >>> outputs = module.serve_pairs(tf.constant(["good"]), tf.constant(["bad"]))
    >>> outputs["probabilities"].shape, outputs["label"].numpy()[0] in (b"neg", b"pos")
    (TensorShape([1, 2]), True)
    """

    kind = "classifier"

    def __init__(self, classifier, vocabulary, asset_dir, max_seq_length=128,
                 do_lower_case=True, labels=(), jit_compile=False):
        super().__init__(find_encoder(classifier).config, vocabulary, asset_dir,
                         max_seq_length, do_lower_case, jit_compile=jit_compile)
        self.labels = output_labels(classifier, labels, "classifier")
        self.serve_model(classifier)
        self.is_regression = len(self.labels) == 1

    def metadata_values(self):
        return {**super().metadata_values(), "labels": self.labels}

    def answer(self, inputs):
        logits = tf.cast(self.inference(inputs), tf.float32)
        if self.is_regression:
            return {"score": logits[:, 0]}
        label_id = tf.argmax(logits, axis=-1, output_type=tf.int32)
        return {
            "probabilities": tf.nn.softmax(logits),
            "logits": logits,
            "label": tf.gather(tf.constant(self.labels), label_id),
            "label_id": label_id,
        }

