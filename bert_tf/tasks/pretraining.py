"""Pretraining (masked LM + next sentence) as a task like the others: `run_pretraining.py`.

The examples of a split are its input files: TFRecords written by
`create_pretraining_data.py` (checked whole and of the right lengths before
training starts), or raw text with dynamic masking. The model is
`BertPretrainer`, the objective the original's losses summed over the whole
global batch, the run length `num_train_steps` (not epochs), and evaluation
the mean loss and accuracies over at most `max_eval_steps` batches, as the
original's `eval_results.txt` reports them. The trained model is exported as
an original release folder.
"""

import dataclasses
import functools

from bert_tf.checkpoints import export_original
from bert_tf.config import ConfigError
from bert_tf.config_uses import as_causal, require_bidirectional
from bert_tf.data import readers
from bert_tf.data.dynamic_masking import DynamicPretrainingData
from bert_tf.data.input_files import expand_input_patterns
from bert_tf.data.record_files import count_framed_records
from bert_tf.errors import UsageError
from bert_tf.file_digests import sampled_sha256
from bert_tf.modeling.pretrainer import BertPretrainer
from bert_tf.tasks.pretraining_inputs import pretraining_dataset_fn
from bert_tf.tasks.pretraining_objective import pretraining_objective
from bert_tf.tasks.task import Task
from bert_tf.training.trainer import NoEvaluationBatchError

_INPUT_FLAGS = {"train": "input_file", "dev": "eval_input_file"}


