"""bert_tf.modeling."""
