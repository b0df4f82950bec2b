"""`MaskedLMServing`: text containing `[MASK]` -> the likeliest tokens at each mask.

`[MASK]` written in the text is kept as one token (everything else is
tokenized as the original does), and the masked-LM head predicts the
vocabulary at every mask position that survives truncation. For a batch of
B texts, M = the most masks in any of them and k = `top_k` (fixed at
export, recorded in the metadata), the signatures return:

* `num_masks` int32 [B]: masks found in each text (within `max_seq_length`);
* `mask_positions` int32 [B, M]: their positions in the packed input
  (`[CLS]` is 0), -1 past a text's own masks;
* `top_ids` int32 [B, M, k]: the best vocabulary ids, best first (-1 past
  a text's masks);
* `top_tokens` string [B, M, k]: those tokens ("" past a text's masks),
  looked up in the `vocab.txt` asset;
* `top_scores` float32 [B, M, k]: their softmax probabilities over the
  whole vocabulary (0 past a text's masks).

A text without a mask gets `num_masks` 0; a batch without any has M = 0.
A left-to-right model (`"causal": true`) has no such export: it predicts
the token after each position, not the one a `[MASK]` hides.
"""

import tensorflow as tf

from bert_tf.config_uses import require_bidirectional
from bert_tf.serving.text_module import TextServingModule

MASK_TOKEN = "[MASK]"


class MaskedLMServing(TextServingModule):
    """Serves top-k masked-token predictions of a `BertPretrainer`.

    Args:
        pretrainer: a built `BertPretrainer` (with or without the NSP head).
        vocabulary, asset_dir, max_seq_length, do_lower_case: as
            `TextServingModule`; the vocabulary must have `[MASK]`.
        top_k: how many tokens to return per mask.

    Example:

    >>> import tempfile
    >>> from bert_tf.config import BertConfig
    >>> from bert_tf.modeling import BertPretrainer
    >>> vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "cat", "sat"]
    >>> model = BertPretrainer(BertConfig.named("tiny", vocab_size=len(vocab)), nsp=False)
    >>> module = MaskedLMServing(model, vocab, tempfile.mkdtemp(), max_seq_length=8, top_k=3)
    >>> outputs = module.serve_texts(tf.constant(["The [MASK] sat", "the cat"]))
    >>> outputs["num_masks"].numpy().tolist(), outputs["mask_positions"].numpy().tolist()
    ([1, 0], [[2], [-1]])
    >>> outputs["top_tokens"].shape, outputs["top_tokens"][1, 0, 0].numpy()
    (TensorShape([2, 1, 3]), b'')
    """

    kind = "masked_lm"

    @classmethod
    def check_config(cls, config, source="the model's config"):
        """Refuses a left-to-right model (`config_uses.require_bidirectional`) too."""
        super().check_config(config, source)
        require_bidirectional(config, source, "which predicts the token after each position, "
                              "not the [MASK] a masked-LM export is asked to fill in")

    def __init__(self, pretrainer, vocabulary, asset_dir, max_seq_length=128,
                 do_lower_case=True, top_k=5, jit_compile=False):
        super().__init__(pretrainer.config, vocabulary, asset_dir, max_seq_length,
                         do_lower_case, keep_special_tokens=True, jit_compile=jit_compile)
        if MASK_TOKEN not in self.tokens:
            raise ValueError(f"the vocabulary has no {MASK_TOKEN} token")
        if not 1 <= top_k <= len(self.tokens):
            raise ValueError(f"top_k must be between 1 and the vocabulary size "
                             f"{len(self.tokens)}, got {top_k}")
        self.serve_model(pretrainer)
        self.mask_id = self.tokens.index(MASK_TOKEN)
        self.top_k = int(top_k)
        self.id_to_token = tf.lookup.StaticHashTable(
            tf.lookup.TextFileInitializer(
                self.vocab_file, tf.int64, tf.lookup.TextFileIndex.LINE_NUMBER,
                tf.string, tf.lookup.TextFileIndex.WHOLE_LINE),
            default_value="")

    def metadata_values(self):
        return {**super().metadata_values(), "top_k": self.top_k}

    def answer(self, inputs):
        ids = inputs["input_ids"]
        is_mask = tf.equal(ids, self.mask_id)
        all_positions = tf.broadcast_to(tf.range(tf.shape(ids)[1]), tf.shape(ids))
        positions = tf.ragged.boolean_mask(all_positions, is_mask)
        valid = tf.ones_like(positions, tf.bool).to_tensor(False)
        # Padding slots predict at [CLS]; their answers are blanked below.
        padded_positions = positions.to_tensor(0)

        def predict():
            outputs = self.inference({**inputs, "masked_lm_positions": padded_positions})
            return tf.cast(outputs["masked_lm_logits"], tf.float32)

        # Without masks (or texts) there is nothing to predict, and the
        # head's gather cannot take an empty batch.
        logits = tf.cond(
            tf.size(padded_positions) > 0, predict,
            lambda: tf.zeros(tf.concat([tf.shape(padded_positions), [len(self.tokens)]], 0)))
        scores, top_ids = tf.math.top_k(tf.nn.softmax(logits), self.top_k)
        valid_k = tf.broadcast_to(valid[:, :, None], tf.shape(top_ids))
        return {
            "num_masks": tf.cast(positions.row_lengths(), tf.int32),
            "mask_positions": tf.where(valid, padded_positions, -1),
            "top_ids": tf.where(valid_k, top_ids, -1),
            "top_tokens": tf.where(valid_k,
                                   self.id_to_token.lookup(tf.cast(top_ids, tf.int64)), ""),
            "top_scores": tf.where(valid_k, scores, 0.0),
        }
