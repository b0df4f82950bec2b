"""The one runner flow every task family goes through.

`run(task, options)` does, the same way for pretraining, classification,
multiple choice, span QA and tagging:

1. check the options (no output may replace an input) and build the strategy;
2. read and validate every split the phases need, before any model is built,
   so bad data fails in seconds, naming its file and line; then create
   `output_dir` (also for eval or predict alone, as the original does) and
   lock it, so a second run on the same folder fails at once;
3. build the model and optimizer under the strategy (and dtype policy);
4. resume from the newest checkpoint in `output_dir`, after checking that the
   run recorded there was started with the same training options; or start
   from `init_checkpoint`;
5. train, then export (`task.export`) on the chief;
6. evaluate (`eval_results.txt`, with the files of `task.evaluation`) and
   predict (`task.write_predictions`); the files of each phase are replaced
   together (`atomic_files.write_texts`);
7. with `export_dir`, write the task's self-contained SavedModel (checked
   to exist before any work).

Nothing here reads absl flags: scripts build `RunOptions` from theirs, and
tests run whole runners in-process. See `bert_tf.tasks.task` for an example.
"""

import contextlib
import dataclasses
import os

import tensorflow as tf
from absl import logging

from bert_tf import serving
from bert_tf.atomic_files import prepare_folder_for, write_texts
from bert_tf.checkpoints import CHECKPOINT_BASENAME, checkpoint_folder
from bert_tf.errors import UsageError
from bert_tf.output_paths import check_outputs_apart
from bert_tf.tasks.output_dir_checks import check_run_record
from bert_tf.tasks.run_record import RECORD_FILE, recorded_run, run_record
from bert_tf.tasks.scored_model_checks import (check_scored_weights, scored_step,
                                               warn_if_init_checkpoint_ignored)
from bert_tf.tasks.task import RunContext
from bert_tf.tasks.worker_settings import worker_settings
from bert_tf.training import distribution, precision
from bert_tf.training.compilation import encoder_hidden_size, use_xla
from bert_tf.training.init_checkpoint import initialize_from_checkpoint
from bert_tf.training.optimization import create_optimizer
from bert_tf.training.resume import newest_checkpoint
from bert_tf.training.run_dir import OutputDirLock
from bert_tf.training.summaries import eval_results_text
from bert_tf.training.trainer import Trainer
from bert_tf.training.worker_agreement import WorkerAgreement

EVAL_RESULTS_FILE = "eval_results.txt"  # the original's name


def read_splits(task, options):
    """`{split: examples}` of every split the phases need; logs their sizes."""
    splits = {}
    for split in options.requested_splits():
        splits[split] = task.read_split(split)
        logging.info("%s %s: %d %s", task.name, split, len(splits[split]), task.split_unit)
    return splits


def build_trainer(task, options, strategy, train_steps):
    """Builds the task's model and a `Trainer`, resumed from `output_dir` or initialised."""
    slow_precision = precision.bfloat16_emulation_note(options.mixed_precision,
                                                       strategy.extended.worker_devices)
    if slow_precision:
        logging.warning(slow_precision)
    with precision.dtype_policy(options.mixed_precision), strategy.scope():
        model = task.build_model()
        optimizer = create_optimizer(
            options.learning_rate, train_steps, _warmup_steps(task, options, train_steps),
            options.optimizer, loss_scale=precision.needs_loss_scaling(options.mixed_precision))
    trainer = Trainer(
        model, optimizer, task.objective(), strategy, options.output_dir,
        global_batch_size=options.train_batch_size,
        gradient_accumulation_steps=options.gradient_accumulation_steps,
        steps_per_execution=options.steps_per_execution,
        save_checkpoints_steps=options.save_checkpoints_steps,
        jit_compile=use_xla(options.jit_compile, encoder_hidden_size(model), training=True),
        eval_jit_compile=use_xla(options.jit_compile, encoder_hidden_size(model),
                                 training=False, compute_dtype=model.compute_dtype))
    if trainer.checkpoints.restore_latest() is None and options.init_checkpoint:
        loaded = initialize_from_checkpoint(model, options.init_checkpoint)
        if not options.do_train:
            check_scored_weights(task.name, options.init_checkpoint, loaded,
                                 task.reads_pooled_output)
    return trainer


def _warmup_steps(task, options, train_steps):
    """The run's warm-up steps; more than its training steps is refused before any work.

    A run that does not train builds the schedule without using it, so its
    warm-up is only held to the steps.
    """
    warmup = task.warmup_steps(train_steps, options)
    if not options.do_train:
        return min(warmup, train_steps)
    if warmup > train_steps:
        raise UsageError(f"--num_warmup_steps={warmup} is more than the run's {train_steps} "
                         "training steps; give fewer, or train longer")
    return warmup


