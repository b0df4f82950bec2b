"""bert_tf.checkpoints."""
