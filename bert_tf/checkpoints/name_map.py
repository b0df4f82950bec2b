"""Which of our Keras variables is which variable of the original checkpoint.

The original TF1 release names every tensor (`bert/encoder/layer_3/...`,
`cls/predictions/...`, see docs/ORIGINAL_BEHAVIOUR.md). `tf1_variable_map`
walks a Keras model, finds our encoder and heads in it, and returns for each
original name the variable that holds that tensor and whether the original
stores it transposed (`output_weights` are `[out, in]`; Keras kernels are
`[in, out]`). Readers and writers of every format build on this one map.

Layers the original release never had get names of ours: the feature-based
NER tagger's BiLSTM and classifier live under `ner/`, the BiLSTM a
fine-tuned model puts over its encoder (the paper's "+ BiLSTM") under
`bilstm_0/` (`FINE_TUNING_BILSTM_KERNEL`). A trainable variable that no map
covers makes `save_tf1_checkpoint` fail instead of dropping it.
"""

import dataclasses

import keras

from bert_tf.modeling.bilstm import BiLstm, BiLstmTagger
from bert_tf.modeling.encoder import BertEncoder
from bert_tf.modeling.heads import ClassificationHead, NextSentenceHead, SpanHead
from bert_tf.modeling.masked_lm_head import MaskedLMHead


@dataclasses.dataclass(frozen=True)
class WeightRef:
    """A Keras variable and how the original stores it.

    Attributes:
        variable: the `keras.Variable`.
        transposed: the original tensor is the transpose of the variable.
        is_kernel: the variable is a dense kernel (`[in, out]`); formats
            with `[out, in]` linear weights (HuggingFace) transpose it.
    """

    variable: keras.Variable
    transposed: bool = False
    is_kernel: bool = False

    @property
    def original_shape(self):
        shape = tuple(self.variable.shape)
        return shape[::-1] if self.transposed else shape


def _dense(prefix, dense, kernel_name="kernel", bias_name="bias", transposed=False):
    return {
        f"{prefix}{kernel_name}": WeightRef(dense.kernel, transposed, is_kernel=True),
        f"{prefix}{bias_name}": WeightRef(dense.bias),
    }


def _layer_norm(prefix, layer_norm):
    return {f"{prefix}gamma": WeightRef(layer_norm.gamma),
            f"{prefix}beta": WeightRef(layer_norm.beta)}


def _encoder(encoder):
    embeddings = encoder.embeddings
    names = {
        "bert/embeddings/word_embeddings": WeightRef(embeddings.word_embeddings.embeddings),
        "bert/embeddings/token_type_embeddings":
            WeightRef(embeddings.token_type_embeddings.embeddings),
        "bert/embeddings/position_embeddings":
            WeightRef(embeddings.position_embeddings.embeddings),
        **_layer_norm("bert/embeddings/LayerNorm/", embeddings.layer_norm),
        **_dense("bert/pooler/dense/", encoder.pooler),
    }
    for i, block in enumerate(encoder.blocks):
        prefix = f"bert/encoder/layer_{i}/"
        for part in ("query", "key", "value"):
            names.update(_dense(f"{prefix}attention/self/{part}/",
                                getattr(block.attention, part)))
        names.update(_dense(f"{prefix}attention/output/dense/", block.attention_output))
        names.update(_layer_norm(f"{prefix}attention/output/LayerNorm/",
                                 block.attention_layer_norm))
        names.update(_dense(f"{prefix}intermediate/dense/", block.intermediate))
        names.update(_dense(f"{prefix}output/dense/", block.output_dense))
        names.update(_layer_norm(f"{prefix}output/LayerNorm/", block.output_layer_norm))
    return names


def _masked_lm(head):
    return {
        **_dense("cls/predictions/transform/dense/", head.transform),
        **_layer_norm("cls/predictions/transform/LayerNorm/", head.layer_norm),
        "cls/predictions/output_bias": WeightRef(head.output_bias),
    }


