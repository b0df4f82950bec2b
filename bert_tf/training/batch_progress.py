"""What evaluation and prediction show while they run: a log line about every 10 s.

Training reports after each call (`progress`), but the passes over an
evaluation or prediction set had no report until they ended, and some are
long: SQuAD's dev set is some 12,000 windows of 384 tokens, most of an hour
through BERT-Base on a laptop's CPU. `BatchProgress` logs the batches done,
the rate and, where the total is known, the share and the time left, at
most once per `every_seconds` (training's call length, `call_sizes`), and
one line at the end. Short passes (under `every_seconds`) log only that.
"""

import time

from absl import logging

from bert_tf.training.call_sizes import MAX_CALL_SECONDS


def _duration(seconds):
    """'45 s', '12 min' or '2.5 h'.

    >>> _duration(44.6), _duration(700), _duration(9000)
    ('45 s', '12 min', '2.5 h')
    """
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class BatchProgress:
    """Counts the batches of a pass and logs how far it is.

    Args:
        what: the pass, first in each line, e.g. "predicting".
        total: the batches in the pass; None where unknown.
        every_seconds: the least time between two lines (0: a line per batch).

    Example:

    >>> progress = BatchProgress("predicting", total=4, every_seconds=0)
    >>> for _ in range(4):
    ...     progress.advance()
    >>> progress.line()  # what the last report said
    'predicting: 4/4 batches (100%), ... batches/s, about 0 s left'
    >>> progress.close()
    'predicting: 4 batches in ... s (... batches/s)'
    """

    def __init__(self, what, total=None, every_seconds=MAX_CALL_SECONDS):
        self.what = what
        self.total = total
        self.every_seconds = every_seconds
        self.done = 0
        self._start = self._last_report = time.monotonic()

    def _rate(self):
        return self.done / max(time.monotonic() - self._start, 1e-9)

    def line(self):
        """The state now, as one line."""
        rate = self._rate()
        if self.total is None or not self.done:
            return f"{self.what}: {self.done} batches, {rate:.3g} batches/s"
        left = (self.total - self.done) / rate
        return (f"{self.what}: {self.done}/{self.total} batches "
                f"({100 * self.done / self.total:.0f}%), {rate:.3g} batches/s, "
                f"about {_duration(left)} left")

    def advance(self, batches=1):
        """Counts `batches` more; logs a line where `every_seconds` have passed since the last."""
        self.done += batches
        now = time.monotonic()
        if now - self._last_report >= self.every_seconds:
            self._last_report = now
            logging.info("%s", self.line())

    def close(self):
        """Logs and returns the pass's one closing line."""
        seconds = time.monotonic() - self._start
        line = f"{self.what}: {self.done} batches in {seconds:.1f} s ({self._rate():.3g} batches/s)"
        logging.info("%s", line)
        return line
