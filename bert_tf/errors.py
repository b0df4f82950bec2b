"""The errors a user can fix, shared by every layer.

Every expected failure (bad flag, bad file, bad data, incompatible
checkpoint) is a `ValueError` or `OSError` whose message names the flag,
file or line and says what to do; the scripts print it as one line
(`bert_tf.scripts.cli`). `UsageError` marks a wrong command line (exit
code 2); everything else that is expected exits with 1. TensorFlow's own
errors are told by their one line that matters (`tensorflow_error_line`).
"""

import re


class UsageError(ValueError):
    """A flag or option that cannot work (the command line must change).

    >>> isinstance(UsageError("--max_seq_length=2 is too short"), ValueError)
    True
    """


# TensorFlow's framing of what went wrong, each a whole line of its message: an
# error in a `tf.function` ("Graph execution error:", where the op was defined,
# the node) and one gathered from several devices (the counts).
_TENSORFLOW_FRAMING = re.compile(
    r"Graph execution error:|Detected (?:at|in) node .*|File \".*\", line \d+, in .*"
    r"|<stack traces unavailable>|Node: .*|\[\[.*|\d+ root error\(s\) found\."
    r"|\d+ successful operations\.|\d+ derived errors ignored\.")
# What TensorFlow adds around the line that matters: the function and op, a device's
# number and status code, the op's name.
_TENSORFLOW_WRAPPING = re.compile(r"^\{\{function_node [^}]*\}\}\s*|^\(\d+\) [A-Z_]+:\s*"
                                  r"|\s*\[Op:[\w.]+\](?:\s+name:.*)?$")


def tensorflow_error_line(error):
    """The line of TensorFlow's `OpError` `error` that says what went wrong, and only that.

    Its message wraps that line in framing (the function, the op, where a
    `tf.function` defined the node) over several lines, which would bury the
    one line a script prints for an error (`scripts.cli`).

    >>> class OpError(Exception):
    ...     message = ("Graph execution error:\\n\\nDetected at node IteratorGetNext defined "
    ...                "at (most recent call last):\\n<stack traces unavailable>\\n"
    ...                "/data/a.tfrecord; No such file or directory\\n"
    ...                "\\t [[{{node IteratorGetNext}}]] [Op:__inference_f_20]")
    >>> tensorflow_error_line(OpError())
    '/data/a.tfrecord; No such file or directory'
    >>> OpError.message = ("{{function_node __wrapped__FlushSummaryWriter}} /out/train/events; "
    ...                    "File too large\\n\\tCould not flush events file. "
    ...                    "[Op:FlushSummaryWriter] name: ")
    >>> tensorflow_error_line(OpError())
    '/out/train/events; File too large'
    >>> OpError.message = ("{{function_node f}} /out is not a directory "
    ...                    "[Op:CreateSummaryFileWriter] name: ")
    >>> tensorflow_error_line(OpError())
    '/out is not a directory'
    """
    message = getattr(error, "message", None) or str(error)
    lines = [line.strip() for line in message.splitlines()]
    told = [line for line in lines if line and not _TENSORFLOW_FRAMING.fullmatch(line)]
    return _TENSORFLOW_WRAPPING.sub("", told[0] if told else message.strip())
