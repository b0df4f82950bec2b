"""Where a run may write: never over a file it reads, never twice to one file.

`check_outputs_apart` refuses, before any work rather than after it, an
output path that is one of the run's inputs (its data, its vocabulary, its
start weights), a directory (or a name ending in "/", which makes one),
or another spelling of another output. Paths
are compared as files (`file_identity`: links and `./` spellings are one
file). Pure `os`: the SQuAD scorer uses it without TensorFlow.
"""

import os
from typing import Mapping, Sequence

from bert_tf.errors import UsageError


def file_identity(path: str) -> tuple:
    """What makes two paths the same file: its inode if it exists, else its real path.

    >>> file_identity("out/a.tfrecord") == file_identity("./out/../out/a.tfrecord")
    True
    """
    try:
        stat = os.stat(path)
    except OSError:
        return ("path", os.path.realpath(path))
    return ("inode", stat.st_dev, stat.st_ino)


def check_outputs_apart(output_files: Sequence[str],
                        read_files: Mapping[str, Sequence[str]],
                        output_flag: str = "output_file") -> None:
    """Fails if an output file is one of the files read (links included), or a directory.

    Args:
      output_files: paths about to be written.
      read_files: {flag name: its files}, e.g. {"input_file": [...],
        "vocab_file": [...]}.
      output_flag: what the message calls the outputs (the flag that names them).

    Raises:
      UsageError: naming the output, the flag and the file it would overwrite,
        or two spellings of one output file (the command line must change).

    Example:
      >>> import tempfile
      >>> text = os.path.join(tempfile.mkdtemp(), "corpus.txt")
      >>> _ = open(text, "w").write("text\\n")
      >>> check_outputs_apart([text + ".tfrecord"], {"input_file": [text]})
      >>> check_outputs_apart([text], {"input_file": [text]})  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      bert_tf.errors.UsageError: output_file .../corpus.txt is the input_file .../corpus.txt: refusing to write over a file the run reads
      >>> check_outputs_apart([os.path.dirname(text)], {})  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      bert_tf.errors.UsageError: output_file ... is a directory; name a file there
      >>> check_outputs_apart(["out/vocab.txt/"], {})
      Traceback (most recent call last):
      ...
      bert_tf.errors.UsageError: output_file out/vocab.txt/ ends in '/', a folder's name; name a file
    """
    written = {}  # file identity -> the output spelling it
    for output in output_files:
        if os.path.isdir(output):
            raise UsageError(f"{output_flag} {output} is a directory; name a file there")
        # The writers would make a folder of that name, write the whole output, and
        # then fail to rename it over the folder.
        if output.endswith(("/", os.sep)):
            raise UsageError(f"{output_flag} {output} ends in '/', a folder's name; name a file")
        identity = file_identity(output)
        if identity in written:
            raise UsageError(f"{output_flag} names one file twice ({written[identity]}, "
                             f"{output}); each output needs a file of its own")
        written[identity] = output
    read = {}
    for flag, paths in read_files.items():
        for path in paths:
            read.setdefault(file_identity(path), (flag, path))
    for identity, output in written.items():
        if identity in read:
            flag, path = read[identity]
            raise UsageError(f"{output_flag} {output} is the {flag} {path}: refusing to "
                             "write over a file the run reads")
