"""`StringBatchFunction`: a tokenizer's graph traced once, for every graph that calls it.

The in-graph tokenizers are thousands of ops (the code point fold, the
word split, two WordPiece models). Called inline, they were traced again
into each graph that uses them: each signature of an export (`serving_default`
and `pairs` of a classifier; a span-QA question and its context twice
over), each split's input pipeline. As one `tf.function` over string
batches of any size, they are traced on the first call only; every later
graph gets a call of that one function. A tiny classifier's export traced
its signatures in about 1.0 s instead of 1.2-1.5, saved in 0.7 s instead
of 1.1-1.2, and loaded in 0.4 s instead of 0.8-1.0: one tokenizer in its
function library, not two (docs/PERFORMANCE.md, "Tokenizers traced once").

A plain object, not the `tf.function` itself, is what a tokenizer keeps:
a Keras layer's `tf.function` attributes become functions of their own in
a SavedModel; this way the trace is kept only in the signatures that call it.
"""

import tensorflow as tf


class StringBatchFunction:
    """`function` of a string batch ([batch], any size), traced once whatever calls it.

    Args:
        function: takes a tf.string tensor [batch] and returns tensors,
            ragged tensors or a (named) tuple of them. It must be plain TensorFlow
            ops: it is traced without AutoGraph.

    Example: two graphs call it, and it is traced once.

    >>> lengths = StringBatchFunction(tf.strings.length)
    >>> first = tf.function(lambda text: lengths(text) + 1)
    >>> second = tf.function(lambda text: lengths(tf.strings.upper(text)))
    >>> first(tf.constant(["ab", "c"])).numpy().tolist(), second(["xyz"]).numpy().tolist()
    ([3, 2], [3])
    >>> lengths.tracing_count()
    1
    """

    def __init__(self, function):
        self._function = tf.function(function, autograph=False,
                                     input_signature=[tf.TensorSpec([None], tf.string)])

    def __call__(self, text):
        return self._function(text)

    def tracing_count(self):
        """How many times `function` was traced."""
        return self._function.experimental_get_tracing_count()
