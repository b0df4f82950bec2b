"""Keras layers and models of BERT: embeddings, transformer blocks, encoder, heads."""

from bert_tf.modeling.activations import get_activation
from bert_tf.modeling.attention import SelfAttention
from bert_tf.modeling.embeddings import BertEmbeddings
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassificationHead, NextSentenceHead, SpanHead
from bert_tf.modeling.masked_lm_head import MaskedLMHead
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.modeling.span_model import build_span_model
from bert_tf.modeling.transformer_block import TransformerBlock

__all__ = [
    "BertEmbeddings", "BertEncoder", "BertPretrainer", "ClassificationHead", "MaskedLMHead",
    "NextSentenceHead", "SelfAttention", "SpanHead", "TransformerBlock", "build_span_model",
    "get_activation",
]
