"""SQuAD 1.1 / 2.0 span prediction: `run_squad.py`.

The model is the encoder's sequence output through one dense layer of two
units (`cls/squad/output_weights` / `output_bias` in the original's
checkpoints): a start and an end logit per token; with `bilstm_units`
(`--bilstm`, the paper's "+ BiLSTM"), the layer reads a BiLSTM over the
sequence output. The loss is the mean of the start and end cross-entropies
over the windows, as in the original.

Questions are read and cut into windows once per split (`SquadSplit`); the
number of training steps counts questions, not windows, as the original
does. Evaluation answers the dev questions (`squad_postprocessing`) and
scores them with the official rules; prediction writes predictions.json,
nbest_predictions.json and (SQuAD 2.0) null_odds.json.
"""

import dataclasses

from keras import ops

from bert_tf.checkpoints import export_original
from bert_tf.errors import UsageError
from bert_tf.modeling import build_span_model
from bert_tf.serving.span_options import SpanOptions
from bert_tf.tasks import squad_data, squad_features, squad_postprocessing, squad_scoring
from bert_tf.tasks.batching import batched_columns
from bert_tf.tasks.losses import cross_entropy
from bert_tf.tasks.task import Task
from bert_tf.tokenization import FullTokenizer
from bert_tf.training.objective import LossWeights, Objective


def span_objective():
    """Per window: (start cross-entropy + end cross-entropy) / 2, averaged over windows.

    >>> import numpy as np
    >>> from bert_tf.training.objective import batch_loss
    >>> uniform = {"start_logits": np.zeros((1, 4), "float32"),
    ...            "end_logits": np.zeros((1, 4), "float32")}
    >>> total, _ = batch_loss(span_objective(), uniform,
    ...                       {"start_positions": np.array([1]), "end_positions": np.array([2])})
    >>> round(float(total), 5)  # log 4
    1.38629
    """
    def loss_weights(batch):
        return {"loss": LossWeights(ops.ones_like(batch["start_positions"], "float32"))}

    def losses(outputs, batch):
        return {"loss": (cross_entropy(outputs["start_logits"], batch["start_positions"])
                         + cross_entropy(outputs["end_logits"], batch["end_positions"])) / 2}

    return Objective(loss_weights, losses, lambda outputs, batch: {}, ())


def _check_questions(where, examples, is_training):
    """Raises ValueError naming `where` (flag=file) when the file gave no question to use."""
    if examples:
        return
    if is_training:
        raise ValueError(f"{where}: no questions to train on (none in the file, or every "
                         "answer was skipped as not found in its context's words)")
    raise ValueError(f"{where}: no questions to answer")


@dataclasses.dataclass(frozen=True)
class SquadSplit:
    """A split's questions and their windows; its length is the number of questions."""

    examples: list
    features: list

    def __len__(self):
        return len(self.examples)


@dataclasses.dataclass(frozen=True)
class SquadOptions(SpanOptions):
    """The original's SQuAD flags: the span options a SavedModel records too, the
    sequence length, and the logging of answer alignments."""

    max_seq_length: int = 384
    verbose_logging: bool = False


