"""`MultipleChoiceServing`: a context and its candidate endings -> which ending follows.

The served form of a `run_swag.py` model. Each pair `[CLS] context [SEP]
ending [SEP]` is scored on its own by the encoder and the one-output head,
and an example's scores are its logits over the endings, as in training;
so a request may give any number of endings, the same for every row of a
batch (rows with fewer endings go in a batch of their own: an empty ending
would get a score, a share of the probabilities and perhaps the choice). For B
contexts with C endings each, `serving_default(context, endings)` returns:

* `probabilities` float32 [B, C]: softmax over each row's endings;
* `logits` float32 [B, C];
* `choice` int32 [B]: the index of the most probable ending.

SWAG's own layout is the context `sent1` and the endings `sent2 + " " +
endingN` (`tasks.swag_data`): send them so.
"""

import keras
import tensorflow as tf

from bert_tf.modeling.bilstm import bilstm_of, head_inputs
from bert_tf.serving.sources import find_encoder
from bert_tf.serving.signatures import signature, string_spec
from bert_tf.serving.text_module import TextServingModule


def choice_scorer(model):
    """The model that scores one packed sequence: `model` itself, or a multiple-choice
    model's encoder, its BiLSTM if it has one (`bilstm_of`) and head (a layer named
    "classifier") as one.

    Raises:
        ValueError: a model with neither one output per sequence nor that head.
    """
    if len(model.output.shape) == 2 and model.output.shape[-1] == 1:
        return model
    try:
        head = model.get_layer("classifier")
    except ValueError:
        raise ValueError(f"{model.name}: a multiple-choice export needs a model that scores "
                         "each sequence, or one with a 'classifier' head") from None
    encoder = find_encoder(model)
    _, summary = head_inputs(encoder, encoder.input, bilstm_of(model))
    return keras.Model(encoder.input, head(summary))


class MultipleChoiceServing(TextServingModule):
    """Serves a multiple-choice model: a context and C endings per row -> C probabilities.

    Args:
        model: a multiple-choice model (`build_multiple_choice_model`) or a
            scorer of single sequences (encoder inputs -> float [B, 1]).
        vocabulary, asset_dir, max_seq_length, do_lower_case, jit_compile:
            as `TextServingModule`.

    Example:

    >>> import tempfile
    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling.classifier import build_classifier
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "he", "walks", "flies", "sings"]
    >>> config = BertConfig.named("tiny", vocab_size=len(vocab))
    >>> module = MultipleChoiceServing(build_classifier(config, 1), vocab, tempfile.mkdtemp(),
    ...                                max_seq_length=16)
    >>> outputs = module.serve_choices(tf.constant(["he"]),
    ...                                tf.constant([["walks", "flies", "sings"]]))
    >>> outputs["probabilities"].shape, outputs["choice"].shape
    (TensorShape([1, 3]), TensorShape([1]))
    """

    kind = "multiple_choice"
    always_pairs = "a context and each ending"

    def __init__(self, model, vocabulary, asset_dir, max_seq_length=128, do_lower_case=True,
                 jit_compile=False):
        super().__init__(find_encoder(model).config, vocabulary, asset_dir, max_seq_length,
                         do_lower_case, jit_compile=jit_compile)
        self.serve_model(choice_scorer(model))

    def serve_choices(self, context, endings):
        """The answers for contexts (tf.string [B]) and their endings (tf.string [B, C])."""
        checks = [tf.debugging.assert_equal(tf.size(context), tf.shape(endings)[0],
                                            message="give one row of endings per context"),
                  tf.debugging.assert_positive(tf.shape(endings)[1],
                                               message="give at least one ending per row")]
        with tf.control_dependencies(checks):  # before any work that would fail less clearly
            num_choices = tf.shape(endings)[1]
        pairs = (tf.repeat(context, num_choices), tf.reshape(endings, [-1]))
        scores = tf.cast(self.inference(self.packed(pairs)), tf.float32)
        logits = tf.reshape(scores, tf.shape(endings))
        return {"probabilities": tf.nn.softmax(logits), "logits": logits,
                "choice": tf.argmax(logits, axis=-1, output_type=tf.int32)}

    def answer_signatures(self):
        return {"serving_default": signature(
            self.serve_choices, string_spec("context"),
            tf.TensorSpec([None, None], tf.string, name="endings"))}
