"""The task contract: what a task family gives the one runner flow.

A task family (pretraining, classification, multiple choice, span QA,
token tagging) is a subclass of `Task`. It knows its data, its model, its
objective, its inputs, its evaluation and its outputs; `runner.run` does
everything else the same way for all of them (checks, output folder,
strategy, resume or init, train, export, evaluate, predict, errors).

A new task family in four steps:

1. read and validate a split (`read_split`): a sequence of examples;
2. build the model (`build_model`) and its `Objective` (`objective`);
3. turn examples into batches of feature dicts (`dataset`);
4. score and write what the model predicts (`eval_results`,
   `write_predictions`) and export it (`export`).

Example (a toy task: is the token count even? on a two-layer encoder):

>>> import tempfile
>>> import keras, numpy as np, tensorflow as tf
>>> from bert_tf.config import BertConfig
>>> from bert_tf.modeling import BertEncoder, ClassificationHead
>>> from bert_tf.tasks import losses
>>> from bert_tf.tasks.batching import LABEL_KEY, batched_columns
>>> from bert_tf.tasks.run_options import RunOptions
>>> from bert_tf.tasks.runner import run
>>> class EvenLength(Task):
...     name = "even_length"
...     config = BertConfig(vocab_size=20, hidden_size=8, num_hidden_layers=1,
...                         num_attention_heads=2, intermediate_size=16,
...                         max_position_embeddings=8)
...     def read_split(self, split):
...         rng = np.random.default_rng(0 if split == "train" else 1)
...         return [int(n) for n in rng.integers(1, 8, 32)]
...     def build_model(self):
...         encoder = BertEncoder(self.config)
...         logits = ClassificationHead(2)(encoder(encoder.input)["pooled_output"])
...         return keras.Model(encoder.input, logits)
...     def objective(self):
...         return losses.classification_objective()
...     def dataset(self, examples, batch_size, is_training, input_context=None, seed=None):
...         mask = np.array([[1] * n + [0] * (8 - n) for n in examples], "int32")
...         columns = {"input_ids": mask * 5, "input_mask": mask,
...                    "segment_ids": np.zeros_like(mask),
...                    LABEL_KEY: np.array([n % 2 for n in examples], "int32")}
...         return batched_columns(columns, len(examples), batch_size, is_training, seed,
...                                input_context)
...     def eval_results(self, outputs, examples):
...         correct = outputs.argmax(-1) == np.array([n % 2 for n in examples])
...         return {"eval_accuracy": float(correct.mean())}
>>> options = RunOptions(output_dir=tempfile.mkdtemp(), do_train=True, do_eval=True,
...                      train_batch_size=8, eval_batch_size=8, num_train_epochs=1.0)
>>> results = run(EvenLength(), options)
>>> results["global_step"], 0.0 <= results["eval_accuracy"] <= 1.0
(4, True)
"""

import abc

from absl import logging

from bert_tf import serving
from bert_tf.errors import UsageError
from bert_tf.tasks import prediction