class SquadTask(Task):
    """The `Task` of run_squad.py.

    Args:
        model_files: the resolved `ModelFiles` (config, vocabulary).
        train_file: SQuAD JSON for training (plain or .gz).
        predict_file: SQuAD JSON to answer (and, with answers, to score).
        options: `SquadOptions`.
        do_lower_case: lower-case and strip accents (uncased models).
        bilstm_units: see `Task.bilstm_units`.
    """

    name = "squad"
    reads_pooled_output = False
    split_unit = "questions"

    def __init__(self, model_files, train_file=None, predict_file=None,
                 options=SquadOptions(), do_lower_case=True, bilstm_units=0):
        model_files.require_pairs(f"task {self.name} (a question and its context)")
        self.model_files = model_files
        self.train_file = train_file
        self.predict_file = predict_file
        self.options = options
        self.do_lower_case = do_lower_case
        self.bilstm_units = bilstm_units
        self.tokenizer = FullTokenizer(model_files.vocab_file, do_lower_case=do_lower_case)
        self._read = {}  # (path, is_training) -> SquadSplit

    def record(self):
        return {"task": self.name, "do_lower_case": self.do_lower_case,
                **{key: getattr(self.options, key) for key in (
                    "max_seq_length", "doc_stride", "max_query_length",
                    "version_2_with_negative")}}

    def training_data(self, train_split):
        return train_split.examples

    def read_split(self, split):
        """Questions and windows of the train file ("train") or the predict file (others).

        "dev" and "test" both read `--predict_file`: they are one `SquadSplit`,
        so a run with --do_eval and --do_predict answers it once.

        Raises:
            UsageError: the split's file is not given.
            ValueError: naming the flag and file, for a file without a question
                to use or whose contexts give no window, and for "dev" (scored
                by --do_eval) a question without answers to score against
                (`squad_scoring.check_gold`); checked here, before any model
                is built, not left to the input pipeline or the scoring.
        """
        is_training = split == "train"
        path = self.train_file if is_training else self.predict_file
        if not path:
            raise UsageError("--train_file is required with --do_train" if is_training
                             else "--predict_file is required with --do_eval / --do_predict")
        if (path, is_training) not in self._read:
            self._read[path, is_training] = self._read_file(path, is_training)
        squad_split = self._read[path, is_training]
        if split == "dev":
            squad_scoring.check_gold(f"--predict_file={path} (scored by --do_eval)",
                                     [(e.qas_id, e.gold_answers) for e in squad_split.examples],
                                     self.options.version_2_with_negative)
        return squad_split

    def _read_file(self, path, is_training):
        flag = f"--{'train' if is_training else 'predict'}_file="
        where = f"{flag}{path}"
        try:
            examples = squad_data.read_squad_examples(path, is_training,
                                                      self.options.version_2_with_negative)
        except squad_data.SquadFormatError as error:  # "PATH: ...", named as the flag gave it
            raise squad_data.SquadFormatError(f"{flag}{error}") from None
        _check_questions(where, examples, is_training)
        features = squad_features.convert_examples_to_features(
            examples, self.tokenizer, self.options.max_seq_length, self.options.doc_stride,
            self.options.max_query_length, is_training)
        if not features:
            raise ValueError(f"{where}: no {'training ' if is_training else ''}windows "
                             "(every question's context is empty after tokenization)")
        return SquadSplit(examples, features)

    def build_model(self):
        return build_span_model(self.model_files.config, self.bilstm_units)

    def objective(self):
        return span_objective()

    def dataset(self, split, batch_size, is_training, input_context=None, seed=None):
        columns = squad_features.feature_columns(split.features, self.options.max_seq_length,
                                                 is_training)
        del columns["unique_ids"]
        return batched_columns(columns, len(split.features), batch_size, is_training, seed,
                               input_context)

    def answers(self, outputs, split):
        """(predictions, n-best lists, null odds) of a split from the model's outputs."""
        return squad_postprocessing.predict_answers(
            split.examples, split.features, outputs["start_logits"], outputs["end_logits"],
            self.options.n_best_size, self.options.max_answer_length, self.do_lower_case,
            self.options.version_2_with_negative, self.options.null_score_diff_threshold,
            self.options.verbose_logging)

    def eval_results(self, outputs, split):
        """The official scores (v1.1: exact_match, f1; v2.0: exact, f1, HasAns_*, ...)."""
        predictions, _, null_odds = self.answers(outputs, split)
        questions = [(e.qas_id, list(e.gold_answers)) for e in split.examples]
        if self.options.version_2_with_negative:
            return squad_scoring.score_v2(questions, predictions, null_odds)
        return squad_scoring.score_v1(questions, predictions)

    def input_files(self):
        return {flag: [path] for flag, path in (("train_file", self.train_file),
                                                ("predict_file", self.predict_file)) if path}

    def write_predictions(self, outputs, split, output_dir):
        squad_postprocessing.write_prediction_files(output_dir, *self.answers(outputs, split))

    output_files = squad_postprocessing.PREDICTION_FILES
    evaluates_its_predictions = True

    serving_kind = "span_qa"

    def serving_options(self):
        return {"vocab_file": self.model_files.vocab_file,
                "max_seq_length": self.options.max_seq_length,
                "do_lower_case": self.do_lower_case,
                "span_options": self.options.span_values()}

    def export(self, model, output_dir):
        export_original(model, self.model_files.config, self.model_files.vocab_file, output_dir)
