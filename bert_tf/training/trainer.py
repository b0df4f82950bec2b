"""`Trainer`: the one distributed training and evaluation loop of every runner.

Why a hand-written loop: with Keras 3.15 / TF 2.21, `Model.fit` fails under
`MultiWorkerMirroredStrategy`, the optimizer's gradient accumulation fails
under `MirroredStrategy`, and `compile(jit_compile=True)` cannot reach
variables on other devices. A `strategy.run` of a per-replica step
(`steps.StepFunctions`) inside a `tf.function` works with every strategy.
What Keras and TF have is used as is: Keras models, optimizers and
schedules, `tf.train.Checkpoint` + `CheckpointManager`, `tf.summary`.

A task supplies a Keras model, a Keras optimizer (both made inside
`strategy.scope()`), an `Objective` (losses, their weights, metrics) and
input functions (`input_context -> tf.data.Dataset` of feature dicts);
the trainer does the rest:

* several steps per `tf.function` call, each step consuming
  `gradient_accumulation_steps` micro-batches: at most `steps_per_execution`,
  and only what fits in about `max_call_seconds` (`call_sizes`; the workers
  of a multi-worker run agree on the fewest, `worker_agreement`), so
  progress lines and stop signals come that often;
* a checkpoint in `output_dir` every `save_checkpoints_steps` steps and at
  the end (`trainer.checkpoints`, a `run_checkpoints.RunCheckpoints`:
  resuming, and never overwriting a checkpoint this run did not write);
* SIGTERM or SIGINT ends the run at the next `tf.function` call boundary
  with a checkpoint of the step reached (`interrupts`);
* a non-finite loss or gradient stops the run, naming the step, before
  anything more is saved; a checkpoint whose weights produced it is set
  aside, so the newest checkpoint left is one whose next step was finite;
* a progress bar on a terminal, else log lines (step, loss, metrics,
  learning rate, sequences/s), and TensorBoard scalars in
  `output_dir/train` (chief only); the first call, which builds the step
  (tracing, XLA compilation), is announced before it starts and timed;
  evaluation logs its batches about every 10 s (`bert_tf.work_progress`).

The trainer does not lock `output_dir`: the runner holds
`run_dir.OutputDirLock` around the whole run (see `run_dir`).

Example (`model`, `optimizer` built under `strategy.scope()`):

    trainer = Trainer(model, optimizer, pretraining_objective(), strategy,
                      "/tmp/run", global_batch_size=32)
    trainer.checkpoints.restore_latest()
    trainer.train(train_dataset_fn, num_steps=1000)
    results = trainer.evaluate(eval_dataset_fn, max_steps=100)
"""

import os
import time

import numpy as np
import tensorflow as tf
from absl import logging

from bert_tf.training import compilation, distribution
from bert_tf.training.call_sizes import MAX_CALL_SECONDS, CallSizes
from bert_tf.training.input_feeds import global_batch_shares, skipping
from bert_tf.training.interrupts import StopSignals, TrainingInterrupted, TrainingStopped
from bert_tf.training.objective import metric_values
from bert_tf.training.optimization import last_learning_rate
from bert_tf.training.progress import Progress
from bert_tf.training.run_checkpoints import RunCheckpoints
from bert_tf.training.steps import StepFunctions
from bert_tf.training.summaries import ScalarWriter
from bert_tf.training.worker_agreement import WorkerAgreement
from bert_tf.work_progress import WorkProgress


class NonFiniteLossError(TrainingStopped):
    """Training produced a NaN or infinite loss or gradient."""


class NoEvaluationBatchError(ValueError):
    """The evaluation data yielded no batch (fewer examples than one, where batches are
    whole); the task names its files and flag."""


