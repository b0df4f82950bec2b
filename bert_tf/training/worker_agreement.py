"""Multi-worker training: every worker runs the same steps in a call and stops at the same one.

Each training step all-reduces its gradients across the workers, so every
worker must run the same number of steps in each call. Each measures its
own call times (`call_sizes`), and a scheduler may send SIGTERM to one
worker seconds before the others, or to one only. A worker that ran other
steps, or stopped alone, would leave the rest waiting in a collective that
never completes, until a timeout or SIGKILL ends them without a
checkpoint.

So before each call the workers exchange what each would do: the steps it
proposes for the call and the stop signal it received (0 for none), in one
all-gather of two integers (a millisecond, next to calls of about 10 s).
All run the fewest steps proposed, and where any worker received a signal,
all stop there and save the same step. In one process there is nothing to
agree on, and `agree` returns its arguments.

The steps agree only if the runs do: workers started with different flags
(another learning rate, step count, batch size, model or data) apply the
same summed gradient with different rules, so their weights drift apart
without an error, and the chief saves only its own; with other step counts
one worker ends while the others wait for it. So before any work the
workers compare the settings of their runs (`check_same`): a digest of
each, in two all-gathers, and every worker stops with the names of the
settings that differ.

Nor are the workers' weights synchronised after each restores its own
checkpoint files: where `--output_dir` is not really one shared folder (a
local folder on each host, or one host's copy without the checkpoints),
the chief resumes at step N while another starts afresh, and each applies
the same summed gradient to other weights, without an error, while the
chief saves only its own. So after restoring, the workers compare what
each resumed from (`check_same_start`: its step, its checkpoint's name and
the digest of its `.index`, in one all-gather), and every worker stops,
naming what each resumed from.
"""

import hashlib
import json
import os

import tensorflow as tf

from bert_tf.checkpoints import weights_identity
from bert_tf.checkpoints.folders import ORIGINAL_CHECKPOINT, TRAINING_CHECKPOINT
from bert_tf.errors import UsageError
from bert_tf.training import distribution

# The names of the checkpoints a worker may resume from (`resume`), gathered by their place here.
_RESUMED_NAMES = (TRAINING_CHECKPOINT, ORIGINAL_CHECKPOINT)


def _digest(value):
    """A 63-bit digest of a JSON-able value (the same on every machine and Python).

    >>> _digest({"b": 1, "a": [2.0]}) == _digest({"a": [2.0], "b": 1})
    True
    """
    text = json.dumps(value, sort_keys=True, default=repr)
    return int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big") >> 1


