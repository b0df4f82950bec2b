"""`EncoderServing`: text (or text pairs) -> the encoder's features.

The served form of the paper's feature-based use and of sentence
embeddings. For a batch of B texts, with T = the batch's longest packed
text (at most `max_seq_length`), H the hidden size and L the number of
layers, the signatures return float32:

* `pooled_output` [B, H]: tanh(dense(vector of [CLS])), as the classifier
  head sees it (a left-to-right model's, `"causal": true`: of its last real
  token, `modeling.encoder.summary_vector`; its every output is left to right);
* `sequence_output` [B, T, H]: the last layer;
* `encoder_outputs` [B, L, T, H]: every layer, first to last;
* `last_four_layers` [B, T, 4H]: layers -1, -2, -3, -4 concatenated in that
  order (the best feature-based input of the paper; all layers when L < 4);

and int32 `input_mask` [B, T] (1 on real tokens, 0 on padding), so that
clients can leave padding out of any pooling.
"""

import tensorflow as tf

from bert_tf.serving.text_module import TextServingModule

LAST_LAYERS_CONCATENATED = 4


class EncoderServing(TextServingModule):
    """Serves a `BertEncoder`'s outputs for raw text.

    Args:
        encoder: a built `BertEncoder`.
        vocabulary, asset_dir, max_seq_length, do_lower_case: as
            `TextServingModule`.

    Example:

    >>> import tempfile
    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling import BertEncoder
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "hello", "world"]
    >>> encoder = BertEncoder(BertConfig.named("tiny", vocab_size=len(vocab)))
    >>> module = EncoderServing(encoder, vocab, tempfile.mkdtemp(), max_seq_length=8)
    >>> outputs = module.serve_texts(tf.constant(["Hello world!", ""]))
    >>> outputs["last_four_layers"].shape, outputs["input_mask"].numpy().tolist()[1]
    (TensorShape([2, 5, 256]), [1, 1, 0, 0, 0])
    """

    kind = "encoder"

    def __init__(self, encoder, vocabulary, asset_dir, max_seq_length=128,
                 do_lower_case=True, jit_compile=False):
        super().__init__(encoder.config, vocabulary, asset_dir, max_seq_length, do_lower_case,
                         jit_compile=jit_compile)
        self.serve_model(encoder)

    def answer(self, inputs):
        outputs = self.inference(inputs)
        layers = [tf.cast(layer, tf.float32) for layer in outputs["encoder_outputs"]]
        return {
            "pooled_output": tf.cast(outputs["pooled_output"], tf.float32),
            "sequence_output": tf.cast(outputs["sequence_output"], tf.float32),
            "encoder_outputs": tf.stack(layers, axis=1),
            "last_four_layers": tf.concat(layers[::-1][:LAST_LAYERS_CONCATENATED], axis=-1),
            "input_mask": inputs["input_mask"],
        }
