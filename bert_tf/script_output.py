"""A script's output on stdout, and its quiet end when the reader goes away.

`python run_swag.py --help | head -1`: once `head` has its line it closes
the pipe, and the next write raises `BrokenPipeError`. Python would print
its traceback, and another when it flushes stdout at exit. Unix tools end
quietly there (SIGPIPE kills them; Python ignores that signal), so the
scripts do too, with the exit code a tool killed by SIGPIPE has: 141. Here
rather than in `scripts.cli`, which imports TensorFlow, so that the SQuAD
scorer, which starts without it, ends the same way.
"""

import os
import signal
import sys

STDOUT_CLOSED_EXIT_CODE = 128 + signal.SIGPIPE


class StdoutClosed(Exception):
    """The reader of stdout went away (`... | head`)."""


def print_output(text):
    """Prints `text` to stdout at once, as a script's output.

    Raises:
        StdoutClosed: the reader of stdout went away (`end_with_stdout_closed`
            then ends the run).

    >>> print_output("answer")
    answer
    """
    try:
        print(text, flush=True)
    except BrokenPipeError:
        raise StdoutClosed from None


def end_with_stdout_closed():
    """Exits 141, stdout pointed at /dev/null so that the flush at exit is quiet."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    sys.exit(STDOUT_CLOSED_EXIT_CODE)
