"""`BertEncoder`: the BERT network as a Keras functional model."""

import keras
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.config_uses import is_causal
from bert_tf.modeling.embeddings import BertEmbeddings
from bert_tf.modeling.positions import last_real_token
from bert_tf.modeling.transformer_block import TransformerBlock

# The original adds this to the attention scores of masked keys.
MASK_BIAS = -10000.0

INPUT_NAMES = ("input_ids", "input_mask", "segment_ids")


@keras.saving.register_keras_serializable(package="bert_tf")
class AttentionBias(keras.layers.Layer):
    """Additive attention bias: -10000 on padded keys (and on later keys if causal).

    Maps an `input_mask` `[B, T]` to `[B, 1, 1, T]`, or `[B, 1, T, T]` when
    `causal`, in float32; every transformer block adds it to its scores.
    """

    def __init__(self, causal=False, **kwargs):
        super().__init__(**kwargs)
        self.causal = causal

    def call(self, input_mask):
        bias = (1.0 - ops.cast(input_mask, "float32")) * MASK_BIAS
        bias = bias[:, None, None, :]
        if self.causal:
            length = ops.shape(input_mask)[1]
            later = ops.triu(ops.ones((length, length), "float32"), k=1)
            bias = bias + later[None, None, :, :] * MASK_BIAS
        return bias

    def compute_output_shape(self, input_mask_shape):
        batch, length = input_mask_shape
        return (batch, 1, length if self.causal else 1, length)

    def get_config(self):
        return {**super().get_config(), "causal": self.causal}


def summary_vector(sequence_output, input_mask, causal):
    """`[B, H]`: the vector that summarizes each sequence, the pooler's input.

    Attending both ways, that is the first token's, [CLS], as in the
    original. Left to right, [CLS] sees only itself; the last real token
    (the one before the padding: the final [SEP] of a packed input) is the
    one that has seen the whole text, so a causal model's pooler reads it.
    The paper does not say what its left-to-right model classified from;
    this is our choice (docs/ORIGINAL_BEHAVIOUR.md).

    >>> import numpy as np
    >>> states = np.arange(8, dtype="float32").reshape(2, 4, 1)
    >>> mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]], "int32")
    >>> ops.convert_to_numpy(summary_vector(states, mask, causal=True)).tolist()
    [[2.0], [7.0]]
    >>> ops.convert_to_numpy(summary_vector(states, mask, causal=False)).tolist()
    [[0.0], [4.0]]
    """
    if not causal:
        return sequence_output[:, 0, :]
    return last_real_token(sequence_output, input_mask)


def _run_blocks(embeddings, attention_bias, blocks, inputs, last_positions=None):
    """The embedding output and every block's output; the last only at `last_positions`."""
    embedding_output = embeddings(inputs["input_ids"], inputs["segment_ids"])
    bias = attention_bias(inputs["input_mask"])
    hidden = embedding_output
    encoder_outputs = []
    for block in blocks:
        last = block is blocks[-1]
        hidden = block(hidden, bias, query_positions=last_positions if last else None)
        encoder_outputs.append(hidden)
    return embedding_output, encoder_outputs


