"""`BertPretrainer`: the encoder with the masked-LM and next-sentence heads."""

import keras
from keras import ops

from bert_tf.config import BertConfig
from bert_tf.modeling.encoder import INPUT_NAMES, BertEncoder
from bert_tf.modeling.heads import NextSentenceHead
from bert_tf.modeling.masked_lm_head import MaskedLMHead

PRETRAINING_INPUT_NAMES = INPUT_NAMES + ("masked_lm_positions",)


@keras.saving.register_keras_serializable(package="bert_tf")
class BertPretrainer(keras.Model):
    """The pretraining network of the paper, and its two ablations.

    Inputs are a dict of int32 tensors named as the pretraining records'
    features: `input_ids`, `input_mask`, `segment_ids` (`[B, T]`) and
    `masked_lm_positions` (`[B, P]`, the positions to predict). Outputs are a
    dict of float32 logits:

    * `masked_lm_logits`: `[B, P, vocab_size]`, from `MaskedLMHead` (dense +
      activation + LayerNorm, decoder tied to the word embeddings, bias);
    * `next_sentence_logits`: `[B, 2]` from the pooled output (only with
      `nsp=True`; 0 = actual next, 1 = random next).

    Ablations of the paper's Table 5: `nsp=False` is "No NSP" (masked LM
    only); `causal=True` is "LTR & No NSP": left-to-right attention, where
    the masked-LM head predicts the next token at the positions it is given
    (see `bert_tf.tasks.pretraining_inputs.left_to_right_batch`). A causal
    model has no NSP head: its first token sees nothing but itself.

    The heads read the last block only at the masked positions and the
    first token, so the last block computes only those rows
    (`BertEncoder.encode_at`): the logits are the full encoder's, and a
    step does 13-15% fewer matmul FLOPs at four blocks (3% at BERT-Large).

    The variables map one to one onto the original checkpoint's `bert/*`,
    `cls/predictions/*` and `cls/seq_relationship/*`, so
    `bert_tf.checkpoints.restore` and `save_tf1_checkpoint` work on it.

    Args:
        config: a `BertConfig` (or its dict).
        nsp: add the next-sentence head.
        causal: left-to-right attention (requires `nsp=False`).

    Example:

    >>> import numpy as np
    >>> model = BertPretrainer(BertConfig.named("tiny", vocab_size=100))
    >>> ids = np.array([[2, 7, 3, 9, 3, 0]], "int32")
    >>> outputs = model({"input_ids": ids, "input_mask": np.int32(ids > 0),
    ...                  "segment_ids": np.zeros_like(ids),
    ...                  "masked_lm_positions": np.array([[1, 3]], "int32")})
    >>> tuple(outputs["masked_lm_logits"].shape), tuple(outputs["next_sentence_logits"].shape)
    ((1, 2, 100), (1, 2))
    """

    def __init__(self, config, nsp=True, causal=False, **kwargs):
        if isinstance(config, dict):
            config = BertConfig.from_dict(config)
        if causal and nsp:
            raise ValueError("a causal (left-to-right) pretrainer has no next-sentence head: "
                             "pass nsp=False with causal=True")
        inputs = {name: keras.Input(shape=(None,), dtype="int32", name=name)
                  for name in PRETRAINING_INPUT_NAMES}
        encoder = BertEncoder(config, causal=causal)
        masked_lm = MaskedLMHead(encoder.embeddings.word_embeddings, config.hidden_act,
                                 config.initializer_range, name="masked_lm")
        # The last block runs only where the heads read: the masked positions
        # and, for the next-sentence head, the first token.
        positions = inputs["masked_lm_positions"]
        if nsp:
            positions = ops.concatenate([ops.zeros_like(positions[:, :1]), positions], axis=1)
        states = encoder.encode_at({name: inputs[name] for name in INPUT_NAMES}, positions)
        next_sentence = None
        if nsp:
            next_sentence = NextSentenceHead(config.initializer_range, name="next_sentence")
            outputs = {"masked_lm_logits": masked_lm(states[:, 1:]),
                       "next_sentence_logits": next_sentence(encoder.pooler(states[:, 0]))}
        else:
            outputs = {"masked_lm_logits": masked_lm(states)}
        kwargs.setdefault("name", "bert_pretrainer")
        super().__init__(inputs=inputs, outputs=outputs, **kwargs)
        self.config = config
        self.nsp = nsp
        self.causal = causal
        self.encoder = encoder
        self.masked_lm = masked_lm
        self.next_sentence = next_sentence

    def get_config(self):
        return {"config": self.config.to_dict(), "nsp": self.nsp, "causal": self.causal,
                "name": self.name}

    @classmethod
    def from_config(cls, config):
        return cls(**config)
