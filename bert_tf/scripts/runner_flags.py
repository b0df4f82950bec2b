"""The flags the training runners share, with the original's names and defaults.

`define_model_flags` (config, vocabulary, checkpoint, casing, length),
`define_phase_flags` (data, phases, batch sizes, learning rate, epochs),
`define_runtime_flags` (where and how fast: the original's TPU flags plus the
strategy, mixed precision, XLA, accumulation, the optimizer, `--export_dir`)
and the fine-tuning runners' `define_bilstm_flags` (the paper's "+ BiLSTM")
are defined by each script at import. `run_options`, `model_files` and
`bilstm_units` turn parsed flags into the explicit values the runner flow
takes; nothing below the scripts reads `FLAGS`.
"""

import os

from absl import flags

from bert_tf.errors import UsageError
from bert_tf.tasks.model_files import resolve_model_files
from bert_tf.tasks.run_options import RunOptions
from bert_tf.training import distribution, precision
from bert_tf.training.optimization import OPTIMIZERS


def require_positive(name):
    """Registers a parse-time check that flag `name` is above 0."""
    flags.register_validator(name, lambda value: value is None or value > 0,
                             message=f"--{name} must be positive")


def define_model_flags(max_seq_length=128):
    """`bert_config_file`, `vocab_file`, `init_checkpoint`, `do_lower_case`, `max_seq_length`."""
    flags.DEFINE_string("bert_config_file", None, "bert_config.json of the pretrained model "
                        "(default: the one beside --init_checkpoint).")
    flags.DEFINE_string("vocab_file", None, "The vocabulary file the model was trained on "
                        "(default: vocab.txt beside --init_checkpoint).")
    flags.DEFINE_string("init_checkpoint", None, "Pretrained weights: an original BERT "
                        "checkpoint, a HuggingFace safetensors folder, or ours.")
    flags.DEFINE_bool("do_lower_case", True, "Lower-case the input (uncased models).")
    flags.DEFINE_integer("max_seq_length", max_seq_length, "Sequence length after WordPiece; "
                         "longer inputs are truncated, shorter ones padded.", lower_bound=3)


def define_phase_flags(learning_rate=5e-5, train_batch_size=32, data_dir=True):
    """The original fine-tuning runners' data, phase and hyper-parameter flags.

    `data_dir`: whether the runner reads a `--data_dir` (run_squad names its files instead).
    """
    if data_dir:
        flags.DEFINE_string("data_dir", None, "The input data dir.")
    flags.DEFINE_string("output_dir", None, "Where checkpoints, summaries and results go.")
    flags.DEFINE_bool("do_train", False, "Whether to run training.")
    flags.DEFINE_bool("do_eval", False, "Whether to run eval on the dev set.")
    flags.DEFINE_bool("do_predict", False, "Whether to run prediction on the test set.")
    flags.DEFINE_integer("train_batch_size", train_batch_size, "Total batch size for training.",
                         lower_bound=1)
    flags.DEFINE_integer("eval_batch_size", RunOptions.eval_batch_size,
                         "Total batch size for eval.", lower_bound=1)
    flags.DEFINE_integer("predict_batch_size", RunOptions.predict_batch_size,
                         "Total batch size for predict.", lower_bound=1)
    flags.DEFINE_float("learning_rate", learning_rate, "The initial learning rate for Adam.")
    require_positive("learning_rate")
    flags.DEFINE_float("num_train_epochs", RunOptions.num_train_epochs,
                       "Total number of training epochs.")
    require_positive("num_train_epochs")
    flags.DEFINE_float("warmup_proportion", RunOptions.warmup_proportion,
                       "Proportion of training for linear warmup.", lower_bound=0.0,
                       upper_bound=1.0)
    flags.DEFINE_integer("random_seed", RunOptions.random_seed,
                         "Seed of the training data shuffle.")