class WorkerAgreement:
    """What every worker of `strategy` runs next, from what each proposes.

    Example (one process: its own proposal):

    >>> WorkerAgreement(tf.distribute.get_strategy()).agree(steps=100, signal_number=0)
    (100, 0)
    """

    def __init__(self, strategy):
        self._strategy = strategy
        self._in_one_process = distribution.in_one_process(strategy)
        self._gather = tf.function(self._gather_proposals, autograph=False)

    def check_same(self, settings):
        """Stops every worker where the workers' runs differ in any of `settings`.

        Args:
            settings: `{name: JSON-able value}` of what must be the same on
                every worker (named as the user knows it, e.g. a flag).

        Raises:
            UsageError: on every worker, naming the settings that differ.

        Example (one process: nothing to compare):

        >>> WorkerAgreement(tf.distribute.get_strategy()).check_same({"learning_rate": 1e-4})
        """
        if self._in_one_process:
            return
        names = sorted(settings)
        # The same names first (same program and task), so that the digests line up.
        shapes = self._gather(tf.constant([len(names), _digest(names)], tf.int64)).numpy()
        if len({tuple(row) for row in shapes}) > 1:
            raise UsageError("the workers of this run run different scripts or tasks; start "
                             "every worker with the same command line")
        digests = self._gather(tf.constant([_digest(settings[n]) for n in names],
                                           tf.int64)).numpy()
        differing = [(name, settings[name]) for column, name in enumerate(names)
                     if len(set(digests[:, column])) > 1]
        if differing:
            here = ", ".join(f"{name}={value!r}" for name, value in differing)
            raise UsageError(
                "the workers of this run were started with different settings: "
                f"{', '.join(name for name, _ in differing)} (this worker: {here}); start "
                "every worker with the same command line and files")

    def check_same_start(self, output_dir, step, checkpoint):
        """Stops every worker where the workers resumed from other checkpoints or steps.

        Args:
            output_dir: the folder this worker resumed from, for the message.
            step: the global step this worker resumed at.
            checkpoint: the prefix of the checkpoint it restored (`ckpt-N`, or
                the original code's `model.ckpt-N`); None for none, a fresh
                start (the start weights were compared by `check_same`).

        Raises:
            UsageError: on every worker, naming what each resumed from.

        Example (one process: nothing to compare, and no file read):

        >>> WorkerAgreement(tf.distribute.get_strategy()).check_same_start("out", 3, "out/ckpt-3")
        """
        if self._in_one_process:
            return
        resolver = self._strategy.cluster_resolver
        job = distribution.COORDINATED_JOBS.index(resolver.task_type)  # 0 chief, 1 worker
        starts = self._gather(tf.constant(
            [job, resolver.task_id, *resumed_from(step, checkpoint)], tf.int64)).numpy()
        differing = different_starts(starts)
        if differing:
            raise UsageError("the workers of this run resumed from different checkpoints: "
                             f"{differing}; --output_dir must be one folder shared by every "
                             f"worker (this worker's is {output_dir})")

    def _gather_proposals(self, proposal):
        def gather():
            context = tf.distribute.get_replica_context()
            return context.all_gather(proposal[tf.newaxis], axis=0)
        per_replica = self._strategy.run(gather)
        return self._strategy.experimental_local_results(per_replica)[0]

    def agree(self, steps, signal_number):
        """`(the fewest steps any worker proposed, the signal one received or 0)`.

        Args:
            steps: the steps this worker proposes for the next call.
            signal_number: the stop signal this worker received, 0 for none.
        """
        if self._in_one_process:
            return steps, signal_number
        proposals = self._gather(tf.constant([steps, signal_number], tf.int64)).numpy()
        return int(proposals[:, 0].min()), int(proposals[:, 1].max())


def resumed_from(step, checkpoint):
    """`[step, the checkpoint's name (its place in _RESUMED_NAMES; -1: none), its number,
    the digest of its weights_identity]`: what a worker resumed from, as numbers.

    >>> resumed_from(0, None)[:3]
    [0, -1, 0]
    """
    if checkpoint is None:
        return [step, -1, 0, _digest(None)]
    name, number = os.path.basename(checkpoint).rsplit("-", 1)
    return [step, _RESUMED_NAMES.index(name), int(number), _digest(weights_identity(checkpoint))]


def different_starts(starts):
    """What each worker resumed from, in words, where they differ; None where all agree.

    Args:
        starts: one row per replica, in replica order, `[job, task id, *resumed_from(...)]`
            (a worker of several replicas gives several rows).

    >>> different_starts([[1, 0, 40, 0, 40, 7], [1, 1, 0, -1, 0, 9], [1, 2, 0, -1, 0, 9]])
    'worker 0 from ckpt-40 (step 40), workers 1, 2 from no checkpoint (step 0)'
    >>> different_starts([[0, 0, 40, 0, 40, 7], [1, 0, 40, 0, 40, 8]])
    'chief from ckpt-40 (step 40), worker 0 from another ckpt-40 (step 40)'
    >>> different_starts([[1, 0, 0, 1, 12, 5], [1, 0, 0, 1, 12, 5]]) is None
    True
    """
    workers = {}  # {start: [worker ids]}, in the order of the first worker of each
    for job, task_id, *start in (tuple(int(value) for value in row) for row in starts):
        ids = workers.setdefault(tuple(start), [])
        if (job, task_id) not in ids:
            ids.append((job, task_id))
    if len(workers) < 2:
        return None
    named, parts = set(), []
    for (step, name, number, _), ids in workers.items():
        what = "no checkpoint" if name < 0 else f"{_RESUMED_NAMES[name]}-{number}"
        if what in named:
            what = f"another {what}"
        named.add(what)
        parts.append(f"{_workers_named(ids)} from {what} (step {step})")
    return ", ".join(parts)


def _workers_named(ids):
    """`chief`, `worker 1`, `workers 1, 2` for `[(job, task id)]`."""
    names = ["chief"] if (0, 0) in ids else []
    numbers = [str(task_id) for job, task_id in ids if job == 1]
    if numbers:
        names.append(f"worker{'s' if len(numbers) > 1 else ''} {', '.join(numbers)}")
    return " and ".join(names)
