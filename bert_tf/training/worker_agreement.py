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
"""

import hashlib
import json

import tensorflow as tf

from bert_tf.errors import UsageError
from bert_tf.training import distribution


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
