"""bert_tf.scripts."""