def define_runtime_flags():
    """Where and how fast: the original's TPU flags plus ours."""
    flags.DEFINE_integer("save_checkpoints_steps", RunOptions.save_checkpoints_steps,
                         "How often to save a checkpoint.", lower_bound=1)
    flags.DEFINE_integer("iterations_per_loop", RunOptions.steps_per_execution,
                         "Steps per device loop (the default of --steps_per_execution).",
                         lower_bound=1)
    flags.DEFINE_bool("use_tpu", False, "Run on a TPU (--distribution_strategy=tpu).")
    flags.DEFINE_string("tpu_name", None, "The Cloud TPU to use (same as --tpu).")
    flags.DEFINE_string("tpu_zone", None, "GCE zone of the Cloud TPU.")
    flags.DEFINE_string("gcp_project", None, "Project of the Cloud TPU.")
    flags.DEFINE_string("master", None, "TPU address (grpc://...), same as --tpu.")
    flags.DEFINE_integer("num_tpu_cores", 8, "Kept for the original's command lines; the TPU "
                         "strategy uses every core it finds.", lower_bound=1)
    flags.DEFINE_enum("distribution_strategy", None, list(distribution.STRATEGIES),
                      "Default: tpu with --use_tpu, else one_device.")
    flags.DEFINE_integer("num_gpus", 0, "GPUs for --distribution_strategy=mirrored (0: all).",
                         lower_bound=0)
    flags.DEFINE_string("tpu", None, "Cloud TPU name, or its address: grpc://HOST:PORT "
                        "or HOST:PORT.")
    flags.DEFINE_integer("worker_wait_seconds", RunOptions.worker_wait_seconds,
                         "With --distribution_strategy=multi_worker_mirrored: how long a "
                         "worker waits for the others of TF_CONFIG to start (0: for ever).",
                         lower_bound=0)
    flags.DEFINE_enum("optimizer", "adamw", list(OPTIMIZERS), "adamw: the original's; lamb: "
                      "layer-wise adaptive, for large batches.")
    flags.DEFINE_integer("gradient_accumulation_steps", 1, "Micro-batches per optimizer step.",
                         lower_bound=1)
    flags.DEFINE_enum("mixed_precision", "float32", list(precision.POLICIES), "Compute dtype "
                      "policy; mixed_float16 adds dynamic loss scaling.")
    flags.DEFINE_bool("jit_compile", None, "XLA-compile each replica's passes (and, on one "
                      "GPU, the optimizer update). Default: the faster by measurement: "
                      "everything on a GPU or TPU; on a CPU, evaluation and prediction for "
                      "hidden size <= 256 (not in mixed_bfloat16, nor on CPUs with AMX: "
                      "TensorFlow's fused matmuls are faster there), training never.")
    flags.DEFINE_integer("steps_per_execution", None, "The most training steps per "
                         "tf.function call and progress line (default: --iterations_per_loop); "
                         "a call also ends after about 10 s.", lower_bound=1)
    flags.DEFINE_string("export_dir", None, "Also write a self-contained SavedModel here "
                        "at the end of training.")


def define_bilstm_flags():
    """`--bilstm` and `--bilstm_units`: a BiLSTM between the encoder and the task's head."""
    flags.DEFINE_bool("bilstm", False, "Put a randomly initialised bidirectional LSTM over the "
                      "encoder's sequence output, before the task's head (the paper's "
                      "\"+ BiLSTM\" row, for its left-to-right model). Sentence-level heads "
                      "then read its final states, not the pooled [CLS] vector. Recorded "
                      "in run.json and saved with the model.")
    flags.DEFINE_integer("bilstm_units", None, "With --bilstm: units per LSTM direction "
                         "(default: half the encoder's hidden size, so the head reads "
                         "vectors as wide as without it).", lower_bound=1)


