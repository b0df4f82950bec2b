"""CoNLL-2003 named-entity recognition (the paper's section 5.3): `run_ner.py`.

Two modes:

* `fine_tune`: the encoder's sequence output through dropout and a dense
  layer gives tag logits per token (the head's variables are the
  classifier's `output_weights` / `output_bias`); the whole network trains.
  With `bilstm_units` (`--bilstm`), a BiLSTM between the two trains too.
* `feature_based`: the encoder stays frozen; its features (one of the
  paper's six layer choices, see `token_features`) are computed once per
  split and cached in `output_dir/features/`, then a two-layer BiLSTM and a
  classifier (`BiLstmTagger`) train on them. The export holds the frozen
  encoder and the tagger (`ner/...` variables), so it predicts from text.

Either way each word is tagged from its first word piece; the loss and the
token accuracy count first pieces only (label weight 1, the others 0, see
`tagging_features`), summed over the whole step's batch. Evaluation turns
window logits back into one tag per word and scores entities with the
conlleval rules. Results: `eval_results.txt` (precision, recall, F1, per
type) with `dev_predictions.txt`, and `test_predictions.txt` with
`test_results.txt` (`word gold predicted` lines, which conlleval reads, and
our scores of them): each pair is replaced together, never one beside the
other's earlier version.
"""

import dataclasses
import os

import keras
import numpy as np

from bert_tf.atomic_files import write_texts
from bert_tf.checkpoints import export_original
from bert_tf.errors import UsageError
from bert_tf.modeling import BertEncoder
from bert_tf.modeling.classifier import build_token_classifier
from bert_tf.tasks import conll_data, tagging_features, token_features
from bert_tf.tasks.batching import LABEL_KEY, batched_columns
from bert_tf.tasks.entity_metrics import entity_scores
from bert_tf.tasks.losses import WEIGHTS_KEY, cross_entropy, tagging_objective
from bert_tf.tasks.task import Task
from bert_tf.tokenization import FullTokenizer
from bert_tf.training.init_checkpoint import initialize_from_checkpoint
from bert_tf.training.summaries import eval_results_text

MODES = ("fine_tune", "feature_based")
# Defaults of the options `run_ner.py` passes on: window stride, feature-based layers and width.
DEFAULT_DOC_STRIDE, DEFAULT_FEATURE_LAYERS, DEFAULT_LSTM_UNITS = 64, "concat_last_four", 768
DEV_PREDICTIONS, TEST_PREDICTIONS, TEST_RESULTS = (
    "dev_predictions.txt", "test_predictions.txt", "test_results.txt")


@dataclasses.dataclass
class TaggingSplit:
    """One split's sentences and the model inputs made from them (its examples).

    Attributes:
        name: "train", "dev" or "test".
        sentences: the `conll_data.TaggedSentence`s.
        windows: their `tagging_features.TaggingWindow`s.
        columns: the windows as padded numpy columns.
        features: cached frozen-encoder features (feature-based mode), once computed.
    """

    name: str
    sentences: list
    windows: list
    columns: dict
    features: object = None

    def __len__(self):
        return len(self.windows)

    @property
    def sentence_lengths(self):
        return [len(sentence.words) for sentence in self.sentences]