class Task(abc.ABC):
    """One task family's part of a run (see the module docstring).

    Attributes:
        name: the task's name in logs, messages and metric names.
        reads_pooled_output: whether the model's outputs depend on the encoder's
            pooler (False for tasks on tokens: a checkpoint without a pooler
            then still scores them).
        bilstm_units: units per direction of the randomly initialised BiLSTM
            a fine-tuning task puts between the encoder and its head (the
            paper's "+ BiLSTM", `modeling.bilstm.head_inputs`); 0: none.
            `run.json` records it with the model (`run_record`).
    """

    name = "task"
    reads_pooled_output = True
    bilstm_units = 0

    # -- data ---------------------------------------------------------------

    @abc.abstractmethod
    def read_split(self, split):
        """Reads and validates one split ("train", "dev" or "test") before any training.

        Returns:
            A sequence of examples (whatever `dataset` and the writers take).

        Raises:
            ValueError or OSError naming the file and line of bad data.
        """

    def input_files(self):
        """`{flag: [paths]}` of the data files whose names the user chooses (default: none).

        The runner refuses an `output_dir` where one of them would be
        written over (`output_files`, or a file of the runner's own).
        """
        return {}

    def train_steps(self, train_examples, options):
        """The optimizer steps of the run: epochs over the training examples.

        The original's count: `int(examples / batch_size * epochs)` (at least 1),
        or `options.num_train_steps` when it is set. Where that is more
        examples than the epochs ask for (a batch larger than the data, or
        a fraction of an epoch below one batch), the log says so: the
        repeated data fills the steps.
        """
        if options.num_train_steps:
            return options.num_train_steps
        steps = max(1, int(len(train_examples) / options.train_batch_size
                           * options.num_train_epochs))
        if not len(train_examples):  # an evaluation alone: no training split
            return steps
        epochs = steps * options.train_batch_size / len(train_examples)
        if epochs > 1.5 * options.num_train_epochs:
            logging.warning("%d step(s) of batch %d over %d training %s: %.2f epochs, not "
                            "--num_train_epochs=%g; a smaller --train_batch_size trains as "
                            "asked", steps, options.train_batch_size, len(train_examples),
                            self.split_unit, epochs, options.num_train_epochs)
        return steps

    def record(self):
        """What defines this task's training run, for `run.json` (see `run_record`)."""
        return {"task": self.name}

    def training_data(self, train_split):
        """The training examples as `run.json` fingerprints them (their `repr`), or None.

        By default the split itself, a list of examples; a family whose split
        holds more returns its examples. Where `training_data_may_grow`, a
        list of what each part holds in brief, which `run.json` keeps as it is.
        """
        return train_split

    # Whether a resumed run may train on more data than the recorded one (pretraining's
    # files): its record keeps `training_data`'s list, and a resume needs each of it.
    training_data_may_grow = False

    def compared_examples(self, examples):
        """A dev or test split as the workers of a multi-worker run compare it (its `repr`
        digested, `worker_settings`): by default the split itself; a family whose examples are
        files too large to read whole (pretraining's) returns what they hold in brief."""
        return examples

    def warmup_steps(self, train_steps, options):
        """Linear warmup steps: `options.num_warmup_steps`, else a proportion of the run."""
        if options.num_warmup_steps is not None:
            return options.num_warmup_steps
        return int(train_steps * options.warmup_proportion)

    # -- model ----------------------------------------------------------------

    @abc.abstractmethod
    def build_model(self):
        """The Keras model; called under the strategy's scope and dtype policy."""

    @abc.abstractmethod
    def objective(self):
        """The task's `bert_tf.training.objective.Objective` (losses, weights, metrics)."""

    # -- inputs ---------------------------------------------------------------

    @abc.abstractmethod
    def dataset(self, examples, batch_size, is_training, input_context=None, seed=None):
        """A `tf.data.Dataset` of feature dicts (model inputs and labels).

        Training (`is_training`): sharded by `input_context`, shuffled with
        `seed`, repeated, whole batches of `batch_size` (the global batch of one
        micro-batch). Otherwise one ordered pass over every example.
        """

    # -- outputs --------------------------------------------------------------

    def evaluate(self, context, examples):
        """Evaluation results of the dev examples; by default from their predictions.

        Args:
            context: the run's `RunContext` (options, trainer, `predict`).
            examples: what `read_split("dev")` returned.
        """
        return self.eval_results(
            context.outputs(self, examples, context.options.eval_batch_size, "evaluating"),
            examples)

    def evaluation(self, context, examples):
        """`(results, files)`: `evaluate`'s results, and `{file name: text}` to write with them.

        The runner writes `files` into `output_dir` together with
        `eval_results.txt`, all replaced or none (`atomic_files.write_texts`):
        NER's `dev_predictions.txt`, whose scores eval_results.txt holds.
        By default no file.
        """
        return self.evaluate(context, examples), {}

    def eval_results(self, outputs, examples):
        """`{"eval_<metric>": value}` from the model's outputs on the examples."""
        raise NotImplementedError(f"task {self.name} does not evaluate")

    def predict(self, context, examples):
        """The model's outputs on the examples (a numpy nest, in example order)."""
        return context.outputs(self, examples, context.options.predict_batch_size,
                               "predicting")

    def write_predictions(self, outputs, examples, output_dir):
        """Writes the prediction files of the test examples into `output_dir`.

        Files read together are written as one set (`atomic_files.write_texts`).
        """
        raise NotImplementedError(f"task {self.name} does not predict")

    # Whether the task has a prediction phase (`--do_predict`; pretraining has none).
    predicts = True

    # Whether evaluation reads at most `max_eval_steps` batches (pretraining's evaluation files
    # may be of any size); the other tasks score their whole dev set, and refuse the option.
    evaluates_a_sample = False

    # What `len()` of a split counts, for the log.
    split_unit = "examples"

    # The names of the files the task writes into `output_dir` (predictions, scores).
    output_files = ()

    # Whether --do_eval scores the very examples --do_predict writes predictions of
    # (SQuAD's --predict_file): a prediction run without --do_eval then removes the
    # eval_results.txt of an earlier run, which scored other predictions.
    evaluates_its_predictions = False

    def export(self, model, output_dir):
        """Writes the trained model for others to use (by default nothing)."""

    # The `bert_tf.serving` kind of this family's SavedModel (`--export_dir`), or None.
    serving_kind = None

    def serving_options(self):
        """What the SavedModel export needs besides the model (vocabulary, casing, ...)."""
        return {}

    def export_savedmodel(self, model, export_dir):
        """Writes the self-contained SavedModel that answers raw text (`--export_dir`)."""
        if self.serving_kind is None:
            raise UsageError(f"--export_dir: task {self.name} has no SavedModel export")
        return serving.export(self.serving_kind, model, export_dir, **self.serving_options())


class RunContext:
    """What a task sees of a run in progress: its options, trainer and a predictor."""

    def __init__(self, options, trainer):
        self.options = options
        self.trainer = trainer
        self._outputs = {}  # id(examples) -> (examples, outputs)

    def predict(self, dataset, work="predicting"):
        """The model's outputs over a finite dataset, as numpy (any output structure);
        `work` names the pass in its progress lines."""
        return prediction.predict(self.trainer.model, dataset, self.trainer.eval_jit_compile,
                                  work)

    def outputs(self, task, examples, batch_size, work):
        """`task`'s model outputs on `examples`, computed once per run.

        A split that is both evaluated and predicted (SQuAD's `--predict_file`
        with --do_eval and --do_predict) is run through the model once: on
        BERT-Base on a CPU that pass takes most of an hour. `work` ("evaluating"
        or "predicting") names the pass in its progress lines.
        """
        if id(examples) not in self._outputs:  # the examples are kept, so ids stay unique
            dataset = task.dataset(examples, batch_size, False)
            self._outputs[id(examples)] = (examples, self.predict(dataset, work))
        return self._outputs[id(examples)][1]

