"""Serving: self-contained SavedModels that take raw text (docs/SERVING.md).

`export(kind, model_or_folder, export_dir, ...)` writes one; the modules
behind it: `EncoderServing`, `MaskedLMServing`, `ClassifierServing`,
`SpanQAServing`, `NerServing`, `MultipleChoiceServing`, all built on
`TextServingModule` (tokenization in the graph, vocabulary as an asset,
metadata signature).
"""

from bert_tf.serving.classifier_export import ClassifierServing
from bert_tf.serving.encoder_export import EncoderServing
from bert_tf.serving.export import KINDS, check_export_dir, export
from bert_tf.serving.masked_lm_export import MaskedLMServing
from bert_tf.serving.multiple_choice_export import MultipleChoiceServing
from bert_tf.serving.ner_export import NerServing
from bert_tf.serving.span_options import SpanOptions
from bert_tf.serving.span_qa_export import SpanQAServing
from bert_tf.serving.text_module import TextServingModule

__all__ = ["KINDS", "ClassifierServing", "EncoderServing", "MaskedLMServing",
           "MultipleChoiceServing", "NerServing", "SpanOptions", "SpanQAServing",
           "TextServingModule",
           "check_export_dir", "export"]