class NerTask(Task):
    """The `Task` of run_ner.py.

    Args:
        data_dir: folder with the CoNLL-2003 files (`conll_data.SPLIT_FILES`).
        model_files: the resolved `ModelFiles` (config, vocabulary, start weights).
        max_seq_length: tokens per window.
        do_lower_case: lower-case and strip accents (uncased models).
        mode: "fine_tune" or "feature_based".
        doc_stride: word pieces between window starts of long sentences.
        feature_layers: feature-based mode: one of `token_features.FEATURE_LAYERS`.
        lstm_units: feature-based mode: units per LSTM direction.
        cache_dir: feature-based mode: where feature caches go.
        feature_batch_size: windows per encoder pass when computing features.
        bilstm_units: fine_tune mode: see `Task.bilstm_units` (feature_based
            mode has a BiLSTM of its own, `lstm_units`).

    Raises:
        UsageError: a `bilstm_units` in feature_based mode, or that mode
            without start weights.
    """

    name = "ner"
    reads_pooled_output = False

    def __init__(self, data_dir, model_files, max_seq_length, do_lower_case, mode="fine_tune",
                 doc_stride=DEFAULT_DOC_STRIDE, feature_layers=DEFAULT_FEATURE_LAYERS,
                 lstm_units=DEFAULT_LSTM_UNITS, cache_dir=None, feature_batch_size=32,
                 bilstm_units=0):
        if mode not in MODES:
            raise ValueError(f"--mode={mode!r}: choose one of {', '.join(MODES)}")
        if mode == "feature_based":
            if bilstm_units:
                raise UsageError("--bilstm applies only with --mode=fine_tune: the "
                                 "feature_based mode trains a BiLSTM of its own "
                                 "(--lstm_units) on the frozen features")
            if not model_files.init_checkpoint:
                raise UsageError("--mode=feature_based needs --init_checkpoint: the features "
                                 "come from a pretrained encoder that is never trained")
            token_features.check_feature_layers(feature_layers,
                                                model_files.config.num_hidden_layers)
            if not cache_dir:
                raise ValueError("--mode=feature_based needs a folder for its feature cache")
        self.data_dir = data_dir
        self.model_files = model_files
        self.max_seq_length = max_seq_length
        self.do_lower_case = do_lower_case
        self.mode = mode
        self.doc_stride = doc_stride
        self.feature_layers = feature_layers
        self.lstm_units = lstm_units
        self.cache_dir = cache_dir
        self.feature_batch_size = feature_batch_size
        self.bilstm_units = bilstm_units
        self.labels = conll_data.bio_labels()
        self.tokenizer = FullTokenizer(model_files.vocab_file, do_lower_case=do_lower_case)
        self._encoder = self._feature_function = None

    def record(self):
        record = {"task": self.name, "mode": self.mode, "labels": list(self.labels),
                  "max_seq_length": self.max_seq_length, "doc_stride": self.doc_stride,
                  "do_lower_case": self.do_lower_case}
        if self.mode == "feature_based":
            record.update(feature_layers=self.feature_layers, lstm_units=self.lstm_units)
        return record

    # -- data -------------------------------------------------------------------

    def training_data(self, train_split):
        return train_split.sentences

    def read_split(self, split):
        path = conll_data.split_file(self.data_dir, split)
        sentences = conll_data.read_conll(path, split)
        try:
            windows = tagging_features.tagging_windows(
                sentences, self.tokenizer, self.labels, self.max_seq_length, self.doc_stride)
        except tagging_features.WindowError as error:
            raise tagging_features.WindowError(f"{path}: {error}") from None
        columns = tagging_features.window_columns(windows, self.max_seq_length)
        return TaggingSplit(split, sentences, windows, columns)

    # -- model ------------------------------------------------------------------

    def build_model(self):
        config = self.model_files.config
        if self.mode == "fine_tune":
            return build_token_classifier(config, len(self.labels), self.bilstm_units)
        width = token_features.feature_width(config.hidden_size, self.feature_layers)
        return token_features.build_feature_tagger(width, len(self.labels), self.lstm_units,
                                    config.initializer_range)

    def objective(self):
        return tagging_objective()

    # -- inputs -----------------------------------------------------------------

    def dataset(self, examples, batch_size, is_training, input_context=None, seed=None):
        if self.mode == "fine_tune":
            return batched_columns(examples.columns, len(examples), batch_size, is_training,
                                   seed, input_context)
        return token_features.feature_dataset(self.features(examples), examples.columns,
                                              batch_size, is_training, seed, input_context)

    def encoder(self):
        """The frozen pretrained encoder of the feature-based mode (built once)."""
        if self._encoder is None:
            self._encoder = BertEncoder(self.model_files.config)
            initialize_from_checkpoint(self._encoder, self.model_files.init_checkpoint)
        return self._encoder

    def features(self, split):
        """The split's frozen-encoder features, from the cache or computed into it."""
        if split.features is None:
            os.makedirs(self.cache_dir, exist_ok=True)
            path = os.path.join(self.cache_dir, f"{split.name}_{self.feature_layers}.npy")
            key = token_features.fingerprint(self.model_files.init_checkpoint,
                                             self.feature_layers, split.columns,
                                             self.model_files.config)
            split.features = token_features.cached_features(
                path, self.feature_function, split.columns, self.feature_batch_size, key)
        return split.features

    def feature_function(self):
        """The frozen encoder's feature pass, built once for every split."""
        if self._feature_function is None:
            self._feature_function = token_features.feature_function(
                token_features.feature_extractor(self.encoder(), self.feature_layers))
        return self._feature_function

    # -- outputs ----------------------------------------------------------------

    def predicted_tags(self, outputs, split):
        return tagging_features.predicted_tags(split.windows, outputs, split.sentence_lengths,
                                               self.labels)

    def eval_results(self, outputs, examples):
        return self._results(outputs, examples, self.predicted_tags(outputs, examples))

    def _results(self, outputs, examples, tags):
        """`eval_results` of the split's word tags `tags` (`predicted_tags` of `outputs`)."""
        columns = examples.columns
        weights = columns[WEIGHTS_KEY]
        loss = float(np.sum(np.asarray(cross_entropy(outputs, columns[LABEL_KEY])) * weights)
                     / max(float(weights.sum()), 1.0))
        scores = entity_scores([s.tags for s in examples.sentences], tags)
        return {"eval_loss": loss,
                **{f"eval_{name}": value for name, value in scores.as_dict().items()}}

    def evaluation(self, context, examples):
        """The dev results, and `dev_predictions.txt` to write with eval_results.txt."""
        outputs = context.outputs(self, examples, context.options.eval_batch_size, "evaluating")
        tags = self.predicted_tags(outputs, examples)
        return (self._results(outputs, examples, tags),
                {DEV_PREDICTIONS: self.tags_text(examples, tags)})

    def tags_text(self, split, tags):
        """`word gold predicted` lines of the split's sentences (what conlleval reads)."""
        return "".join(conll_data.prediction_lines(split.sentences, tags))

    def write_predictions(self, outputs, examples, output_dir):
        """`test_predictions.txt` (for conlleval) and `test_results.txt` (our entity scores
        of it), replaced together (`atomic_files.write_texts`)."""
        tags = self.predicted_tags(outputs, examples)
        results = self._results(outputs, examples, tags)
        write_texts({
            os.path.join(output_dir, TEST_PREDICTIONS): self.tags_text(examples, tags),
            os.path.join(output_dir, TEST_RESULTS): eval_results_text(
                {name.replace("eval_", "test_", 1): value for name, value in results.items()})})

    output_files = (DEV_PREDICTIONS, TEST_PREDICTIONS, TEST_RESULTS)

    @property
    def serving_kind(self):
        """"ner" (text -> entities, `bert_tf.serving`) for fine-tuned models; the
        feature-based BiLSTM tagger has no SavedModel export."""
        return "ner" if self.mode == "fine_tune" else None

    def serving_options(self):
        return {"vocab_file": self.model_files.vocab_file, "labels": list(self.labels),
                "max_seq_length": self.max_seq_length, "do_lower_case": self.do_lower_case}

    def export(self, model, output_dir):
        """The original release folder plus `labels.txt`; feature-based: encoder + tagger."""
        if self.mode == "feature_based":
            encoder = self.encoder()
            selected = token_features.select_layers(encoder(encoder.input), self.feature_layers)
            tagger = model.get_layer("bilstm_tagger")
            model = keras.Model(encoder.input, tagger(selected, encoder.input["input_mask"]))
        export_original(model, self.model_files.config, self.model_files.vocab_file, output_dir,
                        labels=self.labels)