class PretrainingTask(Task):
    """The `Task` of run_pretraining.py.

    Args:
        model_files: the resolved `ModelFiles` (its vocabulary is copied into
            the export; dynamic masking tokenizes with it).
        input_file: comma-separated globs of the training inputs.
        eval_input_file: the evaluation inputs (default: `input_file`).
        max_seq_length, max_predictions_per_seq: what the records hold.
        nsp: train the next-sentence head (False: the paper's "No NSP").
        causal: the left-to-right ablation ("LTR & No NSP"); its config, and so
            the exported `bert_config.json`, is marked `"causal": true`. A model
            so marked is refused without it (it would be trained both ways).
        dynamic_masking: `PretrainingDataOptions` to pair and mask raw text
            while training (tokenized with the model's vocabulary), or None.
        do_lower_case: the casing of the text (recorded in a SavedModel export).
    """

    name = "pretraining"
    split_unit = "input files"

    def __init__(self, model_files, input_file, eval_input_file=None, max_seq_length=128,
                 max_predictions_per_seq=20, nsp=True, causal=False, dynamic_masking=None,
                 do_lower_case=True):
        # The original's records, and dynamic masking's examples, are always A and B sentences.
        model_files.require_pairs(f"pretraining (--input_file={input_file}: sentences A and "
                                  "B of every example)")
        if causal:  # the exported bert_config.json says so: its users attend left to right
            model_files = dataclasses.replace(model_files, config=as_causal(model_files.config))
        else:
            try:
                require_bidirectional(model_files.config,
                                      model_files.config_source or "the model's config",
                                      "which pretraining without --causal would train with "
                                      "attention both ways (pass --causal to go on left to "
                                      "right)")
            except ConfigError as error:
                raise UsageError(str(error)) from None
        self.model_files = model_files
        self.inputs = {"train": input_file, "dev": eval_input_file or input_file}
        self.max_seq_length = max_seq_length
        self.max_predictions_per_seq = max_predictions_per_seq
        self.nsp = nsp and not causal
        self.causal = causal
        self.dynamic_masking = dynamic_masking
        self.do_lower_case = do_lower_case
        self._matched = {}

    def record(self):
        record = {"task": self.name, "nsp": self.nsp, "causal": self.causal,
                  "max_seq_length": self.max_seq_length,
                  "max_predictions_per_seq": self.max_predictions_per_seq,
                  "dynamic_masking": self.dynamic_masking is not None}
        if self.dynamic_masking is not None:  # what the text's examples are made with
            record["masking"] = {name: getattr(self.dynamic_masking, name) for name in (
                "do_lower_case", "masked_lm_prob", "short_seq_prob", "do_whole_word_mask")}
        return record

    def training_data(self, train_split):
        """Each input file's `sampled_sha256`: a resumed run may be given more files, not
        other ones (another corpus, or a file written over)."""
        return self.compared_examples(train_split)

    training_data_may_grow = True
    predicts = False
    evaluates_a_sample = True

    def compared_examples(self, examples):
        """Each input file's `sampled_sha256`: the same records at another path on another
        host are the same examples; other records at the same path are not."""
        return [sampled_sha256(path) for path in examples]

    def input_files(self):
        """The files `--input_file` and `--eval_input_file` match (none where a glob fails:
        `read_split` names that pattern)."""
        files = {}
        for split, flag in _INPUT_FLAGS.items():
            try:
                files[flag] = self._files_of(split)
            except ValueError:
                continue
        return files

    def _files_of(self, split):
        """The files the split's globs match, listed once (a `gs://` listing is slow)."""
        if split not in self._matched:
            self._matched[split] = expand_input_patterns(self.inputs[split])
        return self._matched[split]

    def read_split(self, split):
        """The split's input files, each checked before training starts."""
        flag = _INPUT_FLAGS.get(split)
        if flag is None:
            raise UsageError(f"pretraining has no {split} split (use --do_train / --do_eval)")
        try:
            files = self._files_of(split)
        except ValueError as error:
            raise UsageError(f"--{flag}: {error}") from None
        if self.dynamic_masking is None:
            for path in files:
                if "://" not in path:
                    count_framed_records(path)
                readers.check_record_lengths(path, self.max_seq_length,
                                             self.max_predictions_per_seq)
        # Training repeats its input: from one without an example it would wait forever.
        if next(iter(self.dataset(files, 1, is_training=False)), None) is None:
            nothing = ("no sentence pair (blank, or no text the vocabulary tokenizes)"
                       if self.dynamic_masking is not None else "no records")
            raise ValueError(f"--{flag}: {', '.join(files)}: {nothing}")
        return files

    def train_steps(self, train_examples, options):
        if not options.num_train_steps:
            raise UsageError("pretraining needs --num_train_steps")
        return options.num_train_steps

    def warmup_steps(self, train_steps, options):
        return options.num_warmup_steps or 0

    def build_model(self):
        return BertPretrainer(self.model_files.config, nsp=self.nsp, causal=self.causal)

    def objective(self):
        return pretraining_objective(self.nsp, self.causal)

    def dataset(self, examples, batch_size, is_training, input_context=None, seed=None):
        dataset_fn = pretraining_dataset_fn(
            ",".join(examples), self.max_seq_length, self.max_predictions_per_seq, batch_size,
            is_training, causal=self.causal, seed=seed,
            dynamic_masking=self._text_pipeline if self.dynamic_masking is not None else None)
        return dataset_fn(input_context)

    @functools.cached_property
    def _text_pipeline(self):
        """Dynamic masking's pipeline, built once: each split's check, training and
        evaluation reuse its traced functions (seconds each to trace)."""
        return DynamicPretrainingData(self.model_files.vocab_file, self.dynamic_masking)

    def evaluate(self, context, examples):
        options = context.options
        try:
            return context.trainer.evaluate(
                lambda input_context: self.dataset(examples, options.eval_batch_size, False,
                                                   input_context),
                options.max_eval_steps)
        except NoEvaluationBatchError:  # its batches are whole, as the original's
            raise UsageError(f"--eval_batch_size={options.eval_batch_size}: "
                             f"--{_INPUT_FLAGS['dev']}={','.join(examples)} holds fewer examples "
                             "than one batch (pretraining evaluates whole batches); give a "
                             "smaller --eval_batch_size") from None

    serving_kind = "masked_lm"

    def serving_options(self):
        if self.causal:
            raise UsageError("--export_dir: a left-to-right (--causal) model predicts the next "
                             "token, not the [MASK]s a masked-LM SavedModel is asked for")
        if not self.model_files.vocab_file:
            raise UsageError("--export_dir: a masked-LM SavedModel needs --vocab_file")
        return {"vocab_file": self.model_files.vocab_file,
                "max_seq_length": self.max_seq_length,
                "do_lower_case": self.do_lower_case}

    def export(self, model, output_dir):
        """`bert_model.ckpt` (MLM and NSP heads included), `bert_config.json`, `vocab.txt`."""
        export_original(model, self.model_files.config, self.model_files.vocab_file, output_dir)