class Trainer:
    """Trains and evaluates a Keras model under any `tf.distribute` strategy.

    Args:
        model: Keras model built under `strategy.scope()`.
        optimizer: Keras optimizer built under `strategy.scope()`, without clipping.
        objective: the task's `Objective`.
        strategy: the `tf.distribute.Strategy`.
        output_dir: checkpoints, summaries and results go here.
        global_batch_size: examples per optimizer step (all replicas, all
            micro-batches), for the sequences/s figure.
        gradient_accumulation_steps: micro-batches per optimizer step.
        steps_per_execution: the most training steps per `tf.function` call.
        max_call_seconds: calls end after about this long (`call_sizes`);
            None: every call runs `steps_per_execution` steps.
        save_checkpoints_steps: checkpoint period in steps.
        clip_norm: global gradient norm to clip to (None: no clipping).
        jit_compile: XLA-compile each replica's forward and backward pass.
        eval_jit_compile: XLA-compile the evaluation (and prediction) forward
            pass; None: as `jit_compile` (`compilation.use_xla` chooses both
            in the runner).
        update_jit_compile: XLA-compile the optimizer update (clipping, loss
            scaling, AdamW) where the strategy has one replica; None: where
            `compilation.update_use_xla` says it is faster.
        max_checkpoints_to_keep: older checkpoints are deleted.
    """

    def __init__(self, model, optimizer, objective, strategy, output_dir, global_batch_size,
                 gradient_accumulation_steps=1, steps_per_execution=1,
                 max_call_seconds=MAX_CALL_SECONDS,
                 save_checkpoints_steps=1000, clip_norm=1.0, jit_compile=False,
                 eval_jit_compile=None, update_jit_compile=None, max_checkpoints_to_keep=5):
        for name, value in (("gradient_accumulation_steps", gradient_accumulation_steps),
                            ("save_checkpoints_steps", save_checkpoints_steps)):
            if value < 1:
                raise ValueError(f"{name} must be at least 1, got {value}")
        self.model = model
        self.optimizer = optimizer
        self.objective = objective
        self.strategy = strategy
        self.output_dir = output_dir
        self.global_batch_size = global_batch_size
        self.accumulation = gradient_accumulation_steps
        self.call_sizes = CallSizes(steps_per_execution, max_call_seconds)
        self.workers = WorkerAgreement(strategy)
        self.save_checkpoints_steps = save_checkpoints_steps
        self.is_chief = distribution.is_chief(strategy)
        with strategy.scope():
            optimizer.build(model.trainable_variables)
            self.global_step = tf.Variable(
                0, dtype=tf.int64, trainable=False, name="global_step",
                aggregation=tf.VariableAggregation.ONLY_FIRST_REPLICA)
        self.jit_compile = jit_compile
        self.eval_jit_compile = jit_compile if eval_jit_compile is None else eval_jit_compile
        if update_jit_compile is None:
            update_jit_compile = compilation.update_use_xla(jit_compile)
        self.steps = StepFunctions(model, optimizer, objective, clip_norm, jit_compile,
                                   self.eval_jit_compile, update_jit_compile)
        self.checkpoints = RunCheckpoints(
            tf.train.Checkpoint(model=model, optimizer=optimizer, global_step=self.global_step),
            model, self.global_step, output_dir, self.is_chief,
            worker_id=None if self.is_chief else strategy.cluster_resolver.task_id,
            max_to_keep=max_checkpoints_to_keep, workers=self.workers)
        self._writers = {}
        # Plain graph code throughout: autograph would only add minutes of tracing.
        self.train_steps = tf.function(self._train_steps, autograph=False)
        self._eval_step = tf.function(self._eval_step_fn, autograph=False)

    # -- training ---------------------------------------------------------

    def _zero_metrics(self):
        return {name: tf.zeros([2]) for name in self.objective.metric_names}

    def _train_steps(self, iterator, num_steps):
        """Runs up to `num_steps` steps from a distributed iterator (one `tf.function` call).

        Stops after the first step with a non-finite loss or gradient (whose
        update is not counted). No checkpoints, summaries or logs: `train`
        adds those.

        Returns:
            `(steps done with a finite loss and gradient, their loss sum, their
            metric sums, the last loss)`.
        """
        replicas = float(self.strategy.num_replicas_in_sync)

        def step(done, loss_sum, metrics, last_loss, finite):
            batches = tuple(next(iterator) for _ in range(self.accumulation))
            loss, step_metrics, finite_grads = self._sum_over_replicas(
                self.strategy.run(self.steps.train, args=(batches,)))
            finite = tf.logical_and(tf.math.is_finite(loss), tf.equal(finite_grads, replicas))
            counted = tf.cast(finite, tf.float32)
            with tf.control_dependencies([loss]):
                self.global_step.assign_add(tf.cast(finite, tf.int64))
            metrics = {name: metrics[name] + counted * step_metrics[name] for name in metrics}
            return (done + tf.cast(finite, tf.int32), loss_sum + counted * loss, metrics, loss,
                    finite)

        def more(done, loss_sum, metrics, last_loss, finite):
            return tf.logical_and(finite, done < num_steps)

        initial = (tf.constant(0), tf.constant(0.0), self._zero_metrics(), tf.constant(0.0),
                   tf.constant(True))
        done, loss_sum, metrics, last_loss, _ = tf.while_loop(more, step, initial)
        return done, loss_sum, metrics, last_loss

    def train(self, dataset_fn, num_steps, resume_data_position=False):
        """Trains until `global_step` reaches `num_steps`; saves the last checkpoint.

        Args:
            dataset_fn: `input_context -> tf.data.Dataset` of micro-batches,
                repeated as long as training needs.
            num_steps: the final global step.
            resume_data_position: for a `dataset_fn` that gives the same
                batches every run (a seeded shuffle): a run resumed at step N
                skips the batches of steps 1..N, so that it trains on what
                the uninterrupted run would have, not on the first batches
                again (and never on the rest of the epoch).

        Returns:
            The metrics (and `loss`) of the last logged steps.

        Raises:
            NonFiniteLossError: the loss or gradient became NaN or infinite.
            TrainingInterrupted: SIGTERM or SIGINT arrived; the step reached
                was saved.
        """
        step, results, stop_signal = int(self.global_step.numpy()), {}, 0
        if resume_data_position and 0 < step < num_steps:
            logging.info("resuming the training data at step %d: skipping the %d examples "
                         "its steps trained on", step, step * self.global_batch_size)
            dataset_fn = skipping(dataset_fn, step * self.accumulation)
        dataset = self.strategy.distribute_datasets_from_function(dataset_fn)
        iterator = iter(dataset)
        writer = self._summary_writer("train")
        progress = Progress(num_steps)
        with StopSignals() as signals:
            while step < num_steps:
                next_save = (step // self.save_checkpoints_steps + 1) * self.save_checkpoints_steps
                count, stop_signal = self.workers.agree(
                    min(self.call_sizes.next_call(), num_steps - step, next_save - step),
                    signals.received or 0)
                if stop_signal:
                    break
                if not count:  # another worker has done its steps: the workers' runs differ
                    progress.close()
                    raise TrainingStopped(
                        f"another worker ended its training at step {step} of this worker's "
                        f"{num_steps}: the workers were started with different flags")
                start = time.time()
                # The first call builds the step (tracing, XLA): say so, since nothing shows.
                first_call = self.train_steps.experimental_get_tracing_count() == 0
                if first_call:
                    logging.info("building the training step: tracing%s; the first call takes "
                                 "longer", " and XLA compilation" if self.jit_compile else "")
                done, loss_sum, metrics, last_loss = self.train_steps(iterator, tf.constant(count))
                done, seconds = int(done), time.time() - start
                self.call_sizes.record(done, seconds, building=first_call)
                if first_call:
                    logging.info("the first call of the training step took %.1f s, building "
                                 "included", seconds)
                step += done
                if done < count:
                    progress.close()
                    self._stop_non_finite(step, float(last_loss))
                results = {"loss": float(loss_sum) / done,
                           **metric_values({k: v.numpy() for k, v in metrics.items()})}
                self._report(writer, progress, step, results,
                             done * self.global_batch_size / (time.time() - start))
                if step % self.save_checkpoints_steps == 0 or step == num_steps:
                    self.checkpoints.save()
            if not stop_signal:  # one that came during the last call
                _, stop_signal = self.workers.agree(0, signals.received or 0)
            if stop_signal:
                progress.close()
                error = TrainingInterrupted(stop_signal, step, self.checkpoints.save(),
                                            by_another_worker=not signals.received)
                logging.warning("%s", error)
                raise error
        return results

    def _stop_non_finite(self, step, loss):
        """Raises `NonFiniteLossError` for step `step + 1`, which started from step `step`.

        The weights of step `step` gave the non-finite value, so a checkpoint
        of that step written by this run is not a good one: it is moved to
        `nonfinite_checkpoints/` (kept, e.g. for a bad batch rather than bad
        weights) and the state file names the newest remaining checkpoint.
        """
        moved_to, last_good = self.checkpoints.set_aside_non_finite(step)
        moved = (f"Moved {self.checkpoints.prefix(step)}, whose weights led to it, to "
                 f"{moved_to}. " if moved_to else "")
        what = (f"loss is {loss}" if not np.isfinite(loss)
                else f"gradient is not finite (loss {loss:.4g})")
        raise NonFiniteLossError(f"{what} at training step {step + 1}; stopping. {moved}"
                                 f"The last good checkpoint is {last_good or 'none'}.")

    def _report(self, writer, progress, step, results, sequences_per_second):
        learning_rate = last_learning_rate(self.optimizer)
        scalars = dict(results, learning_rate=learning_rate,
                       sequences_per_second=sequences_per_second)
        writer.write(step, scalars)
        progress.report(step, results, learning_rate, sequences_per_second)

    def _summary_writer(self, name):
        """The writer of `output_dir/name` (one per run and name; a no-op off the chief)."""
        if name not in self._writers:
            self._writers[name] = ScalarWriter(os.path.join(self.output_dir, name),
                                               enabled=self.is_chief)
        return self._writers[name]

    # -- evaluation -------------------------------------------------------

    def _eval_step_fn(self, batch):
        loss, metrics = self.strategy.run(self.steps.evaluate, args=(batch,))
        return self._sum_over_replicas((loss, metrics))

    def _sum_over_replicas(self, values):
        return tf.nest.map_structure(
            lambda value: self.strategy.reduce("SUM", value, axis=None), values)

    def evaluate(self, dataset_fn, max_steps=None):
        """Evaluates on up to `max_steps` batches of a finite dataset, logging its progress.

        Args:
            dataset_fn: `input_context -> tf.data.Dataset`; called with None it
                gives the global batches in order (whole batches only where
                the strategy has several replicas, see `global_batch_shares`).
            max_steps: the most global batches to evaluate.

        Returns:
            `{"global_step", "loss" (mean over batches), each metric}`;
            also written as TensorBoard scalars in `output_dir/eval`.
        """
        dataset = self.strategy.distribute_datasets_from_function(
            lambda input_context: global_batch_shares(dataset_fn, input_context))
        loss_sum, batches = 0.0, 0
        sums = {name: np.zeros(2) for name in self.objective.metric_names}
        progress = WorkProgress("evaluating", max_steps)
        for batch in dataset:
            if max_steps is not None and batches >= max_steps:
                break
            loss, metrics = self._eval_step(batch)
            loss_sum += float(loss)
            batches += 1
            for name, value in metrics.items():
                sums[name] += value.numpy()
            progress.advance()
        if not batches:
            raise NoEvaluationBatchError("evaluation dataset yielded no batch (fewer examples "
                                         "than eval_batch_size?)")
        progress.close()
        step = int(self.global_step.numpy())
        results = {"global_step": step, "loss": loss_sum / batches, **metric_values(sums)}
        self._summary_writer("eval").write(
            step, {k: v for k, v in results.items() if k != "global_step"})
        logging.info("evaluation at step %d over %d batches: %s", step, batches, results)
        return results
