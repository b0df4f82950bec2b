"""What an export is made from: a checkpoint folder read into a model, or a model.

A source folder is what our runners write or what the original release
ships: `bert_model.ckpt.*` (or a HuggingFace `model.safetensors` with its
`config.json`), `bert_config.json`, `vocab.txt`, and for a classifier or
a NER tagger `labels.txt`. Reading one checks it before any model is
built, so a wrong folder fails with one line naming the file. A model
fine-tuned with a BiLSTM over its encoder (`--bilstm`) is rebuilt with it,
of the size its checkpoint holds.
"""

import dataclasses
import os


from bert_tf.checkpoints import (CheckpointError, checkpoint_folder, config_beside,
                                 fine_tuned_bilstm_units, is_huggingface, restore)
from bert_tf.checkpoints.labels import LABELS_FILE, read_labels
from bert_tf.checkpoints.load_rules import CheckpointMismatch
from bert_tf.checkpoints.tf1 import (is_training_checkpoint, read_checkpoint,
                                     resolve_checkpoint_prefix)
from bert_tf.modeling import BertEncoder, BertPretrainer, build_span_model
from bert_tf.modeling.classifier import build_classifier, build_token_classifier

# A name every original-layout checkpoint of a BERT model has.
_EMBEDDINGS = "bert/embeddings/word_embeddings"


@dataclasses.dataclass
class SourceFolder:
    """A checked source: the checkpoint path for `restore`, config, vocab, labels, and
    the units of the BiLSTM over its encoder (`fine_tuned_bilstm_units`, 0: none)."""

    checkpoint: str
    config: object
    vocab_file: str
    labels: list = None
    bilstm_units: int = 0


def read_source(path, needs_labels=False, vocab_file=None):
    """Checks a checkpoint folder (or prefix) and what lies beside it.

    Args:
        path: a folder, or a checkpoint prefix such as `.../bert_model.ckpt`.
        needs_labels: read `labels.txt` (one label a line) beside it.
        vocab_file: the vocabulary, if not the folder's `vocab.txt`.

    Raises:
        CheckpointError: no model checkpoint, or only training checkpoints.
        FileNotFoundError: no vocab.txt or labels.txt (naming the path).
    """
    path = os.fspath(path)
    folder = checkpoint_folder(path)
    bilstm_units = 0  # HuggingFace weights never hold one
    if not is_huggingface(path):
        prefix = resolve_checkpoint_prefix(path)
        shapes = read_checkpoint(prefix).get_variable_to_shape_map()
        _check_model_checkpoint(prefix, shapes)
        bilstm_units = fine_tuned_bilstm_units(shapes)
    vocab_file = vocab_file or os.path.join(folder, "vocab.txt")
    if not os.path.exists(vocab_file):
        raise FileNotFoundError(f"{vocab_file}: not found; pass the model's vocabulary")
    labels = None
    if needs_labels:
        labels_file = os.path.join(folder, LABELS_FILE)
        if not os.path.exists(labels_file):
            raise FileNotFoundError(
                f"{labels_file}: not found; a classifier or ner export needs the label "
                "names that run_classifier.py or run_ner.py writes beside bert_model.ckpt "
                "after training")
        labels = list(read_labels(labels_file))
    return SourceFolder(path, config_beside(path), vocab_file, labels, bilstm_units)


def _check_model_checkpoint(prefix, shapes):
    """Refuses our trainer's resumable `ckpt-N` (`shapes`: its `{name: shape}`) in place of
    a model checkpoint."""
    if _EMBEDDINGS not in shapes and is_training_checkpoint(shapes):
        raise CheckpointError(
            f"{prefix}: a training checkpoint (for resuming), not a model; export from "
            "the bert_model.ckpt that the runner writes when training finishes")


def restored(model, source, head_prefix=None):
    """Restores `model` from `source.checkpoint`; returns it.

    Raises:
        CheckpointError: if the head's weights (names starting with
            `head_prefix`) are not all in the checkpoint.
    """
    report = restore(model, source.checkpoint)
    missing = [n for n in report.not_in_checkpoint if head_prefix is not None
               and n.startswith(head_prefix)]
    if missing:
        raise CheckpointError(f"{source.checkpoint}: has no {missing[0]} (and "
                              f"{len(missing) - 1} more head weights); is it the right model?")
    return model


def encoder_from(source):
    """A `BertEncoder` restored from a source folder."""
    return restored(BertEncoder(source.config), source)


def pretrainer_from(source):
    """A masked-LM `BertPretrainer` (no NSP head) restored from a source folder."""
    return restored(BertPretrainer(source.config, nsp=False), source, "cls/predictions/")


def classifier_from(source):
    """Encoder + classification head (`output_weights`/`output_bias`), restored."""
    return _labeled_head_from(build_classifier, source)


def _labeled_head_from(build, source):
    """`build(config, labels, bilstm_units)` restored; a checkpoint whose shapes do not fit
    names the labels too, since their count decides the head's size (a `labels.txt` of
    another run). A damaged file's error is left as it is: the labels have no part in it."""
    try:
        return restored(build(source.config, len(source.labels), source.bilstm_units),
                        source, "output_")
    except CheckpointMismatch as error:
        raise CheckpointError(f"{error} (the head has one output per label: "
                              f"{len(source.labels)} labels given, from {LABELS_FILE} or "
                              "the labels argument)") from None


def choice_scorer_from(source):
    """Encoder + the one-output head that scores each ending (`run_swag.py`), restored."""
    return restored(build_classifier(source.config, 1, source.bilstm_units), source,
                    "output_")


def token_classifier_from(source):
    """Encoder + the same head on every token (`run_ner.py --mode=fine_tune`), restored."""
    return _labeled_head_from(build_token_classifier, source)


def span_model_from(source):
    """Encoder + span head (`cls/squad/output_weights`/`output_bias`), restored."""
    return restored(build_span_model(source.config, source.bilstm_units), source,
                    "cls/squad/")


def find_encoder(model):
    """The `BertEncoder` in `model` (itself, or a part of it).

    Raises:
        ValueError: if `model` has none.

    Example:

    >>> import keras
    >>> from bert_tf.config import BertConfig
    >>> encoder = BertEncoder(BertConfig.named("tiny", vocab_size=10))
    >>> classifier = keras.Model(encoder.input, encoder(encoder.input)["pooled_output"])
    >>> find_encoder(classifier) is encoder
    True
    """
    for layer in model._flatten_layers(include_self=True, recursive=True):
        if isinstance(layer, BertEncoder):
            return layer
    raise ValueError(f"{model.name} contains no BertEncoder")
