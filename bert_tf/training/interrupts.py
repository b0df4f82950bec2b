"""SIGTERM and SIGINT during training: stop at a step boundary, not mid-step.

A preempted job (SIGTERM from a scheduler or a cloud host) or a Ctrl-C
(SIGINT) would otherwise kill the run wherever it is, losing everything
since the last periodic checkpoint. While `StopSignals` is active the two
signals only set `received`; `Trainer.train` looks at it after every
`tf.function` call, saves a checkpoint of the step reached and raises
`TrainingInterrupted`, which the runners turn into a non-zero exit. A rerun
resumes from that checkpoint.

The check happens between calls, so the delay after a signal is at most
one call plus writing the checkpoint. A call lasts about 10 s
(`call_sizes`), within the grace period of most schedulers (Kubernetes and
most clouds give 30 s before SIGKILL). Under multi-worker training a
signal to one worker stops them all at the same step
(`worker_agreement`), each with the same exit code. A second Ctrl-C stops
at once (KeyboardInterrupt), for when that is too long.

Python runs signal handlers only when the main thread is back in Python,
never while a TensorFlow call blocks it (an input pipeline that waits on
a slow disk, say). So a thread also watches the signals as they arrive
(`signal.set_wakeup_fd`): a second Ctrl-C that the main thread has not
acted on within `SECOND_INTERRUPT_GRACE_SECONDS` ends the process there,
with exit code 130 and a line saying so (no checkpoint of that call).

Handlers can only be installed from the main thread; elsewhere `StopSignals`
does nothing and the signals keep their usual effect.
"""

import os
import signal
import threading

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
SECOND_INTERRUPT_GRACE_SECONDS = 3.0


class TrainingStopped(RuntimeError):
    """Training ended before its last step (the base of the trainer's stop errors)."""


class TrainingInterrupted(TrainingStopped):
    """A SIGTERM or SIGINT stopped training; a checkpoint of the step reached was written.

    The signal came to this process, or (`by_another_worker`) to another
    worker of the same multi-worker run.

    Attributes:
        signal_name: "SIGTERM" or "SIGINT".
        step: the global step saved.
        exit_code: 128 + the signal's number, the shell's convention for a
            process ended by that signal.
    """

    def __init__(self, signal_number, step, checkpoint, by_another_worker=False):
        self.signal_name = signal.Signals(signal_number).name
        self.step = step
        self.exit_code = 128 + signal_number
        by = " by another worker" if by_another_worker else ""
        super().__init__(f"{self.signal_name} received{by}: stopped at step {step} and saved "
                         f"{checkpoint}; rerun the same command to resume from there")


class StopSignals:
    """Within the context, SIGTERM and SIGINT set `received` instead of ending the process.

    Example:

    >>> import os
    >>> with StopSignals() as signals:
    ...     os.kill(os.getpid(), signal.SIGTERM)
    ...     signal.Signals(signals.received).name
    'SIGTERM'
    """

    def __init__(self):
        self.received = None
        self._previous = {}
        self._previous_wakeup = None
        self._wakeup_writer = None
        self._closed = threading.Event()

    def _handle(self, signal_number, frame):
        if self.received == signal.SIGINT and signal_number == signal.SIGINT:
            raise KeyboardInterrupt  # a second Ctrl-C: stop now
        self.received = signal_number

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for number in STOP_SIGNALS:
                self._previous[number] = signal.signal(number, self._handle)
            self._watch_arrivals()
        return self

    def _watch_arrivals(self):
        """Starts the thread that sees each signal as it arrives (see the module docstring)."""
        reader, self._wakeup_writer = os.pipe()
        os.set_blocking(self._wakeup_writer, False)
        self._previous_wakeup = signal.set_wakeup_fd(self._wakeup_writer,
                                                     warn_on_full_buffer=False)
        threading.Thread(target=self._end_on_second_interrupt, args=(reader,), daemon=True,
                         name="stop-signals").start()

    def _end_on_second_interrupt(self, reader):
        interrupts = 0
        with os.fdopen(reader, "rb", buffering=0) as arrivals:
            while numbers := arrivals.read(64):  # b"" once `__exit__` closes the writer
                interrupts += numbers.count(signal.SIGINT)
                if interrupts >= 2 and not self._closed.wait(SECOND_INTERRUPT_GRACE_SECONDS):
                    os.write(2, b"second SIGINT (Ctrl-C) while TensorFlow held the main "
                                b"thread: stopping now, without a checkpoint\n")
                    os._exit(128 + signal.SIGINT)

    def __exit__(self, *exc_info):
        self._closed.set()
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        self._previous.clear()
        if self._wakeup_writer is not None:
            signal.set_wakeup_fd(self._previous_wakeup)
            os.close(self._wakeup_writer)
            self._wakeup_writer = None
        return False
