"""Which files a run reads, checked before any work.

* `expand_input_patterns`: the one reading of an `--input_file` flag, for
  text and TFRecord inputs alike: a comma list of paths or globs (a file
  named twice is read twice, as the original reads it, with a warning).
* `check_text_file`: refuses a file that is not text (a TFRecord, this
  tool's own earlier output, an archive, random bytes) rather than letting
  its bytes pass for sentences.

Outputs are kept apart from these inputs by `bert_tf.output_paths`.
"""

import codecs
import os
from typing import List, Sequence, Union

import tensorflow as tf
from absl import logging

from bert_tf.leftover_files import is_temporary

# Bytes read from the start of a file to tell text from binary data.
SNIFF_BYTES = 8192
# Share of undecodable bytes in that head above which a file is not UTF-8
# text: text in another 8-bit encoding loses a few percent of its bytes (and
# is read with a warning per line), binary data most of them.
_MAX_UNDECODABLE_SHARE = 0.1


def expand_input_patterns(input_patterns: Union[str, Sequence[str]]) -> List[str]:
    """Files matched by a comma list (or a list) of paths and globs.

    The list keeps its order and each glob's matches come in
    `tf.io.gfile.glob` order, as in the original tool: document order
    decides which random draws each document gets. A glob skips the
    temporary files of writers (`leftover_files.is_temporary`): the
    unfinished shards of a create_pretraining_data run still running or
    killed, or the earlier shards a killed one had renamed aside, which
    would be read as part of the data set.

    Raises:
      ValueError: naming the first pattern that matches no file, or a folder
        (its files are what a run could read: a glob names them).

    Example:
      >>> import tempfile
      >>> folder = tempfile.mkdtemp()
      >>> for name in ("b.txt", "a.txt"):
      ...     _ = open(os.path.join(folder, name), "w").write("text\\n")
      >>> files = expand_input_patterns(f"{folder}/b.txt, {folder}/a*")
      >>> [os.path.basename(f) for f in files]
      ['b.txt', 'a.txt']
      >>> expand_input_patterns(f"{folder}/c*")  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      ValueError: input pattern '.../c*' matches no file
      >>> expand_input_patterns(folder)  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      ValueError: input pattern '...' is a folder; name its files (.../*)
      >>> os.mkdir(os.path.join(folder, "more"))
      >>> expand_input_patterns(f"{folder}/*")  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      ValueError: input pattern '.../*' matches a folder, .../more; name its files (.../more/*)
      >>> os.rmdir(os.path.join(folder, "more"))
      >>> _ = open(os.path.join(folder, "c.txt.tmp-99"), "w").write("unfinished\\n")
      >>> sorted(os.path.basename(f) for f in expand_input_patterns(f"{folder}/*"))
      ['a.txt', 'b.txt']
    """
    if isinstance(input_patterns, str):
        input_patterns = input_patterns.split(",")
    patterns = [p.strip() for p in input_patterns if p.strip()]
    if not patterns:
        raise ValueError("no input file pattern given")
    files = []
    for pattern in patterns:
        matched = tf.io.gfile.glob(pattern)
        unfinished = [path for path in matched
                      if path != pattern and is_temporary(os.path.basename(path))]
        if unfinished:
            logging.warning("input pattern %r: skipped %s, a writer's unfinished or set-aside "
                            "file", pattern, ", ".join(unfinished))
            matched = [path for path in matched if path not in unfinished]
        if not matched:
            raise ValueError(f"input pattern {pattern!r} matches no file")
        # Local files only: a URL's would cost a request each (thousands of shards).
        folders = [path for path in matched if "://" not in path and os.path.isdir(path)]
        if folders:
            what = "is a folder" if folders[0] == pattern else f"matches a folder, {folders[0]}"
            raise ValueError(f"input pattern {pattern!r} {what}; name its files "
                             f"({os.path.join(folders[0], '*')})")
        files.extend(matched)
    _warn_of_repeats(files, patterns)
    return files


def _warn_of_repeats(files, patterns):
    """Warns of each file the patterns name more than once: it is read that many times (as
    the original tool reads it), its documents or records counted twice in the data."""
    seen = set()
    for path in files:
        key = os.path.realpath(path) if "://" not in path else path
        if key in seen:
            logging.warning("input file %s is named more than once by --input_file=%s: it is "
                            "read each time, its text or records repeated in the data",
                            path, ",".join(patterns))
        seen.add(key)


def check_text_file(path: str) -> None:
    """Fails, naming the file, unless its first `SNIFF_BYTES` look like text.

    A NUL byte, or more than a tenth of the bytes undecodable as UTF-8,
    marks binary data: TFRecords (so a glob that also matches the tool's
    own output), compressed files, random bytes.

    Raises:
      ValueError: the file is not text.
      OSError: the file cannot be read.

    Example:
      >>> import tempfile
      >>> path = os.path.join(tempfile.mkdtemp(), "records.tfrecord")
      >>> _ = open(path, "wb").write(b"\\x1e\\x00\\x00\\x00\\x00\\x00\\x00\\x00\\x9a\\x03")
      >>> check_text_file(path)  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      ValueError: .../records.tfrecord: not a text file (a NUL byte at offset 1); is it a TFRecord, compressed or other binary file, or UTF-16 text?
    """
    try:
        with tf.io.gfile.GFile(path, "rb") as reader:
            head = reader.read(SNIFF_BYTES)
    except tf.errors.OpError as error:
        raise OSError(f"cannot read input file {path}: {error.message}") from None
    nul = head.find(b"\x00")
    if nul >= 0:
        raise ValueError(f"{path}: not a text file (a NUL byte at offset {nul}); is it a "
                         "TFRecord, compressed or other binary file, or UTF-16 text?")
    decoder = codecs.getincrementaldecoder("utf-8")("ignore")
    text = decoder.decode(head, final=len(head) < SNIFF_BYTES)
    undecodable = len(head) - len(text.encode("utf-8")) - len(decoder.getstate()[0])
    if undecodable > _MAX_UNDECODABLE_SHARE * len(head):
        raise ValueError(f"{path}: not UTF-8 text ({undecodable} of its first {len(head)} "
                         "bytes are not UTF-8); is it a binary file or in another encoding?")
