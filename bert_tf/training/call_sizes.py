"""How many training steps each `tf.function` call of the trainer runs.

Several steps per call (`steps_per_execution`) spread the call's host work
(reading the metrics, a progress line, TensorBoard scalars: milliseconds)
over many steps, which matters where a step takes milliseconds too. But the
trainer reports progress and acts on SIGTERM or SIGINT only between calls,
and the original's 1000 steps per loop, right for a TPU, mean an hour
without a progress line for BERT-Base on a CPU, and a stop signal that
waits as long (a scheduler sends SIGKILL after its grace period, often 30 s).

So `CallSizes` also keeps each call near `max_seconds`, from the time per
step of the call before: the calls of a small model stay
`steps_per_execution` long, those of a big one shrink to the steps that fit.
The first call, which builds the step (tracing, XLA), and the one after it,
the first clean measurement, run one step each. What the model computes does
not depend on where the calls end.

Every worker of a multi-worker strategy must run the same steps in a call
(each step reduces across them), and each measures its own times: there
each worker's `next_call` is a proposal, and all run the fewest proposed
(`worker_agreement`).
"""

from bert_tf.work_progress import REPORT_SECONDS

# A call's time in one process: progress and stop signals as often as other
# long work reports (schedulers wait 30 s before SIGKILL), while the
# boundary's host work (bench/call_boundary.py) stays a negligible share.
MAX_CALL_SECONDS = REPORT_SECONDS


class CallSizes:
    """Steps per call: at most `most_steps`, and about `max_seconds` long once measured.

    Args:
        most_steps: the most steps in one call (`steps_per_execution`).
        max_seconds: the time a call should take; None: always `most_steps`.

    Example:

    >>> sizes = CallSizes(most_steps=100, max_seconds=10.0)
    >>> sizes.next_call()  # nothing measured yet
    1
    >>> sizes.record(steps=1, seconds=30.0, building=True)  # tracing, not a measurement
    >>> sizes.next_call()
    1
    >>> sizes.record(steps=1, seconds=0.5, building=False)  # BERT-Base on a CPU, say
    >>> sizes.next_call()
    20
    >>> sizes.record(steps=20, seconds=0.2, building=False)  # 10 ms a step
    >>> sizes.next_call()
    100
    >>> CallSizes(most_steps=100, max_seconds=None).next_call()
    100
    """

    def __init__(self, most_steps, max_seconds):
        if most_steps < 1:
            raise ValueError(f"steps_per_execution must be at least 1, got {most_steps}")
        self.most_steps = most_steps
        self.max_seconds = max_seconds
        self.seconds_per_step = None

    def next_call(self):
        """The steps of the next call (before the caller's own bounds: run end, checkpoint)."""
        if self.max_seconds is None:
            return self.most_steps
        if self.seconds_per_step is None:
            return 1
        fitting = int(self.max_seconds / max(self.seconds_per_step, 1e-9))
        return max(1, min(self.most_steps, fitting))

    def record(self, steps, seconds, building):
        """Takes the time of a call of `steps` steps (`building`: it traced or compiled)."""
        if steps and not building:
            self.seconds_per_step = seconds / steps