def _check_outputs_apart_from_inputs(task, options):
    """Never writes over an input: the start weights, or a data file in `output_dir`."""
    if os.path.exists(options.output_dir) and not os.path.isdir(options.output_dir):
        raise UsageError(f"--output_dir={options.output_dir} is a file, not a folder")
    if options.do_train and options.init_checkpoint:
        start = os.path.realpath(checkpoint_folder(options.init_checkpoint))
        if os.path.realpath(options.output_dir) == start:
            raise UsageError(f"--output_dir={options.output_dir} holds --init_checkpoint: "
                             "training would write its model over the weights it starts "
                             "from; choose another --output_dir")
    written = [os.path.join(options.output_dir, name)
               for name in (*task.output_files, EVAL_RESULTS_FILE, RECORD_FILE)]
    check_outputs_apart(written, task.input_files(), output_flag="output_dir's file")


def _check_export(task, options):
    """Refuses, before any work, an export that would fail once training is done."""
    if task.serving_kind is None:
        raise UsageError(f"--export_dir: task {task.name} has no SavedModel export")
    task.serving_options()  # raises what the export would lack (pretraining: a vocabulary)
    export_dir, output_dir = map(os.path.realpath, (options.export_dir, options.output_dir))
    if export_dir == output_dir:
        raise UsageError(f"--export_dir={options.export_dir} is --output_dir; the SavedModel "
                         "needs a folder of its own (say, a saved_model folder inside it)")
    if os.path.commonpath([export_dir, output_dir]) == export_dir:
        raise UsageError(f"--output_dir={options.output_dir} is inside "
                         f"--export_dir={options.export_dir}, which an export replaces whole; "
                         "put the SavedModel inside the run's folder or beside it")
    try:
        serving.check_export_dir(options.export_dir)
    except OSError as error:  # FileExistsError too
        raise UsageError(f"--export_dir: {error}") from None


def _strategy(options):
    strategy = distribution.get_strategy(
        options.distribution_strategy, num_gpus=options.num_gpus, tpu=options.tpu,
        tpu_zone=options.tpu_zone, gcp_project=options.gcp_project,
        worker_wait_seconds=options.worker_wait_seconds, training=options.do_train)
    split = options.gradient_accumulation_steps * strategy.num_replicas_in_sync
    if options.train_batch_size % split:
        raise UsageError(f"--train_batch_size={options.train_batch_size} is not divisible by "
                         f"--gradient_accumulation_steps x replicas = {split}")
    if options.eval_batch_size % strategy.num_replicas_in_sync:
        raise UsageError(f"--eval_batch_size={options.eval_batch_size} is not divisible by "
                         f"{strategy.num_replicas_in_sync} replicas")
    return strategy


def run(task, options):
    """Runs the phases `options` asks for on `task`; returns the eval results (or None).

    Args:
        task: a `bert_tf.tasks.task.Task`.
        options: a `bert_tf.tasks.run_options.RunOptions`.

    Raises:
        UsageError: no phase asked for, options that do not fit, or an
            `output_dir` that holds another run.
        ValueError, OSError: bad data, configs or checkpoints (the message
            names the file).
    """
    if not (options.do_train or options.do_eval or options.do_predict):  # the original's words
        raise UsageError("At least one of `do_train`, `do_eval` or `do_predict` must be True."
                         if task.predicts else "At least one of `do_train` or `do_eval` must "
                         "be True.")
    if options.max_eval_steps is not None and not task.evaluates_a_sample:
        raise UsageError(f"max_eval_steps: task {task.name} scores its whole dev set; leave "
                         "the option out")
    if options.export_dir:
        _check_export(task, options)
    _check_outputs_apart_from_inputs(task, options)
    strategy = _strategy(options)  # first: multi-worker set-up must precede any TF op
    splits = read_splits(task, options)
    try:
        prepare_folder_for(os.path.join(options.output_dir, RECORD_FILE))
    except OSError as error:
        # Where the folder holds a model to score, not where training would write it.
        hint = (" (to score a model in a folder you cannot write, give a new --output_dir and "
                "--init_checkpoint=that folder)"
                if not options.do_train and os.path.isdir(options.output_dir) else "")
        raise UsageError(f"--output_dir={options.output_dir}: {error}{hint}") from None
    # One run per folder (the chief holds the lock; workers share the folder by design).
    lock = OutputDirLock(options.output_dir) if distribution.is_chief(strategy) else (
        contextlib.nullcontext())
    with lock:
        try:
            return _run_phases(task, options, strategy, splits)
        except (tf.errors.UnavailableError, tf.errors.AbortedError,
                tf.errors.DeadlineExceededError) as error:
            if distribution.in_one_process(strategy):
                raise
            raise distribution.WorkerLostError(
                f"another worker of this run stopped or cannot be reached "
                f"({_collective_failure(error)}); the run stops here. Restart every worker "
                "with the same command to resume from the last checkpoint") from None


