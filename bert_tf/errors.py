"""The errors a user can fix, shared by every layer.

Every expected failure (bad flag, bad file, bad data, incompatible
checkpoint) is a `ValueError` or `OSError` whose message names the flag,
file or line and says what to do; the scripts print it as one line
(`bert_tf.scripts.cli`). `UsageError` marks a wrong command line (exit
code 2); everything else that is expected exits with 1.
"""


class UsageError(ValueError):
    """A flag or option that cannot work (the command line must change).

    >>> isinstance(UsageError("--max_seq_length=2 is too short"), ValueError)
    True
    """
