"""The in-graph SQuAD windows equal the Python path's (`doc_windows`, `max_context_windows`)."""

import numpy as np
import tensorflow as tf

from bert_tf.serving.windows import context_windows
from bert_tf.tasks.squad_features import doc_windows, max_context_windows


def test_windows_and_max_context_equal_the_python_path():
    rng = np.random.default_rng(0)
    max_seq_length, doc_stride = 24, 5
    queries = rng.integers(0, 12, 200)
    contexts = np.concatenate([[0, 1, 9, 21], rng.integers(0, 90, 196)])
    windows = context_windows(tf.constant(queries, tf.int64), tf.constant(contexts, tf.int64),
                              max_seq_length, doc_stride)
    expected, flags = [], []
    for example, (query, pieces) in enumerate(zip(queries, contexts)):
        spans = doc_windows(int(pieces), max_seq_length - int(query) - 3, doc_stride)
        best = max_context_windows(spans, int(pieces))
        expected += [(example, start, length) for start, length in spans]
        flags += [[best[start + i] == w for i in range(length)]
                  for w, (start, length) in enumerate(spans)]
    got = list(zip(*(t.numpy().tolist() for t in (windows.example, windows.start,
                                                   windows.length))))
    assert got == expected and len(got) > 1000
    assert windows.max_context.to_list() == flags
    counts = np.bincount(windows.example.numpy(), minlength=len(queries))
    assert windows.first_window.numpy().tolist() == [0] + np.cumsum(counts).tolist()
