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
"""

import tensorflow as tf

from bert_tf.training import distribution


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
