"""Fixtures of the tokenization tests: our tokenizers and HuggingFace's slow one.

Everything that builds code point tables or loads the 30522-token vocabulary
is session-scoped: built once, shared by all tests.
"""

import pathlib
import sys

import pytest

# Makes this folder's helper modules importable by its tests (and
# `tokenization_corpora` by bench/tokenizer_parity.py, which does the same).
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

from tokenization_support import ORIGINAL_TEST_VOCAB  # noqa: E402


@pytest.fixture(scope="session")
def tiny_vocab_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("vocab") / "vocab.txt"
    path.write_text("".join(f"{token}\n" for token in ORIGINAL_TEST_VOCAB), encoding="utf-8")
    return str(path)


@pytest.fixture(scope="session")
def reference(uncased_vocab_file):
    from bert_tf.tokenization import FullTokenizer
    return FullTokenizer(uncased_vocab_file, do_lower_case=True)


@pytest.fixture(scope="session")
def cased_reference(uncased_vocab_file):
    from bert_tf.tokenization import FullTokenizer
    return FullTokenizer(uncased_vocab_file, do_lower_case=False)


@pytest.fixture(scope="session")
def layer(uncased_vocab_file):
    from bert_tf.tokenization import BertTokenizerLayer
    return BertTokenizerLayer(uncased_vocab_file, do_lower_case=True)


@pytest.fixture(scope="session")
def cased_layer(uncased_vocab_file):
    from bert_tf.tokenization import BertTokenizerLayer
    return BertTokenizerLayer(uncased_vocab_file, do_lower_case=False)


def _hf_slow(vocab_file, do_lower_case):
    import transformers
    tokenizer = transformers.BertTokenizer(vocab_file=vocab_file, do_lower_case=do_lower_case)
    # HuggingFace's default is 100 characters; the original's is 200.
    tokenizer.wordpiece_tokenizer.max_input_chars_per_word = 200
    return tokenizer


@pytest.fixture(scope="session")
def hf_slow(uncased_vocab_file):
    return _hf_slow(uncased_vocab_file, True)


@pytest.fixture(scope="session")
def hf_slow_cased(uncased_vocab_file):
    return _hf_slow(uncased_vocab_file, False)