@keras.saving.register_keras_serializable(package="bert_tf")
class BertEncoder(keras.Model):
    """The BERT encoder: embeddings, post-LN transformer blocks and the pooler.

    Inputs are a dict of int32 `[batch, seq]` tensors named as in the original:
    `input_ids`, `input_mask` (1 for real tokens) and `segment_ids`. Outputs
    are a dict:

    * `sequence_output`: `[B, T, H]`, the last block's output;
    * `pooled_output`: `[B, H]`, tanh(dense(first token's vector)); for a
      causal model, of the last real token's (`summary_vector`);
    * `encoder_outputs`: list of every block's `[B, T, H]` output, first to
      last, so per-layer features (e.g. the last four concatenated) are slices;
    * `embedding_output`: `[B, T, H]`, the embedding layer's output.

    Dropout is active only when called with `training=True`. A causal
    encoder masks attention to later positions (the paper's left-to-right
    ablation): every position's outputs depend on it and the ones before it
    only. It is causal where its config says so (`config_uses.is_causal`, the
    mark `run_pretraining.py --causal` writes), so a left-to-right model is
    fine-tuned, evaluated and served with the mask it was pretrained with.

    Args:
        config: a `BertConfig`.
        causal: left-to-right attention instead of bidirectional; default: as
            `config` says. False for a causal config is refused.

    Raises:
        ValueError: `causal=False` with a left-to-right model's config.

    Example:

    >>> import numpy as np
    >>> from bert_tf.config import BertConfig
    >>> encoder = BertEncoder(BertConfig.named("tiny", vocab_size=100))
    >>> ids = np.array([[2, 7, 3, 0]], "int32")
    >>> outputs = encoder({"input_ids": ids, "input_mask": np.int32(ids > 0),
    ...                    "segment_ids": np.zeros_like(ids)})
    >>> tuple(outputs["pooled_output"].shape), len(outputs["encoder_outputs"])
    ((1, 128), 2)
    """

    def __init__(self, config, causal=None, **kwargs):
        if isinstance(config, dict):
            config = BertConfig.from_dict(config)
        if not isinstance(config, BertConfig):
            raise TypeError(f"config must be a BertConfig (or a dict of one), got "
                            f"{type(config).__name__}; read a file with "
                            "BertConfig.from_json_file")
        if causal is None:
            causal = is_causal(config)
        elif is_causal(config) and not causal:
            raise ValueError("a left-to-right model's config (\"causal\": true) cannot "
                             "build an encoder that attends both ways: remove the key first")
        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name)
                  for name in INPUT_NAMES}
        embeddings = BertEmbeddings(
            config.vocab_size, config.hidden_size, config.max_position_embeddings,
            config.type_vocab_size, config.hidden_dropout_prob, config.initializer_range,
            name="embeddings")
        blocks = [
            TransformerBlock(config.num_attention_heads, config.intermediate_size,
                             config.hidden_act, config.hidden_dropout_prob,
                             config.attention_probs_dropout_prob, config.initializer_range,
                             name=f"layer_{i}")
            for i in range(config.num_hidden_layers)
        ]
        pooler = keras.layers.Dense(
            config.hidden_size, activation="tanh", name="pooler",
            kernel_initializer=keras.initializers.TruncatedNormal(
                stddev=config.initializer_range))

        attention_bias = AttentionBias(causal, dtype="float32", name="attention_bias")
        embedding_output, encoder_outputs = _run_blocks(embeddings, attention_bias, blocks,
                                                        inputs)
        hidden = encoder_outputs[-1]
        outputs = {
            "sequence_output": hidden,
            "pooled_output": pooler(summary_vector(hidden, inputs["input_mask"], causal)),
            "encoder_outputs": encoder_outputs,
            "embedding_output": embedding_output,
        }
        kwargs.setdefault("name", "bert_encoder")
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.config = config
        self.causal = causal
        self.embeddings = embeddings
        self.attention_bias = attention_bias
        self.blocks = blocks
        self.pooler = pooler

    def encode_at(self, inputs, positions):
        """The last block's output at `positions` only: `sequence_output` gathered there.

        Every block but the last runs over all positions (the last one's keys
        and values need them); the last one computes only the `Q` rows asked
        for. A head that reads a few positions (the masked LM's 20 of 128 and
        `[CLS]`) so skips most of the last block, forward and backward: about
        a sixth of a four-block encoder's matmuls. Same weights, same result
        within float rounding.

        Args:
            inputs: the encoder's input dict (tensors or Keras inputs).
            positions: `[B, Q]` int32.

        Returns:
            `[B, Q, H]`.

        Example:

        >>> import numpy as np
        >>> encoder = BertEncoder(BertConfig.named("tiny", vocab_size=100))
        >>> ids = np.array([[2, 7, 3, 0]], "int32")
        >>> inputs = {"input_ids": ids, "input_mask": np.int32(ids > 0),
        ...           "segment_ids": np.zeros_like(ids)}
        >>> at = encoder.encode_at(inputs, np.array([[2, 0]], "int32"))
        >>> full = encoder(inputs)["sequence_output"]
        >>> bool(np.allclose(at, np.asarray(full)[:, [2, 0]], atol=1e-5))
        True
        """
        _, encoder_outputs = _run_blocks(self.embeddings, self.attention_bias, self.blocks,
                                         inputs, positions)
        return encoder_outputs[-1]

    def get_config(self):
        return {"config": self.config.to_dict(), "causal": self.causal, "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
