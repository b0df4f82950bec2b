"""bert_tf: BERT for TensorFlow 2 and Keras 3, faithful to the original release."""

from bert_tf.config import BertConfig

__all__ = ["BertConfig"]
__version__ = "0.1.0"