def bilstm_units(values, config):
    """`--bilstm`'s units per direction for a model of `config`; 0 without `--bilstm`.

    Raises:
        UsageError: `--bilstm_units` without `--bilstm`.
    """
    if not values.bilstm:
        if values.bilstm_units is not None:
            raise UsageError("--bilstm_units applies only with --bilstm")
        return 0
    return values.bilstm_units or max(1, config.hidden_size // 2)


def model_file_paths(values):
    """`(bert_config_file, vocab_file)` of parsed flags, either None where not given.

    Without `--bert_config_file` and `--init_checkpoint`, a run that finished
    in `--output_dir` gives its own `bert_config.json` and `vocab.txt`: rerun
    its command line with `--do_eval` or `--do_predict` alone to use the
    model it trained (the runner resumes from its last checkpoint).
    """
    config_file, vocab_file = values.bert_config_file, values.vocab_file
    finished = getattr(values, "output_dir", None)
    if not (config_file or values.init_checkpoint) and finished and os.path.exists(
            os.path.join(finished, "bert_config.json")):
        config_file = os.path.join(finished, "bert_config.json")
        beside = os.path.join(finished, "vocab.txt")
        vocab_file = vocab_file or (beside if os.path.exists(beside) else None)
    return config_file, vocab_file


def model_files(values, needs_vocab=True, do_lower_case=None):
    """The resolved and checked `ModelFiles` of parsed model flags (`model_file_paths`).

    `do_lower_case`: the casing, where not `--do_lower_case` (NER's default).
    """
    config_file, vocab_file = model_file_paths(values)
    return resolve_model_files(
        config_file, vocab_file, values.init_checkpoint,
        values.do_lower_case if do_lower_case is None else do_lower_case,
        values.max_seq_length, needs_vocab)


# Flags of `define_phase_flags` that run_pretraining.py does not define; without them
# `RunOptions`' defaults hold.
_PHASE_ONLY = ("do_predict", "predict_batch_size", "num_train_epochs", "warmup_proportion",
               "random_seed")


# Where the TPU is: read by the tpu strategy only.
_TPU_LOCATION = ("tpu", "tpu_name", "master", "tpu_zone", "gcp_project")


def _strategy(values):
    """`--distribution_strategy`'s value; a device flag the strategy would ignore is refused.

    A TPU address or a GPU count without the strategy that uses it would
    otherwise train on this machine's first device without a word. Empty
    values (the original's `--master=`) are let through.
    """
    strategy = values.distribution_strategy or ("tpu" if values.use_tpu else "one_device")
    if values.use_tpu and strategy != "tpu":
        raise UsageError(f"--use_tpu contradicts --distribution_strategy={strategy}")
    for name in _TPU_LOCATION:
        if strategy != "tpu" and values[name].value:
            raise UsageError(f"--{name} applies only with --use_tpu or "
                             f"--distribution_strategy=tpu (this run: {strategy})")
    if strategy != "mirrored" and values.num_gpus:
        raise UsageError(f"--num_gpus applies only with --distribution_strategy=mirrored "
                         f"(this run: {strategy})")
    if strategy != "multi_worker_mirrored" and values["worker_wait_seconds"].present:
        raise UsageError(f"--worker_wait_seconds applies only with --distribution_strategy="
                         f"multi_worker_mirrored (this run: {strategy})")
    return strategy


def run_options(values, **overrides):
    """`RunOptions` from parsed flags (`values`: absl's FLAGS); `overrides` win."""
    fields = dict(
        output_dir=values.output_dir, do_train=values.do_train, do_eval=values.do_eval,
        init_checkpoint=values.init_checkpoint,
        export_dir=values.export_dir, train_batch_size=values.train_batch_size,
        eval_batch_size=values.eval_batch_size, learning_rate=values.learning_rate,
        optimizer=values.optimizer, mixed_precision=values.mixed_precision,
        jit_compile=values.jit_compile,
        gradient_accumulation_steps=values.gradient_accumulation_steps,
        steps_per_execution=values.steps_per_execution or values.iterations_per_loop,
        save_checkpoints_steps=values.save_checkpoints_steps,
        distribution_strategy=_strategy(values),
        num_gpus=values.num_gpus, tpu=values.tpu or values.tpu_name or values.master,
        tpu_zone=values.tpu_zone, gcp_project=values.gcp_project,
        worker_wait_seconds=values.worker_wait_seconds)
    fields.update({name: values[name].value for name in _PHASE_ONLY if name in values})
    fields.update(overrides)
    return RunOptions(**fields)
