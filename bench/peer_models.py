"""The peers' models with our `BertConfig`'s dimensions, for the benches that time them.

HuggingFace gets `gelu_new` (the tanh approximation: the original's GELU,
which our named sizes use) and the original's LayerNorm epsilon. keras-hub
is imported where a backbone is built, so a bench that times HuggingFace
alone (the GPU bench) runs where keras-hub is not installed.
"""

import peers

with peers.needed():
    import transformers


def hf_bert_config(config, **more):
    """A `transformers.BertConfig` of `config`'s dimensions; `more` adds HF options."""
    return transformers.BertConfig(
        vocab_size=config.vocab_size, hidden_size=config.hidden_size,
        num_hidden_layers=config.num_hidden_layers,
        num_attention_heads=config.num_attention_heads,
        intermediate_size=config.intermediate_size, hidden_act="gelu_new",
        max_position_embeddings=config.max_position_embeddings,
        type_vocab_size=config.type_vocab_size, layer_norm_eps=1e-12, **more)


def keras_hub_backbone(config, dtype=None):
    """A fresh `keras_hub.models.BertBackbone` of `config`'s dimensions.

    `dtype`: a Keras dtype policy name ("mixed_bfloat16"); None: the global policy.
    """
    import keras_hub

    return keras_hub.models.BertBackbone(
        vocabulary_size=config.vocab_size, num_layers=config.num_hidden_layers,
        num_heads=config.num_attention_heads, hidden_dim=config.hidden_size,
        intermediate_dim=config.intermediate_size,
        max_sequence_length=config.max_position_embeddings, num_segments=config.type_vocab_size, dtype=dtype)