def _collective_failure(error):
    """The line of a failed collective's TensorFlow error that says what happened."""
    lines = [line.strip() for line in str(error.message).splitlines() if line.strip()]
    for marker in ("unhealthy", "aborted by", "crashed", "Connection", "Deadline", "heartbeat"):
        found = [line for line in lines if marker in line]
        if found:
            return found[0]
    return lines[0] if lines else type(error).__name__


def _exported_model_to_score(options):
    """`(options, its step)`, scoring the model a finished run exported in `output_dir`
    where that is all, or `--init_checkpoint`'s (`scored_step`) where the folder holds
    no model; `(options, None)` otherwise.

    An evaluation or prediction alone resumes the folder's newest `ckpt-N`;
    where those were deleted (they are for resuming) or the folder was
    copied without them, the exported `bert_model.ckpt` is the model, of
    the last step its `run.json` records, whatever `--init_checkpoint` says
    (the training command's start weights, say). A folder without a
    `run.json` (a release) is scored only when no `--init_checkpoint` is given.
    """
    exported = os.path.join(options.output_dir, CHECKPOINT_BASENAME)
    if options.do_train or newest_checkpoint(options.output_dir):
        return options, None
    if not os.path.exists(exported + ".index"):  # another folder's model, or a release
        return options, scored_step(options.init_checkpoint)
    recorded = recorded_run(options.output_dir)
    if options.init_checkpoint:
        if recorded is None:
            return options, scored_step(options.init_checkpoint)
        warn_if_init_checkpoint_ignored(options.output_dir, exported, options.init_checkpoint)
    logging.info("no training checkpoint in %s: scoring the model it exported, %s",
                 options.output_dir, exported)
    step = (recorded or {}).get("train_steps")
    return dataclasses.replace(options, init_checkpoint=exported), step


def _run_phases(task, options, strategy, splits):
    options, exported_step = _exported_model_to_score(options)
    train_steps = task.train_steps(splits.get("train", ()), options)
    # Once: it reads the vocabulary and digests the training examples.
    record = run_record(task, options, train_steps, splits.get("train"))
    if not distribution.in_one_process(strategy):  # before any worker writes or trains
        WorkerAgreement(strategy).check_same(worker_settings(task, record, options, splits))
    _warmup_steps(task, options, train_steps)  # refused before run.json is written
    check_run_record(options.output_dir, record, options)
    trainer = build_trainer(task, options, strategy, train_steps)
    if isinstance(exported_step, int):  # eval_results.txt says which step it scored
        trainer.global_step.assign(exported_step)
    context = RunContext(options, trainer)
    if options.do_train:
        logging.info("training %s: %d steps of batch %d", task.name, train_steps,
                     options.train_batch_size)
        # A seeded shuffle gives the same batches every run: a resumed run goes on
        # where the interrupted one stopped in them.
        trainer.train(lambda input_context: task.dataset(
            splits["train"], options.micro_batch_size, True, input_context,
            options.random_seed), train_steps,
            resume_data_position=options.random_seed is not None)
        if trainer.is_chief:
            task.export(trainer.model, options.output_dir)
    results = None
    if options.do_eval:
        results, files = task.evaluation(context, splits["dev"])
        results = dict(results, global_step=int(trainer.global_step.numpy()))
        logging.info("eval results: %s", results)
        if trainer.is_chief:  # one set: the scores and the files they score
            write_texts({os.path.join(options.output_dir, name): text for name, text in
                         {EVAL_RESULTS_FILE: eval_results_text(results), **files}.items()})
    if options.do_predict and trainer.is_chief:
        outputs = task.predict(context, splits["test"])
        stale = os.path.join(options.output_dir, EVAL_RESULTS_FILE)
        if task.evaluates_its_predictions and not options.do_eval and os.path.exists(stale):
            os.remove(stale)  # before the new predictions: never beside them
            logging.info("removed %s: it scored the predictions this run replaces", stale)
        task.write_predictions(outputs, splits["test"], options.output_dir)
    if options.export_dir and trainer.is_chief:
        task.export_savedmodel(trainer.model, options.export_dir)
        logging.info("wrote the %s SavedModel to %s", task.serving_kind, options.export_dir)
    return results