def _transposed_dense(prefix):
    def names(head):
        return _dense(prefix, head.dense, "output_weights", "output_bias", transposed=True)
    return names


# The fine-tuning BiLSTM's first kernel, `[in, 4 * units]`: its size in a checkpoint.
FINE_TUNING_BILSTM_KERNEL = "bilstm_0/forward/kernel"


def fine_tuned_bilstm_units(shapes):
    """Units per direction of the BiLSTM over the encoder, from a model checkpoint's
    `{name: shape}`; 0 for none.

    A model fine-tuned with one (the runners' `--bilstm`, the paper's "+
    BiLSTM") saves it under `bilstm_0/` (`FINE_TUNING_BILSTM_KERNEL`,
    `[in, 4 * units]`), so its folder says how to rebuild it. HuggingFace
    weights never hold one.

    >>> fine_tuned_bilstm_units({FINE_TUNING_BILSTM_KERNEL: [768, 1536]})
    384
    """
    shape = shapes.get(FINE_TUNING_BILSTM_KERNEL)
    return shape[-1] // 4 if shape else 0


def _bilstm(layer):
    """A BiLSTM (not in the original release): the feature-based NER tagger's, with its
    classifier, under `ner/`; the one over a fine-tuned encoder at the top level."""
    tagger = isinstance(layer, BiLstmTagger)
    scope = "ner/" if tagger else ""
    names = {}
    for index, bidirectional in enumerate(layer.lstms):
        for direction, lstm in (("forward", bidirectional.forward_layer),
                                ("backward", bidirectional.backward_layer)):
            prefix = f"{scope}bilstm_{index}/{direction}/"
            names.update({
                f"{prefix}kernel": WeightRef(lstm.cell.kernel, is_kernel=True),
                f"{prefix}recurrent_kernel": WeightRef(lstm.cell.recurrent_kernel,
                                                       is_kernel=True),
                f"{prefix}bias": WeightRef(lstm.cell.bias)})
    if tagger:
        names.update(_dense("ner/", layer.classifier, "output_weights", "output_bias",
                            transposed=True))
    return names


_COMPONENTS = (
    (BertEncoder, _encoder),
    (MaskedLMHead, _masked_lm),
    (NextSentenceHead, _transposed_dense("cls/seq_relationship/")),
    (ClassificationHead, _transposed_dense("")),
    (SpanHead, _transposed_dense("cls/squad/")),
    (BiLstm, _bilstm),
)


def tf1_variable_map(model):
    """Maps original checkpoint names to `WeightRef`s for every part of `model`.

    `model` may be a `BertEncoder`, one of our heads, or any Keras model or
    layer containing them (built). At most one of each kind may be present.

    Raises:
        ValueError: if `model` has no known part, an unbuilt part, or two
            parts of one kind.
    """
    names, seen = {}, set()
    for layer in model._flatten_layers(include_self=True, recursive=True):
        for kind, component_names in _COMPONENTS:
            if isinstance(layer, kind):
                if kind in seen:
                    raise ValueError(f"{model.name}: more than one {kind.__name__}; "
                                     "the original checkpoint layout has one of each")
                if not layer.built:
                    raise ValueError(f"{layer.name} is not built; call the model once first")
                seen.add(kind)
                names.update(component_names(layer))
    if not names:
        raise ValueError(f"{model.name} contains no BERT encoder or head")
    return names


# The pooler (tanh(dense([CLS]))): only what reads `pooled_output` uses it, and
# HuggingFace's BertForMaskedLM, ...ForQuestionAnswering and ...ForTokenClassification
# save none.
POOLER_NAMES = ("bert/pooler/dense/bias", "bert/pooler/dense/kernel")


def encoder_names(names):
    """The subset of names that belong to the encoder (`bert/...`)."""
    return {name for name in names if name.startswith("bert/")}
