"""What long work shows while it runs: a log line about every 10 s, and one at the end.

Training reports after each call (`training.progress`, with a bar on a terminal), but much other work
is long too and had nothing to say until it ended: SQuAD's dev set through
BERT-Base on a laptop's CPU (some 12,000 windows of 384 tokens) takes most
of an hour, and counting the words of a 10 GB corpus for a vocabulary about
half of one. `WorkProgress` logs how much is done, the rate and, where the
total is known, the share and the time left, at most once per
`every_seconds`, and one line at the end. Work shorter than that logs only
the closing line.

This module imports neither TensorFlow nor any other part of the package,
so every layer may use it, the pretraining-data workers included.
"""

import time

from absl import logging

# How often long work reports, and how long a training call runs
# (`training.call_sizes`): a scheduler waits 30 s between SIGTERM and SIGKILL.
REPORT_SECONDS = 10.0


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


def _amount(number):
    """Three significant digits, whole numbers from 1000 on.

    >>> _amount(4), _amount(12.345), _amount(0.4321), _amount(123456.7)
    ('4', '12.3', '0.432', '123457')
    """
    return f"{number:.3g}" if number < 1000 else f"{number:.0f}"


class WorkProgress:
    """Counts the work done and logs how far it is.

    Args:
        what: the work, first in each line, e.g. "predicting".
        total: the amount of work, in `unit`s; None where unknown.
        unit: what is counted, e.g. "batches" or "MB".
        every_seconds: the least time between two lines (0: a line per advance).

    Example:

    >>> progress = WorkProgress("predicting", total=4, every_seconds=0)
    >>> for _ in range(4):
    ...     progress.advance()
    >>> progress.line()  # what the last report said
    'predicting: 4/4 batches (100%), ... batches/s, about 0 s left'
    >>> progress.close()
    'predicting: 4 batches in ... s (... batches/s)'
    """

    def __init__(self, what, total=None, unit="batches", every_seconds=REPORT_SECONDS):
        self.what = what
        self.total = total
        self.unit = unit
        self.every_seconds = every_seconds
        self.done = 0
        self._start = self._last_report = time.monotonic()

    def _rate(self):
        return self.done / max(time.monotonic() - self._start, 1e-9)

    def line(self):
        """The state now, as one line."""
        rate = f"{_amount(self._rate())} {self.unit}/s"
        if self.total is None or not self.done:
            return f"{self.what}: {_amount(self.done)} {self.unit}, {rate}"
        left = max(self.total - self.done, 0) / self._rate()
        return (f"{self.what}: {_amount(self.done)}/{_amount(self.total)} {self.unit} "
                f"({100 * min(self.done / self.total, 1):.0f}%), {rate}, "
                f"about {_duration(left)} left")

    def advance(self, amount=1):
        """Counts `amount` more; logs a line where `every_seconds` have passed since the last."""
        self.done += amount
        now = time.monotonic()
        if now - self._last_report >= self.every_seconds:
            self._last_report = now
            logging.info("%s", self.line())

    def close(self):
        """Logs and returns the work's one closing line."""
        seconds = time.monotonic() - self._start
        line = (f"{self.what}: {_amount(self.done)} {self.unit} in {seconds:.1f} s "
                f"({_amount(self._rate())} {self.unit}/s)")
        logging.info("%s", line)
        return line
