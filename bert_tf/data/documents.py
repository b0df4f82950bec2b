"""The one reader of pretraining text: one sentence per line, blank lines between documents.

Exact mode, fast mode and dynamic masking all read their text through
`read_documents`, so they agree on what a document is:

* lines are split on "\\n", decoded as UTF-8 and stripped of whitespace; a
  line with undecodable bytes is logged with its file and line number and
  kept without those bytes;
* a line that is empty once stripped ends the current document (several in a
  row count as one); a file start does not, so the last document of one file
  goes on in the next unless a blank line separates them. That is the
  original tool's reading of a file list; fast mode and dynamic masking read
  each file on its own and so start every file with a new document.

`tokenize_documents` then turns sentences into token ids for the static
modes, dropping sentences that tokenize to nothing and documents left empty,
and warns, naming file and line, about a sentence too long for one example.
"""

import collections
from typing import Callable, Iterable, Iterator, List, NamedTuple, Tuple

from absl import logging

from bert_tf.data.pretraining_instances import Document
from bert_tf.text_files import byte_lines
from bert_tf.work_progress import WorkProgress

_MAX_WARNINGS_PER_FILE = 5


class TextDocument(NamedTuple):
    """A document's sentences and where in the input they come from.

    `starts` holds (sentence index, path, line number) for the first
    sentence and for the first one of each later file the document runs
    into; the sentences of one file are consecutive lines.
    """

    sentences: List[str]
    starts: Tuple[Tuple[int, str, int], ...]

    def origin(self, index: int) -> str:
        """'path:line' of sentence `index`."""
        first, path, line = next(s for s in reversed(self.starts) if s[0] <= index)
        return f"{path}:{line + index - first}"


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

    for line_number, raw in enumerate(byte_lines(path), start=1):
        yield decode(raw, line_number)
    if undecodable > _MAX_WARNINGS_PER_FILE:
        logging.warning("%s: %d lines had undecodable UTF-8 bytes", path, undecodable)


def read_documents(paths: Iterable[str]) -> Iterator[TextDocument]:
    """The documents of `paths`, read in turn as one stream of lines.

    Example:
      >>> import os, tempfile
      >>> folder = tempfile.mkdtemp()
      >>> with open(os.path.join(folder, "a.txt"), "w") as f:
      ...     _ = f.write("One.\\nTwo.\\n\\n\\nThree.\\n")
      >>> with open(os.path.join(folder, "b.txt"), "w") as f:
      ...     _ = f.write("Four.\\n \\nFive.")
      >>> docs = list(read_documents([f"{folder}/a.txt", f"{folder}/b.txt"]))
      >>> [d.sentences for d in docs]
      [['One.', 'Two.'], ['Three.', 'Four.'], ['Five.']]
      >>> os.path.basename(docs[1].origin(1))
      'b.txt:1'
    """
    sentences, starts = [], []
    for path in paths:
        new_file = True
        for line_number, line in enumerate(read_lines(path), start=1):
            if not line:
                if sentences:
                    yield TextDocument(sentences, tuple(starts))
                    sentences, starts = [], []
                continue
            if new_file or not sentences:
                starts.append((len(sentences), path, line_number))
                new_file = False
            sentences.append(line)
    if sentences:
        yield TextDocument(sentences, tuple(starts))


def tokenize_documents(documents: List[TextDocument],
                       tokenize_lines: Callable[[List[str]], List[List[int]]],
                       max_num_tokens: int, batch_size: int = 4096) -> List[Document]:
    """Token ids of every sentence; empty sentences and documents are dropped.

    A sentence of more than `max_num_tokens` tokens cannot fit one example
    whole: every example that uses it keeps at most `max_num_tokens` of its
    tokens. Such sentences are logged by file and line (the first few per
    file, then a count); a corpus with whole paragraphs or books on one line
    needs its sentences split first.

    Args:
      documents: documents from `read_documents`.
      tokenize_lines: maps a list of strings to their lists of token ids.
      max_num_tokens: tokens of a sentence pair (max_seq_length - 3).
      batch_size: sentences per `tokenize_lines` call.

    Example:
      >>> words = {"a": 1, "b": 2}
      >>> tokenize = lambda lines: [[words[w] for w in line.split() if w in words]
      ...                           for line in lines]
      >>> doc = TextDocument(["a b", "c", "b b a"], ((0, "in.txt", 1),))
      >>> tokenize_documents([doc], tokenize, max_num_tokens=5)
      [[[1, 2], [2, 2, 1]]]
    """
    sentences = [sentence for document in documents for sentence in document.sentences]
    ids = []
    progress = WorkProgress("tokenizing", total=len(sentences), unit="sentences")
    for start in range(0, len(sentences), batch_size):
        batch = sentences[start:start + batch_size]
        ids.extend(tokenize_lines(batch))
        progress.advance(len(batch))
    result, position = [], 0
    too_long = collections.Counter()
    for document in documents:
        tokenized = ids[position:position + len(document.sentences)]
        position += len(document.sentences)
        for index, sentence in enumerate(tokenized):
            if len(sentence) > max_num_tokens:
                _warn_too_long(document.origin(index), len(sentence), max_num_tokens, too_long)
        tokenized = [sentence for sentence in tokenized if sentence]
        if tokenized:
            result.append(tokenized)
    for path, count in too_long.items():
        if count > _MAX_WARNINGS_PER_FILE:
            logging.warning("%s: %d sentences were longer than max_seq_length - 3 = %d tokens",
                            path, count, max_num_tokens)
    return result


def _warn_too_long(origin: str, length: int, max_num_tokens: int,
                   counts: collections.Counter) -> None:
    path = origin.rsplit(":", 1)[0]
    counts[path] += 1
    if counts[path] <= _MAX_WARNINGS_PER_FILE:
        logging.warning("%s: a sentence of %d tokens, more than max_seq_length - 3 = %d: no "
                        "example holds more than %d of its tokens (split long lines into "
                        "sentences to use all the text)", origin, length, max_num_tokens,
                        max_num_tokens)
