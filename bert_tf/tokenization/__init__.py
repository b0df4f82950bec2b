"""bert_tf.tokenization."""
