"""What exact and fast mode do before making records, written once.

Both modes check their files first (no output may be an input or the
vocabulary, every input must be text), then load the vocabulary (its casing
checked against `do_lower_case`) and build the compiled line tokenizer.
Nothing is written before these checks pass.
"""

from typing import Dict, NamedTuple, Sequence

from bert_tf.data.input_files import check_text_file
from bert_tf.data.line_tokenizer import LineTokenizer
from bert_tf.data.pretraining_options import PretrainingDataOptions
from bert_tf.output_paths import check_outputs_apart
from bert_tf.tokenization.vocab import PRETRAINING_REQUIRED_TOKENS, check_casing, load_vocab


class RunStart(NamedTuple):
    """The vocabulary (token -> id) and tokenizer of a checked run."""

    vocab: Dict[str, int]
    tokenize_lines: LineTokenizer


def start_run(input_files: Sequence[str], output_files: Sequence[str], vocab_file: str,
              options: PretrainingDataOptions) -> RunStart:
    """Checks a run's files, then loads its vocabulary and tokenizer.

    Args:
      input_files: text files, one sentence per line, a blank line between
        documents (as `input_files.expand_input_patterns` lists them).
      output_files: TFRecord files, written round-robin; none may be an
        input or the vocabulary.
      vocab_file: WordPiece vocabulary, one token per line.
      options: the flags; the tokenizer follows `options.do_lower_case`.

    Returns:
      A RunStart.

    Raises:
      ValueError: an output is an input or the vocabulary, an input is not
        text, the vocabulary lacks a special token (`VocabError`), or
        `do_lower_case=False` meets an uncased vocabulary (`check_casing`).
      OSError: a file cannot be read.

    Example:
      >>> import os, tempfile
      >>> folder = tempfile.mkdtemp()
      >>> vocab_file, text = os.path.join(folder, "vocab.txt"), os.path.join(folder, "in.txt")
      >>> _ = open(vocab_file, "w").write("[PAD]\\n[UNK]\\n[CLS]\\n[SEP]\\n[MASK]\\nhello\\n")
      >>> _ = open(text, "w").write("Hello hello\\n")
      >>> run = start_run([text], [text + ".tfrecord"], vocab_file, PretrainingDataOptions())
      >>> run.tokenize_lines(["Hello hello"])
      [[5, 5]]
      >>> start_run([text], [vocab_file], vocab_file, PretrainingDataOptions())  # doctest: +ELLIPSIS
      Traceback (most recent call last):
      ...
      bert_tf.errors.UsageError: output_file .../vocab.txt is the vocab_file .../vocab.txt: refusing to write over a file the run reads
    """
    check_outputs_apart(output_files, {"input_file": input_files, "vocab_file": [vocab_file]})
    for path in input_files:
        check_text_file(path)
    vocab = load_vocab(vocab_file, require=PRETRAINING_REQUIRED_TOKENS)
    check_casing(vocab, vocab_file, options.do_lower_case)
    return RunStart(vocab, LineTokenizer(vocab_file, options.do_lower_case))
