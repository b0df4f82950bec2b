"""Reading pretraining text: one sentence per line, a blank line between documents.

The original tool takes a comma list of file globs, reads every file in turn
and starts a new document at each blank line, but not at the start of a file
(the last document of one file goes on in the next one unless a blank line
separates them). Sentences that tokenize to nothing are dropped, then
documents left empty.

Lines are split on "\\n" and decoded as UTF-8; a line with undecodable bytes
is logged with its file and line number and kept without those bytes.
"""

import time
from typing import Callable, Iterable, Iterator, List

import tensorflow as tf
from absl import logging

from bert_tf.data.pretraining_instances import Document

_READ_CHUNK = 1 << 24
_MAX_WARNINGS_PER_FILE = 5
_PROGRESS_SECONDS = 10.0


def expand_input_files(patterns: str) -> List[str]:
    """Files matched by a comma list of paths or globs, in the original's order.

    The list keeps its order and each glob's matches come in
    `tf.io.gfile.glob` order (the directory's, not sorted), as in the
    original: document order decides which draws each document gets.

    Raises:
      FileNotFoundError: naming the pattern that matches no file.
    """
    files = []
    for pattern in filter(None, (p.strip() for p in patterns.split(","))):
        matches = tf.io.gfile.glob(pattern)
        if not matches:
            raise FileNotFoundError(f"input_file pattern {pattern!r} matches no file")
        files.extend(matches)
    if not files:
        raise FileNotFoundError(f"input_file {patterns!r} names no file")
    return files


def read_lines(path: str) -> Iterator[str]:
    """Yields the stripped lines of one file, warning about undecodable bytes."""
    undecodable = 0

    def decode(raw: bytes, line_number: int) -> str:
        nonlocal undecodable
        try:
            return raw.decode("utf-8").strip()
        except UnicodeDecodeError as error:
            undecodable += 1
            if undecodable <= _MAX_WARNINGS_PER_FILE:
                logging.warning("%s:%d: undecodable UTF-8 (%s); dropping those bytes",
                                path, line_number, error.reason)
            return raw.decode("utf-8", "ignore").strip()

    line_number = 0
    rest = b""
    with tf.io.gfile.GFile(path, "rb") as reader:
        while chunk := reader.read(_READ_CHUNK):
            lines = (rest + chunk).split(b"\n")
            rest = lines.pop()
            for raw in lines:
                line_number += 1
                yield decode(raw, line_number)
    if rest:
        yield decode(rest, line_number + 1)
    if undecodable > _MAX_WARNINGS_PER_FILE:
        logging.warning("%s: %d lines had undecodable UTF-8 bytes", path, undecodable)


def iter_text_documents(lines: Iterable[str]) -> Iterator[List[str]]:
    """Groups stripped lines into documents (lists of non-blank lines)."""
    document = []
    for line in lines:
        if line:
            document.append(line)
        elif document:
            yield document
            document = []
    if document:
        yield document


def tokenize_documents(documents: List[List[str]],
                       tokenize_lines: Callable[[List[str]], List[List[int]]],
                       batch_size: int = 4096) -> List[Document]:
    """Token ids of every sentence; empty sentences and documents are dropped.

    Args:
      documents: documents as lists of sentence strings.
      tokenize_lines: maps a list of strings to their lists of token ids.
      batch_size: sentences per `tokenize_lines` call.
    """
    sentences = [sentence for document in documents for sentence in document]
    ids = []
    last_report = time.monotonic()
    for start in range(0, len(sentences), batch_size):
        ids.extend(tokenize_lines(sentences[start:start + batch_size]))
        if time.monotonic() - last_report > _PROGRESS_SECONDS:
            last_report = time.monotonic()
            logging.info("tokenized %d of %d sentences", len(ids), len(sentences))
    result, position = [], 0
    for document in documents:
        tokenized = [s for s in ids[position:position + len(document)] if s]
        position += len(document)
        if tokenized:
            result.append(tokenized)
    return result
