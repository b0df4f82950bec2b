"""What training shows while it runs: a progress bar on a terminal, log lines elsewhere.

On a terminal (standard error is a TTY) one line is redrawn in place with
the step, a bar, the loss and sequences per second. In a log file or a
pipe each report is an absl log line with every metric and the learning
rate, as before. TensorBoard scalars are written either way (`summaries`).
"""

import sys

from absl import logging

_BAR_WIDTH = 30


class Progress:
    """Reports training progress to `stream` (default: standard error).

    Example (not a terminal: log lines):

    >>> import io
    >>> progress = Progress(num_steps=10, stream=io.StringIO())
    >>> progress.is_terminal
    False
    """

    def __init__(self, num_steps, stream=None):
        self.num_steps = num_steps
        self.stream = stream or sys.stderr
        self.is_terminal = bool(getattr(self.stream, "isatty", lambda: False)())
        self._line_open = False

    def report(self, step, results, learning_rate, sequences_per_second):
        """Shows the state after `step`: `results` holds `loss` and the metrics."""
        if not self.is_terminal:
            shown = " ".join(f"{name}={value:.4f}" for name, value in results.items())
            logging.info("step %d/%d %s learning_rate=%.3e sequences/s=%.1f", step,
                         self.num_steps, shown, learning_rate, sequences_per_second)
            return
        filled = _BAR_WIDTH * step // max(self.num_steps, 1)
        bar = "=" * filled + (">" if filled < _BAR_WIDTH else "") + " " * (_BAR_WIDTH - filled - 1)
        self.stream.write(f"\rstep {step}/{self.num_steps} [{bar[:_BAR_WIDTH]}] "
                          f"loss={results['loss']:.4f} seq/s={sequences_per_second:.1f}\x1b[K")
        self._line_open = True
        if step >= self.num_steps:
            self.close()
        self.stream.flush()

    def close(self):
        """Ends the bar's line (also after an early stop), so later output starts anew."""
        if self._line_open:
            self.stream.write("\n")
            self.stream.flush()
            self._line_open = False
