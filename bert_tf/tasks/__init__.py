"""bert_tf.tasks."""
