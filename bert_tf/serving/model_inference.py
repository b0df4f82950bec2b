"""`ModelInference`: a Keras model's inference pass, traced once for inputs of any shape.

Exports call it from every signature (`text_module`), and the feature-based
tagger computes its frozen encoder's features with it for every split of a
run (`tasks/token_features.py`). Each new shape of a plain `tf.function`
would trace the model again, and TensorFlow warns of retracing after a
few; a signature of unknown batch and length traces it once.
"""

import tensorflow as tf


class ModelInference:
    """`model(inputs, training=False)` as one `tf.function`, XLA-compiled with `jit_compile`.

    Every call goes through the same function with inputs of shape
    [batch, length], both unknown, so the model is traced once, not once per
    signature, batch size or length. A plain object, not a `tf.Module`: a
    SavedModel keeps the function in the graphs of the signatures that call
    it, not as an attribute of its own.

    Attributes:
        model: the Keras model it calls.

    Example:

    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling import BertEncoder
    >>> inference = ModelInference(BertEncoder(BertConfig.named("tiny", vocab_size=9)),
    ...                            jit_compile=False)
    >>> for batch, length in ((2, 3), (1, 5)):
    ...     inputs = {name: tf.ones([batch, length], tf.int32)
    ...               for name in ("input_ids", "input_mask", "segment_ids")}
    ...     _ = inference(inputs)["pooled_output"]
    >>> inference.tracing_count()
    1
    """

    def __init__(self, model, jit_compile):
        self.model = model
        self._function = tf.function(lambda inputs: model(inputs, training=False),
                                     jit_compile=jit_compile, autograph=False)

    def __call__(self, inputs):
        relaxed = {name: tf.TensorSpec([None, None], value.dtype, name=name)
                   for name, value in inputs.items()}
        return self._function.get_concrete_function(relaxed)(inputs)

    def tracing_count(self):
        """How many times the model was traced."""
        return self._function.experimental_get_tracing_count()
